(ns eyrie.jepsen.checker-selftest-test
  "The linearizability checker's self-test on the repository's own data: hand-written
  cas-register histories in src/test/resources/checker-selftest/cas-register/ (the
  Knossos EDN format: one vector of op maps, a comment saying why each is what it is),
  every one under valid/ must check valid and every one under invalid/ invalid; and
  histories from a seeded simulation of a correct register, each valid, each with a
  stale-read suffix invalid. A checker that answers always valid or always invalid
  fails here. (The larger Knossos corpus runs too when it is present: see
  knossos-data-test.)"
  (:require [clojure.java.io :as io]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.linearizability :as lin]
            [eyrie.jepsen.models :as models]
            [eyrie.jepsen.testdata :as testdata])
  (:import (java.util Random)))

(defn- check [history]
  (lin/check (models/cas-register) history {:time-limit-ms 20000}))

(defn- resource-dir
  "The test-resource directory `path` as a File (tests run from target/test-classes)."
  [path]
  (let [url (io/resource path)]
    (when (and url (= "file" (.getProtocol url)))
      (io/file (.toURI url)))))

(defn- check-resource-dir [kind expect]
  (let [path (str "checker-selftest/cas-register/" kind)
        dir  (resource-dir path)]
    (is (some? dir) (str path " is not on the test classpath as a directory"))
    (when dir
      (let [files (testdata/edn-files dir)]
        (is (<= 5 (count files)) (str "expected at least 5 histories in " dir))
        (doseq [^java.io.File f files]
          (testing (.getName f)
            (let [r (check (h/read-knossos f))]
              (is (expect (:valid? r))
                  (str (.getName f) " => " (pr-str (select-keys r [:valid? :cause :op])))))))))))

(deftest hand-written-valid-histories-are-linearizable
  (check-resource-dir "valid" true?))

(deftest hand-written-invalid-histories-are-not-linearizable
  (check-resource-dir "invalid" false?))

(deftest invalid-verdicts-explain-themselves
  (testing "the stale read is named as the op that could not be linearized"
    (let [f (io/file (resource-dir "checker-selftest/cas-register/invalid") "stale-read.edn")
          r (check (h/read-knossos f))]
      (is (false? (:valid? r)))
      (is (= {:process 1, :type :ok, :f :read, :value 1} (dissoc (:op r) :index))))))

;; ---------------------------------------------------------------------------
;; Seeded simulation of a correct register

(defn- simulate
  "A history of a correct cas register (values 0..2) used by n-procs processes for
  n-ops invocations: each op takes effect at one random moment while it is pending;
  about crash-pct percent of ops end :info instead of completing (some of those took
  effect, some never do), and the crashed process is replaced by a fresh one."
  [^Random rnd n-procs n-ops crash-pct]
  (loop [reg nil, pending {}, idle (vec (range n-procs)), next-proc n-procs,
         invoked 0, out []]
    (let [moves (cond-> []
                  (and (seq idle) (< invoked n-ops)) (conj :invoke)
                  (seq pending)                      (conj :apply :complete))]
      (if (empty? moves)
        out
        (case (nth moves (.nextInt rnd (count moves)))
          :invoke
          (let [i  (.nextInt rnd (count idle))
                p  (idle i)
                op (case (.nextInt rnd 3)
                     0 {:f :read, :value nil}
                     1 {:f :write, :value (.nextInt rnd 3)}
                     2 {:f :cas, :value [(.nextInt rnd 3) (.nextInt rnd 3)]})]
            (recur reg (assoc pending p op) (vec (concat (subvec idle 0 i) (subvec idle (inc i))))
                   next-proc (inc invoked) (conj out (assoc op :process p, :type :invoke))))
          :apply ; one pending op that has not yet taken effect does so now
          (let [ready (sort (keep (fn [[p op]] (when-not (contains? op :result) p)) pending))]
            (if (empty? ready)
              (recur reg pending idle next-proc invoked out)
              (let [p   (nth ready (.nextInt rnd (count ready)))
                    op  (pending p)
                    [reg' result] (case (:f op)
                                    :read  [reg reg]
                                    :write [(:value op) :ok]
                                    :cas   (let [[o n] (:value op)]
                                             (if (= o reg) [n :ok] [reg :fail])))]
                (recur reg' (assoc-in pending [p :result] result) idle next-proc invoked out))))
          :complete
          (let [ps     (sort (keys pending))
                p      (nth ps (.nextInt rnd (count ps)))
                op     (pending p)
                done   {:process p, :f (:f op), :value (:value op)}]
            (cond
              (< (.nextInt rnd 100) crash-pct) ; outcome unknown; fresh process
              (recur reg (dissoc pending p) (conj idle next-proc) (inc next-proc) invoked
                     (conj out (assoc done :type :info)))

              (not (contains? op :result)) ; must take effect before it can complete
              (recur reg pending idle next-proc invoked out)

              :else
              (let [result (:result op)
                    c      (cond (= :fail result)   (assoc done :type :fail)
                                 (= :read (:f op))  (assoc done :type :ok, :value result)
                                 :else              (assoc done :type :ok))]
                (recur reg (dissoc pending p) (conj idle p) next-proc invoked (conj out c))))))))))

(defn- with-stale-read
  "The history followed by a write of 100, a write of 101, then a read of 100 by
  another process: invalid whatever came before, since nothing else writes 100."
  [history]
  (into (vec history)
        [{:process 1000, :type :invoke, :f :write, :value 100}
         {:process 1000, :type :ok, :f :write, :value 100}
         {:process 1000, :type :invoke, :f :write, :value 101}
         {:process 1000, :type :ok, :f :write, :value 101}
         {:process 1001, :type :invoke, :f :read, :value nil}
         {:process 1001, :type :ok, :f :read, :value 100}]))

(deftest simulated-histories-and-their-stale-read-mutants
  (let [seed (long 20261123)
        rnd  (Random. seed)]
    (println "checker self-test: simulation seed" seed)
    (dotimes [i 20]
      (let [history (simulate rnd (+ 2 (.nextInt rnd 4)) (+ 10 (.nextInt rnd 40)) 10)]
        (testing (str "seed " seed " history " i)
          (is (true? (:valid? (check (h/index history)))) (pr-str history))
          (is (false? (:valid? (check (h/index (with-stale-read history))))) (pr-str history)))))))
