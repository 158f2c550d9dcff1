(ns eyrie.jepsen.runner-test
  (:require [clojure.edn]
            [clojure.string]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.client :as client]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.runner :as runner]
            [eyrie.jepsen.workload.register :as reg]))

(defn- memory-client
  "A register client over an in-memory map. With `stale?`, reads answer from a copy that is
  refreshed only every few writes (a stale replica). Ops on key 13 throw (a crash)."
  [state stale-copy stale?]
  (reify client/Client
    (open! [this _ _] this)
    (setup! [_ _])
    (invoke! [_ _ op]
      (let [[k v] (:value op)]
        (when (= k 13) (throw (RuntimeException. "boom")))
        (case (:f op)
          :read (assoc op :type :ok :value [k (get (if stale? @stale-copy @state) k)])
          :write (do (swap! state assoc k v)
                     (when (zero? (rand-int 4)) (reset! stale-copy @state))
                     (assoc op :type :ok))
          :cas (let [[old new] v
                     ok? (locking state
                           (if (= old (get @state k)) (do (swap! state assoc k new) true) false))]
                 (assoc op :type (if ok? :ok :fail))))))
    (teardown! [_ _])
    (close! [_ _])))

(defn- run [stale? & [out]]
  (let [test (cond-> {:concurrency 4 :nodes ["n1"] :start-nanos (System/nanoTime) :key-count 4 :seed 11
                      :ops-per-key 40 :move-share 0}
               out (assoc :history-out out))
        state (atom {}) stale (atom {})
        test (assoc test :client (memory-client state stale stale?)
                    :nemesis-invoke (fn [_ op] (assoc op :value :did-nothing)))]
    [test (runner/run! test (gen/phases (gen/clients (gen/limit 400 (reg/generator test))
                                                     [(gen/sleep 0.01) {:type :info :f :start-kill :value :one}
                                                      {:type :info :f :stop-kill}])
                                        (gen/clients (reg/final-generator test))))]))

(deftest history-is-well-formed
  (let [[test hist] (run false)]
    (testing "every invocation has exactly one completion by the same process"
      (let [pairs (h/pairs (filter h/client-op? hist))]
        (is (every? (fn [[inv comp]] (and comp (= (:process inv) (:process comp)))) pairs))))
    (is (= (range (count hist)) (map :index hist)))
    (is (apply <= (map :time hist)))
    (is (= 2 (count (filter #(= :nemesis (:process %)) (filter #(= :start-kill (:f %)) hist)))))
    (testing "the final phase reads every key once, after everything else completed"
      (let [tail (take-last 8 hist)]
        (is (every? #(= :read (:f %)) tail))
        (is (= #{0 1 2 3} (set (map (comp first :value) (filter #(= :ok (:type %)) tail)))))))
    (is (true? (:valid? (reg/checker test hist {}))))))

(deftest a-stale-register-is-invalid
  ;; The harness can fail: the same generator against a register whose reads lag behind.
  (let [[test hist] (run true)]
    (is (false? (:valid? (reg/checker test hist {}))))))

(deftest a-crash-is-info-and-the-thread-takes-a-new-process
  (let [test {:concurrency 1 :nodes ["n1"] :start-nanos (System/nanoTime)}
        test (assoc test :client (memory-client (atom {}) (atom {}) false))
        hist (runner/run! test (gen/clients [{:f :write :value [13 1]} {:f :write :value [1 1]}]))
        crash (first (filter #(= :info (:type %)) hist))]
    (is (= 0 (:process crash)))
    (is (re-find #"boom" (:error crash)))
    (is (= 1 (:process (last (filter #(= :invoke (:type %)) hist)))))
    (is (= :ok (:type (last hist))))))

(deftest the-history-is-streamed-as-it-is-recorded
  ;; Every op reaches :history-out as it is recorded, in order: a killed run leaves its history.
  (let [out (java.io.StringWriter.)
        [_ hist] (run false out)
        streamed (mapv clojure.edn/read-string (clojure.string/split-lines (str out)))]
    (is (= (count hist) (count streamed)))
    (is (= (map :index hist) (map :index streamed)))
    (is (= (map (juxt :process :type :f :time) hist) (map (juxt :process :type :f :time) streamed)))))
