(ns eyrie.jepsen.linearizability-test
  (:require [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.linearizability :as lin]
            [eyrie.jepsen.models :as models])
  (:import (java.util Random)))

(defn hist
  "Builds an indexed history from [process type f value] tuples."
  [& ops]
  (h/index (for [[p type f v] ops] {:process p, :type type, :f f, :value v})))

(defn check [history]
  (lin/check (models/cas-register) history {:time-limit-ms 10000}))

(defn valid? [history] (:valid? (check history)))

(deftest trivially-linearizable
  (is (true? (valid? [])))
  (is (true? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1]
                           [0 :invoke :read nil] [0 :ok :read 1]
                           [1 :invoke :cas [1 2]] [1 :ok :cas [1 2]]
                           [0 :invoke :read nil] [0 :ok :read 2])))))

(deftest initial-register-is-nil
  (is (true? (valid? (hist [0 :invoke :read nil] [0 :ok :read nil]))))
  (is (false? (valid? (hist [0 :invoke :read nil] [0 :ok :read 0])))))

(deftest stale-read
  (let [r (check (hist [0 :invoke :write 1] [0 :ok :write 1]
                       [0 :invoke :write 2] [0 :ok :write 2]
                       [1 :invoke :read nil] [1 :ok :read 1]))]
    (is (false? (:valid? r)))
    (testing "the explanation names the read and the state it could not see"
      (is (= {:process 1, :type :ok, :f :read, :value 1, :index 5} (:op r)))
      (is (= 4 (:index (:invoke r))))
      (is (= 3 (:index (:previous-ok r))))
      (is (= [(models/cas-register 2)] (map :model (:configs r))))
      (is (= ["can't read 1 from register 2"] (map :error (:configs r)))))))

(deftest real-time-order-is-respected
  (testing "a write that completed before another began cannot be reordered"
    (is (false? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1]
                              [1 :invoke :write 2] [1 :ok :write 2]
                              [2 :invoke :read nil] [2 :ok :read 1])))))
  (testing "concurrent writes may take effect in either order"
    (is (true? (valid? (hist [0 :invoke :write 1] [1 :invoke :write 2]
                             [0 :ok :write 1] [1 :ok :write 2]
                             [2 :invoke :read nil] [2 :ok :read 1]))))))

(deftest info-write-may-or-may-not-happen
  (let [prefix [[0 :invoke :write 1] [0 :ok :write 1]
                [1 :invoke :write 2] [1 :info :write 2]]]
    (testing "it did not happen"
      (is (true? (valid? (apply hist (conj prefix [2 :invoke :read nil] [2 :ok :read 1]))))))
    (testing "it happened"
      (is (true? (valid? (apply hist (conj prefix [2 :invoke :read nil] [2 :ok :read 2]))))))
    (testing "it happened late, after a read that missed it"
      (is (true? (valid? (apply hist (conj prefix [2 :invoke :read nil] [2 :ok :read 1]
                                           [2 :invoke :read nil] [2 :ok :read 2]))))))
    (testing "once seen, it cannot be undone"
      (is (false? (valid? (apply hist (conj prefix [2 :invoke :read nil] [2 :ok :read 2]
                                            [2 :invoke :read nil] [2 :ok :read 1]))))))
    (testing "it cannot take effect before its invocation"
      (is (false? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1]
                                [2 :invoke :read nil] [2 :ok :read 2]
                                [1 :invoke :write 2] [1 :info :write 2])))))
    (testing "an invocation that never completes is indeterminate too"
      (is (true? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1]
                               [1 :invoke :write 2]
                               [2 :invoke :read nil] [2 :ok :read 2]))))
      (is (true? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1]
                               [1 :invoke :write 2]
                               [2 :invoke :read nil] [2 :ok :read 1])))))))

(deftest concurrent-write-and-read
  (let [h (fn [read-value]
            (hist [0 :invoke :write 1] [0 :ok :write 1]
                  [1 :invoke :read nil] [0 :invoke :write 2]
                  [1 :ok :read read-value] [0 :ok :write 2]))]
    (is (true? (valid? (h 1))) "read before the write")
    (is (true? (valid? (h 2))) "read after the write")
    (is (false? (valid? (h 3))) "nobody wrote 3")))

(deftest failed-cas
  (testing "a failed cas did not happen"
    (is (true? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1]
                             [1 :invoke :cas [2 3]] [1 :fail :cas [2 3]]
                             [2 :invoke :read nil] [2 :ok :read 1]))))
    (is (false? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1]
                              [1 :invoke :cas [1 3]] [1 :fail :cas [1 3]]
                              [2 :invoke :read nil] [2 :ok :read 3])))))
  (testing "a cas whose expected value is not there cannot succeed"
    (is (false? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1]
                              [1 :invoke :cas [2 3]] [1 :ok :cas [2 3]]))))))

(deftest nemesis-ops-are-ignored
  (is (true? (valid? (h/index [{:process :nemesis, :type :info, :f :start, :value nil}
                               {:process 0, :type :invoke, :f :write, :value 1}
                               {:process :nemesis, :type :info, :f :start, :value [:n1]}
                               {:process 0, :type :ok, :f :write, :value 1}
                               {:process 0, :type :invoke, :f :read, :value nil}
                               {:process 0, :type :ok, :f :read, :value 1}])))))

(deftest independent-keys
  (let [history (hist [0 :invoke :write [:a 1]] [0 :ok :write [:a 1]]
                      [1 :invoke :write [:b 1]] [1 :ok :write [:b 1]]
                      [0 :invoke :cas [:a [1 2]]] [0 :ok :cas [:a [1 2]]]
                      [1 :invoke :write [:b 2]] [1 :ok :write [:b 2]]
                      [0 :invoke :read [:a nil]] [0 :ok :read [:a 2]]
                      [1 :invoke :read [:b nil]] [1 :ok :read [:b 1]])
        r       (lin/check-independent (models/cas-register) history {:time-limit-ms 10000})]
    (is (false? (:valid? r)))
    (is (= [:a :b] (keys (:results r))))
    (is (true? (:valid? (get-in r [:results :a]))))
    (is (false? (:valid? (get-in r [:results :b]))))
    (is (= [:b] (:failures r)))
    (testing "the failing key's explanation keeps the original history indices"
      (is (= 11 (:index (get-in r [:results :b :op])))))
    (testing "verdicts combine: invalid wins, then unknown"
      (is (= false (lin/merge-valid [true :unknown false])))
      (is (= :unknown (lin/merge-valid [true :unknown])))
      (is (= true (lin/merge-valid [true true])))
      (is (= true (lin/merge-valid []))))))

(deftest budget-exhausted-is-unknown
  (let [r (lin/check (models/cas-register)
                     (hist [0 :invoke :write 1] [1 :invoke :write 2] [0 :ok :write 1]
                           [1 :ok :write 2])
                     {:time-limit-ms 0})]
    (is (= :unknown (:valid? r)))
    (is (= :timeout (:cause r)))))

;; ---------------------------------------------------------------------------
;; Cross-check against a brute-force search on small random histories

(defn- brute-force-valid?
  "Linearizability by trying every order: an independent, obviously-correct and
  exponential reference. Ok ops must all be placed, :info/unfinished ops may be; an op
  may be placed once every ok op that completed before its invocation is placed."
  [model history]
  (let [ops   (vec (for [[inv comp] (h/pairs history)
                         :when (not (and comp (h/fail? comp)))]
                     {:op     (if (and comp (h/ok? comp)) (assoc inv :value (:value comp)) inv)
                      :start  (:index inv)
                      :end    (when (and comp (h/ok? comp)) (:index comp))}))
        n     (count ops)
        must  (set (keep-indexed (fn [i o] (when (:end o) i)) ops))
        ready (fn [placed i]
                (every? (fn [j] (or (placed j) (not (< (:end (ops j)) (:start (ops i))))))
                        must))]
    (letfn [(go [placed state]
              (or (every? placed must)
                  (some (fn [i]
                          (and (not (placed i))
                               (ready placed i)
                               (let [s (models/step state (:op (ops i)))]
                                 (and (not (models/inconsistent? s))
                                      (go (conj placed i) s)))))
                        (range n))))]
      (boolean (go #{} model)))))

(defn- random-history
  "A random cas-register history from a simulated register: each op takes effect at a
  random moment while pending (or never, for some :info ops). crash-pct percent of
  completions are :info (the process is then replaced by a fresh one); corrupt-pct
  percent of ok reads return a random value instead, so invalid histories appear too."
  [^Random rnd n-procs n-ops crash-pct corrupt-pct]
  (loop [reg nil, pending {}, next-proc n-procs, idle (set (range n-procs)),
         invoked 0, out []]
    (let [choices (concat (when (and (seq idle) (< invoked n-ops)) [:invoke])
                          (when (seq pending) [:apply :complete]))]
      (if (empty? choices)
        out
        (case (nth choices (.nextInt rnd (count choices)))
          :invoke
          (let [p  (nth (sort idle) (.nextInt rnd (count idle)))
                op (case (.nextInt rnd 3)
                     0 {:f :read, :value nil}
                     1 {:f :write, :value (.nextInt rnd 3)}
                     2 {:f :cas, :value [(.nextInt rnd 3) (.nextInt rnd 3)]})]
            (recur reg (assoc pending p (assoc op :applied nil)) next-proc (disj idle p)
                   (inc invoked) (conj out (assoc op :process p, :type :invoke))))
          :apply
          (let [[p op] (nth (sort-by key pending) (.nextInt rnd (count pending)))]
            (if (some? (:applied op))
              (recur reg pending next-proc idle invoked out)
              (let [[reg' res] (case (:f op)
                                 :read  [reg reg]
                                 :write [(:value op) :done]
                                 :cas   (let [[o n] (:value op)]
                                          (if (= o reg) [n :done] [reg :failed])))]
                (recur reg' (assoc-in pending [p :applied] [res]) next-proc idle invoked
                       out))))
          :complete
          (let [[p op] (nth (sort-by key pending) (.nextInt rnd (count pending)))
                applied (:applied op)
                crash?  (< (.nextInt rnd 100) crash-pct)
                base    {:process p, :f (:f op), :value (:value op)}
                done    (cond
                          crash?                              (assoc base :type :info)
                          (nil? applied)                      nil ; must apply first
                          (= :failed (first applied))         (assoc base :type :fail)
                          (= :read (:f op))
                          (assoc base :type :ok
                                 :value (if (< (.nextInt rnd 100) corrupt-pct)
                                          (.nextInt rnd 3)       ; corrupted read
                                          (first applied)))
                          :else                               (assoc base :type :ok))]
            (cond
              (nil? done) (recur reg pending next-proc idle invoked out)
              crash?      (recur reg (dissoc pending p) (inc next-proc)
                                 (conj idle next-proc) invoked (conj out done))
              :else       (recur reg (dissoc pending p) next-proc (conj idle p) invoked
                                 (conj out done)))))))))

(deftest agrees-with-brute-force
  (let [rnd    (Random. 42)
        model  (models/cas-register)
        seen   (atom {true 0, false 0})]
    (dotimes [i 1000]
      (let [history (h/index (random-history rnd (+ 2 (.nextInt rnd 3)) (+ 1 (.nextInt rnd 7)) 20 20))
            expect  (brute-force-valid? model history)
            actual  (:valid? (lin/check model history {:time-limit-ms 10000}))]
        (swap! seen update expect inc)
        (when-not (= expect actual)
          (is (= expect actual) (str "history " i ": " (pr-str history))))))
    (testing "both verdicts were exercised"
      (is (< 100 (get @seen true)) (pr-str @seen))
      (is (< 100 (get @seen false)) (pr-str @seen)))))

(deftest large-generated-histories-are-valid
  (let [rnd (Random. 7)]
    (doseq [procs [3 5 8]]
      (let [history (h/index (random-history rnd procs 400 5 0))
            result  (lin/check (models/cas-register) history {:time-limit-ms 10000})]
        (is (true? (:valid? result)) (str procs " processes: " (pr-str (dissoc result :configs))))))))

(deftest memo-table-limit-is-unknown
  (let [history (h/index (random-history (Random. 3) 5 400 5 0))
        r       (lin/check (models/cas-register) history {:max-configs 10})]
    (is (= :unknown (:valid? r)))
    (is (= :config-limit (:cause r)))))
