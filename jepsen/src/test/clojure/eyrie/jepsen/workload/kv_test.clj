(ns eyrie.jepsen.workload.kv-test
  "The kv workload's model and checker on hand-written histories: the anomalies F1 produces
  (a read of a deleted value, a key created twice) must be found, and what the service may
  legitimately do (deletes of absent keys answer ok, :info ops take effect late or never)
  must pass."
  (:require [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.linearizability :as lin]
            [eyrie.jepsen.models :as m]
            [eyrie.jepsen.workload.kv :as kv]))

(defn- hist
  "An indexed single-key history from [process type f value] tuples."
  [& ops]
  (h/index (for [[p type f v] ops] {:process p, :type type, :f f, :value v})))

(defn- check [history] (lin/check (m/kv-register) history {:time-limit-ms 10000}))

(defn- valid? [history] (:valid? (check history)))

(deftest model-steps
  (let [absent (m/kv-register)
        holds (fn [v] (m/kv-register {:value v}))]
    (is (= (holds 3) (m/step absent {:f :create :value 3})))
    (is (m/inconsistent? (m/step (holds 3) {:f :create :value 4})) "create needs absent")
    (is (= absent (m/step (holds 3) {:f :delete :value nil})))
    (is (= absent (m/step absent {:f :delete :value nil})) "an ok delete of an absent key")
    (is (m/inconsistent? (m/step (m/kv-register {:strict-delete? true}) {:f :delete :value nil})))
    (is (= absent (m/step absent {:f :read :value nil})) "a read of an absent key is nil")
    (is (m/inconsistent? (m/step absent {:f :read :value 3})))
    (is (m/inconsistent? (m/step (holds 3) {:f :read :value nil})))
    (is (m/inconsistent? (m/step absent {:f :write :value 1})) "write needs the key")
    (is (= (holds 1) (m/step (holds 3) {:f :write :value 1})))
    (is (m/inconsistent? (m/step absent {:f :cas :value [nil 1]})) "cas needs the key")
    (is (= (holds 1) (m/step (holds 3) {:f :cas :value [3 1]})))
    (is (m/inconsistent? (m/step (holds 3) {:f :cas :value [2 1]})))
    (is (m/inconsistent? (m/step absent {:f :create :value nil})))
    (testing "pure ops"
      (is (m/pure-op? absent {:f :read}))
      (is (m/pure-op? absent {:f :cas :value [1 1]}))
      (is (not-any? #(m/pure-op? absent {:f % :value 1}) [:create :delete :write])))))

(deftest valid-histories
  (testing "create, read, write, cas, delete, read nil, create again"
    (is (true? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                             [1 :invoke :read nil] [1 :ok :read 1]
                             [0 :invoke :write 2] [0 :ok :write 2]
                             [1 :invoke :cas [2 3]] [1 :ok :cas [2 3]]
                             [0 :invoke :delete nil] [0 :ok :delete nil]
                             [1 :invoke :read nil] [1 :ok :read nil]
                             [1 :invoke :create 4] [1 :ok :create 4]
                             [0 :invoke :read nil] [0 :ok :read 4])))))
  (testing "a key starts absent"
    (is (true? (valid? (hist [0 :invoke :read nil] [0 :ok :read nil])))))
  (testing "failed ops did not happen: a refused create, a cas or write on an absent key"
    (is (true? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                             [1 :invoke :create 2] [1 :fail :create 2]
                             [0 :invoke :delete nil] [0 :ok :delete nil]
                             [1 :invoke :write 5] [1 :fail :write 5]
                             [1 :invoke :cas [1 5]] [1 :fail :cas [1 5]]
                             [0 :invoke :read nil] [0 :ok :read nil])))))
  (testing "a delete that answers ok on an absent key"
    (is (true? (valid? (hist [0 :invoke :delete nil] [0 :ok :delete nil]
                             [0 :invoke :delete nil] [0 :ok :delete nil]
                             [1 :invoke :read nil] [1 :ok :read nil])))))
  (testing "a read concurrent with a delete may see the old value or nil"
    (is (true? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                             [0 :invoke :delete nil]
                             [1 :invoke :read nil] [1 :ok :read 1]
                             [2 :invoke :read nil] [2 :ok :read nil]
                             [0 :ok :delete nil])))))
  (testing "an :info delete may take effect late, after a read of the old value"
    (is (true? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                             [0 :invoke :delete nil] [0 :info :delete nil]
                             [1 :invoke :read nil] [1 :ok :read 1]
                             [1 :invoke :read nil] [1 :ok :read nil]
                             [1 :invoke :create 2] [1 :ok :create 2])))))
  (testing "an :info create may never happen"
    (is (true? (valid? (hist [0 :invoke :create 1] [0 :info :create 1]
                             [1 :invoke :read nil] [1 :ok :read nil]
                             [1 :invoke :create 2] [1 :ok :create 2]
                             [1 :invoke :read nil] [1 :ok :read 2]))))))

(deftest invalid-histories
  (testing "a read of the old value after a completed delete"
    (let [r (check (hist [0 :invoke :create 1] [0 :ok :create 1]
                         [0 :invoke :delete nil] [0 :ok :delete nil]
                         [1 :invoke :read nil] [1 :ok :read 1]))]
      (is (false? (:valid? r)))
      (is (= ["can't read 1 from an absent key"] (map :error (:configs r))))))
  (testing "the issue's F1 history: a read found the key absent, a later read the old value"
    (is (false? (valid? (hist [0 :invoke :create 1834] [0 :ok :create 1834]
                              [3 :invoke :delete nil]
                              [7 :invoke :read nil] [7 :ok :read nil]
                              [5 :invoke :read nil] [5 :ok :read 1834]
                              [3 :ok :delete nil])))))
  (testing "two successful creates without a delete between"
    (is (false? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                              [1 :invoke :create 2] [1 :ok :create 2]))))
    (testing "even concurrent ones"
      (is (false? (valid? (hist [0 :invoke :create 1] [1 :invoke :create 2]
                                [0 :ok :create 1] [1 :ok :create 2]))))))
  (testing "a write to a key that was never created"
    (is (false? (valid? (hist [0 :invoke :write 1] [0 :ok :write 1])))))
  (testing "a read of nil while the key exists"
    (is (false? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                              [1 :invoke :read nil] [1 :ok :read nil])))))
  (testing "a successful cas after a completed delete"
    (is (false? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                              [0 :invoke :delete nil] [0 :ok :delete nil]
                              [1 :invoke :cas [1 2]] [1 :ok :cas [1 2]]))))))

(deftest the-workloads-checker-splits-by-key
  (let [ops (h/index (for [[p type f v] [[0 :invoke :create [1 5]] [0 :ok :create [1 5]]
                                         [1 :invoke :create [2 6]] [1 :ok :create [2 6]]
                                         [0 :invoke :delete [1 nil]] [0 :ok :delete [1 nil]]
                                         [1 :invoke :read [2 nil]] [1 :ok :read [2 6]]
                                         [0 :invoke :read [1 nil]] [0 :ok :read [1 5]]]]
                       {:process p, :type type, :f f, :value v}))
        r (kv/checker {} ops {})]
    (is (false? (:valid? r)))
    (is (= [1] (:failures r)))
    (is (= 2 (:keys-checked r)))
    (is (true? (:valid? (kv/checker {} (vec (take 8 ops)) {}))))))

(deftest the-generator-makes-every-kind-of-op
  (let [g ((var-get #'kv/op-gen) {:key-count 5} (java.util.Random. 1))
        ops (repeatedly 2000 g)
        fs (frequencies (map :f ops))]
    (is (= #{:create :delete :read :write :cas} (set (keys fs))))
    (is (< 400 (+ (:create fs) (:delete fs))) "delete-heavy")
    (is (every? #(<= kv/anchor-base %) (keep :partner ops)) "partners are anchors")
    (is (some :partner ops))
    (is (not-any? :partner (filter #(#{:create :delete} (:f %)) ops)))))

(deftest kv-on-an-embedded-cluster-end-to-end
  ;; The client's mapping of the library's answers, against real DS-SMR creates and deletes
  ;; (no faults): valid, and every kind of outcome shows up.
  (let [store (.getCanonicalPath (clojure.java.io/file "target" "jepsen-store-test"))
        r ((requiring-resolve 'eyrie.jepsen.core/run-test!)
           ((requiring-resolve 'eyrie.jepsen.core/test-map)
            ((requiring-resolve 'eyrie.jepsen.core/parse-opts)
             ["--workload" "kv" "--db" "embedded" "--time-limit" "8" "--recovery" "1"
              "--key-count" "4" "--concurrency" "6" "--threads-per-key" "3" "--seed" "7"
              "--store" store])))
        hist (h/read-history (clojure.java.io/file (get-in r [:test :store]) "history.edn"))
        done (frequencies (map (juxt :f :type) (remove h/invoke? (filter h/client-op? hist))))]
    (is (= 0 (:exit r)) (pr-str (:results r)))
    (is (pos? (done [:create :ok] 0)))
    (is (pos? (done [:create :fail] 0)) "creates of existing keys are refused")
    (is (pos? (done [:delete :ok] 0)))
    (is (some #(and (h/ok? %) (= :read (:f %)) (nil? (second (:value %)))) hist) "reads of absent keys")
    (is (some #(and (h/ok? %) (= :read (:f %)) (some? (second (:value %)))) hist) "reads of values")
    (is (some #(and (h/ok? %) (:partner %)) hist) "ops with a partner (moves)")))

(deftest the-new-nemeses-are-options
  (let [t ((requiring-resolve 'eyrie.jepsen.core/test-map)
           ((requiring-resolve 'eyrie.jepsen.core/parse-opts)
            ["--workload" "kv" "--nemesis" "asym,kill-partition-leader" "--threads-per-key" "4"]))]
    (is (= #{:asym :kill-partition-leader} (:nemesis-faults t)))
    (is (= "kv" (:service t)))
    (is (= 4 (:threads-per-key t)))
    (is (not (contains? t :ops-per-key)) "absent: the workload's default")))
