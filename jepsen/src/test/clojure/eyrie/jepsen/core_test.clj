(ns eyrie.jepsen.core-test
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.core :as core]
            [eyrie.jepsen.history :as h]))

(deftest options-and-usage-errors
  (let [t (core/test-map (core/parse-opts ["--workload" "register" "--nemesis" "kill,partition" "--time-limit" "30"]))]
    (is (= "register-kill+partition" (:name t)))
    (is (= #{:kill :partition} (:nemesis-faults t)))
    (is (= 30 (:time-limit t)))
    (is (= ["n1" "n2" "n3" "n4" "n5"] (:nodes t))))
  (is (= #{} (:nemesis-faults (core/test-map (core/parse-opts ["--workload" "bank"])))))
  (is (= :dssmr (:client-mode (core/test-map (core/parse-opts ["--workload" "bank"])))))
  (let [t (core/test-map (core/parse-opts ["--workload" "bank" "--mode" "ssmr" "--nemesis" "kill"]))]
    (is (= :ssmr (:client-mode t)))
    (is (= "bank-ssmr-kill" (:name t))))
  (doseq [bad [["--workload" "nope"] ["--nemesis" "explode"] ["--time-limit" "soon"] ["workload"]
               ["--mode" "fast"]]]
    (is (:usage (ex-data (try (core/test-map (core/parse-opts bad)) nil
                              (catch clojure.lang.ExceptionInfo e e))))
        (pr-str bad))))

(defn- latency-summary
  "Per :f, the count of each outcome and the p50 and max latency in ms."
  [hist]
  (->> (h/pairs hist)
       (filter second)
       (group-by (comp :f first))
       (map (fn [[f ps]]
              (let [ms (sort (map (fn [[i c]] (/ (- (:time c) (:time i)) 1e6)) ps))]
                (format "%s: %s p50 %.0f ms max %.0f ms" (name f) (frequencies (map (comp :type second) ps))
                        (double (nth ms (quot (count ms) 2))) (double (last ms))))))
       (str/join "; ")))

(deftest register-on-an-embedded-cluster-end-to-end
  ;; The whole pipeline without faults: nodes, setup, generator, history, checker, store.
  (let [store (.getCanonicalPath (io/file "target" "jepsen-store-test"))
        r (core/run-test! (core/test-map (core/parse-opts ["--workload" "register" "--db" "embedded"
                                                           "--time-limit" "6" "--recovery" "1"
                                                           "--key-count" "6" "--concurrency" "4"
                                                           "--seed" "5" "--store" store])))
        dir (io/file (get-in r [:test :store]))
        hist (h/read-history (io/file dir "history.edn"))
        results (edn/read-string (slurp (io/file dir "results.edn")))]
    (is (= 0 (:exit r)))
    (is (true? (:valid? results)))
    ;; A bound on service, not on speed: 6 s of 4 threads give 1,000-2,500 ok ops on an idle
    ;; 2-core machine, and once (a CI run) 54, every op about 350 ms with two 5 s timeouts; the
    ;; message carries the latencies so that such a run says where its time went.
    (is (<= 30 (count (filter #(= :ok (:type %)) hist))) (str "the cluster served ops; " (latency-summary hist)))
    (is (every? (fn [[i c]] (and (= :read (:f i)) (= :ok (:type c)))) (take-last 6 (h/pairs hist)))
        "every key's final read answered")
    (is (some :partner hist) "some ops forced moves")
    (is (= (count hist) (:op-count results)))
    (is (.exists (io/file dir "jepsen.log")))
    (testing "latest links"
      (is (= (.getCanonicalPath dir) (.getCanonicalPath (io/file store "latest"))))
      (is (= (.getCanonicalPath dir) (.getCanonicalPath (io/file store "register-none" "latest")))))))

(deftest latest-links-with-a-relative-store
  ;; The default store ("store") is relative; the run's directory is absolute.
  (let [root (io/file "target" "jepsen-relative-store")
        t (core/prepare-store! {:store-root (.getPath root) :name "register-none"})]
    (core/link-latest! t)
    (is (= (.getCanonicalPath (io/file (:store t))) (.getCanonicalPath (io/file root "latest"))))
    (is (= (.getCanonicalPath (io/file (:store t))) (.getCanonicalPath (io/file root "register-none" "latest"))))))

(deftest kv-on-an-embedded-cluster-with-a-partition-added-and-one-drained
  ;; The elastic fault on the in-process cluster: a partition group is added to the running
  ;; cluster and made active in the oracle's table, then a random active partition is drained,
  ;; while the kv workload creates, deletes, reads and writes keys; the history stays
  ;; linearizable.
  (let [store (.getCanonicalPath (io/file "target" "jepsen-store-elastic"))
        r (core/run-test! (core/test-map (core/parse-opts ["--workload" "kv" "--db" "embedded" "--nemesis" "elastic"
                                                           "--time-limit" "24" "--interval" "5" "--recovery" "1"
                                                           "--key-count" "8" "--concurrency" "8"
                                                           "--seed" "7" "--store" store])))
        dir (io/file (get-in r [:test :store]))
        hist (h/read-history (io/file dir "history.edn"))
        results (edn/read-string (slurp (io/file dir "results.edn")))
        nemesis (filter #(= :nemesis (:process %)) hist)
        done (keep (fn [o] (when (map? (:value o)) (:value o))) nemesis)]
    (is (= 0 (:exit r)))
    (is (true? (:valid? results)) (pr-str (:results results)))
    (is (some :added done) (str "a partition was added: " (pr-str done)))
    (is (some :drained done) (str "a partition was drained: " (pr-str done)))
    (is (not-any? :error done) (pr-str done))
    (is (< 50 (count (filter #(and (= :ok (:type %)) (#{:create :delete} (:f %))) hist))) "keys were created and deleted")))
