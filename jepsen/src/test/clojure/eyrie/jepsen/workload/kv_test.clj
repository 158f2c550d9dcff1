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

(defn- run-embedded-kv!
  "Runs the kv workload for 8 s (seed 7, no nemesis) on an embedded cluster, with `extra` options;
  returns the run's result and the history it stored."
  [& extra]
  (let [store (.getCanonicalPath (clojure.java.io/file "target" "jepsen-store-test"))
        r ((requiring-resolve 'eyrie.jepsen.core/run-test!)
           ((requiring-resolve 'eyrie.jepsen.core/test-map)
            ((requiring-resolve 'eyrie.jepsen.core/parse-opts)
             (into ["--workload" "kv" "--db" "embedded" "--time-limit" "8" "--recovery" "1"
                    "--key-count" "4" "--concurrency" "6" "--threads-per-key" "3" "--seed" "7"
                    "--store" store]
                   extra))))]
    {:result r
     :history (h/read-history (clojure.java.io/file (get-in r [:test :store]) "history.edn"))}))

(deftest kv-on-an-embedded-cluster-end-to-end
  ;; The client's mapping of the library's answers, against real DS-SMR creates and deletes
  ;; (no faults): valid, and every kind of outcome shows up.
  (let [{r :result hist :history} (run-embedded-kv!)
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
    (is (not (contains? t :ops-per-key)) "absent: the workload's default")
    (is (not-any? #(contains? t %) [:failing-creates? :throwing-writes?]) "absent: no deliberate failures")))

(deftest the-failure-flags-are-kv-options
  (let [parse (requiring-resolve 'eyrie.jepsen.core/parse-opts)
        tm (requiring-resolve 'eyrie.jepsen.core/test-map)
        t (tm (parse ["--workload" "kv" "--nemesis" "kill,partition" "--failing-creates" "--throwing-writes"]))]
    (is (true? (:failing-creates? t)))
    (is (true? (:throwing-writes? t)))
    (is (= "kv-failing-creates-throwing-writes-kill+partition" (:name t)))
    (is (= "kv-throwing-writes-none" (:name (tm (parse ["--workload" "kv" "--throwing-writes"])))))
    (doseq [args [["--workload" "register" "--failing-creates"]
                  ["--workload" "bank" "--throwing-writes"]
                  ["--workload" "kv" "--failing-creates" "yes"]]]
      (is (:usage (ex-data (try (tm (parse args)) (catch clojure.lang.ExceptionInfo e e)))) (pr-str args)))
    (testing "the matrix runs kv with both, 120 s"
      (is (some #(and (= "kv" (:workload %)) (:failing-creates %) (:throwing-writes %) (= 120 (:time-limit %))
                      (true? (:expect %)))
                @(requiring-resolve 'eyrie.jepsen.core/matrix))))))

;; ---------------------------------------------------------------------------
;; --failing-creates and --throwing-writes

(deftest failed-application-ops-did-not-happen
  ;; A refused create (its createObject threw) and a write undone after a throw are :fail: the
  ;; checker takes them as never having happened, and must flag any trace of them.
  (testing "the model's :exists observation"
    (is (= (m/kv-register {:value 3}) (m/step (m/kv-register {:value 3}) {:f :exists :value nil})))
    (is (m/inconsistent? (m/step (m/kv-register) {:f :exists :value nil})))
    (is (m/pure-op? (m/kv-register) {:f :exists})))
  (testing "valid: a refused create leaves the key absent, a throwing write the old value"
    (is (true? (valid? (hist [0 :invoke :create 103] [0 :fail :create 103]
                             [1 :invoke :read nil] [1 :ok :read nil]
                             [1 :invoke :create 4] [1 :ok :create 4]
                             [0 :invoke :write 207] [0 :fail :write 207]
                             [1 :invoke :read nil] [1 :ok :read 4]
                             [1 :invoke :cas [4 5]] [1 :ok :cas [4 5]]
                             [0 :invoke :read nil] [0 :ok :read 5]))))
    (testing "even when the faulty op's answer was a timeout recorded as :fail"
      (is (true? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                               [0 :invoke :write 201] [0 :fail :write 201]
                               [1 :invoke :read nil] [1 :ok :read 1]))))))
  (testing "invalid: a :fail write's value is read later"
    (let [r (check (hist [0 :invoke :create 1] [0 :ok :create 1]
                         [0 :invoke :write 205] [0 :fail :write 205]
                         [1 :invoke :read nil] [1 :ok :read 205]))]
      (is (false? (:valid? r)))
      (is (= ["can't read 205 from a key holding 1"] (map :error (:configs r))))))
  (testing "invalid: a :fail write's value read while the write was in flight"
    (is (false? (valid? (hist [0 :invoke :create 1] [0 :ok :create 1]
                              [0 :invoke :write 205]
                              [1 :invoke :read nil] [1 :ok :read 205]
                              [0 :fail :write 205])))))
  (testing "invalid: a refused create's value is read later (the key exists)"
    (is (false? (valid? (hist [0 :invoke :create 103] [0 :fail :create 103]
                              [1 :invoke :read nil] [1 :ok :read 103])))))
  (testing "invalid: a refused create, then an ok create and a read of the refused value"
    (is (false? (valid? (hist [0 :invoke :create 103] [0 :fail :create 103]
                              [1 :invoke :create 4] [1 :ok :create 4]
                              [1 :invoke :read nil] [1 :ok :read 103]))))))

(defn- kv-ops
  "An indexed independent kv history from [process type f value & kvs] tuples."
  [& ops]
  (h/index (for [[p type f v & kvs] ops] (into {:process p, :type type, :f f, :value v} (apply hash-map kvs)))))

(deftest a-create-that-found-the-key-is-an-observation-with-failing-creates
  ;; A refused create that left the key in the oracle's map but on no partition: reads answer
  ;; NOT_FOUND (nil), creates EXISTS (:fail). Without the option such a :fail constrains nothing.
  (let [ops (kv-ops [0 :invoke :create [1 103] :faulty true] [0 :fail :create [1 103] :faulty true :error [:refused "x"]]
                    [1 :invoke :read [1 nil]] [1 :ok :read [1 nil]]
                    [1 :invoke :create [1 4]] [1 :fail :create [1 4] :error :exists])]
    (is (true? (:valid? (kv/checker {} ops {}))) "without the option: as before")
    (let [r (kv/checker {:failing-creates? true} ops {})]
      (is (false? (:valid? r)))
      (is (= [1] (:failures r))))
    (is (= [:create :create :read :read :exists :exists] (map :f (kv/exists-observations ops))))
    (is (= [:invoke :fail :invoke :ok :invoke :ok] (map :type (kv/exists-observations ops)))))
  (testing "a create that found a key that does exist is fine"
    (is (true? (:valid? (kv/checker {:failing-creates? true}
                                    (kv-ops [0 :invoke :create [1 4]] [0 :ok :create [1 4]]
                                            [1 :invoke :create [1 5]] [1 :fail :create [1 5] :error :exists]
                                            [1 :invoke :read [1 nil]] [1 :ok :read [1 4]])
                                    {}))))
    (testing "or one concurrent with a delete that completes before it"
      (is (true? (:valid? (kv/checker {:failing-creates? true}
                                      (kv-ops [0 :invoke :create [1 4]] [0 :ok :create [1 4]]
                                              [1 :invoke :create [1 5]]
                                              [0 :invoke :delete [1 nil]] [0 :ok :delete [1 nil]]
                                              [1 :fail :create [1 5] :error :exists])
                                      {})))))))

(deftest the-generator-makes-faulty-ops-only-when-asked
  (let [ops (fn [test] (vec (repeatedly 3000 ((var-get #'kv/op-gen) test (java.util.Random. 1)))))
        plain (ops {:key-count 5})
        faulty (ops {:key-count 5 :failing-creates? true :throwing-writes? true})
        share (fn [f] (let [all (filter #(= f (:f %)) faulty)]
                        (/ (double (count (filter :faulty all))) (count all))))]
    (is (not-any? :faulty plain))
    (is (every? #(or (nil? (:value %)) (sequential? (:value %)) (<= 0 (:value %) 9)) plain))
    (is (= plain (ops {:key-count 5 :failing-creates? false})) "flags off: the same ops")
    (is (< 0.1 (share :create) 0.3))
    (is (< 0.1 (share :write) 0.3))
    (is (every? #(#{:create :write} (:f %)) (filter :faulty faulty)))
    (is (every? #(<= 100 (:value %) 109) (filter #(and (:faulty %) (= :create (:f %))) faulty)))
    (is (every? #(<= 200 (:value %) 209) (filter #(and (:faulty %) (= :write (:f %))) faulty)))
    (is (every? #(<= 0 (:value %) 9) (remove :faulty (filter #(#{:create :write} (:f %)) faulty))))
    (is (some :partner (filter :faulty faulty)) "throwing writes with a partner (a move) too")
    (testing "only one option"
      (is (not-any? #(and (:faulty %) (= :write (:f %))) (ops {:key-count 5 :failing-creates? true})))
      (is (not-any? #(and (:faulty %) (= :create (:f %))) (ops {:key-count 5 :throwing-writes? true}))))))

(deftest failing-creates-and-throwing-writes-on-an-embedded-cluster-end-to-end
  ;; The node's deliberate failures through the real library, and the client's mapping: every
  ;; faulty op is :fail (REFUSED, or the write's MulticastException), and the run is valid.
  (let [{r :result hist :history} (run-embedded-kv! "--failing-creates" "--throwing-writes")
        faulty (filter #(and (:faulty %) (not (h/invoke? %))) hist)
        error-kind (fn [op] (let [e (:error op)] (if (vector? e) (first e) e)))]
    (is (= 0 (:exit r)) (pr-str (:results r)))
    (is (= "kv-failing-creates-throwing-writes-none" (get-in r [:test :name])))
    (is (seq faulty))
    (is (every? h/fail? faulty) (pr-str (remove h/fail? faulty)))
    (is (some #(and (= :create (:f %)) (= :refused (error-kind %))) faulty) "creates REFUSED")
    (is (some #(and (= :write (:f %)) (= :threw (error-kind %))) faulty) "writes that threw")
    (is (some #(and (h/ok? %) (= :write (:f %))) hist) "ordinary writes still succeed")
    (is (not-any? #(and (h/ok? %) (= :read (:f %)) (some-> (second (:value %)) (>= 100))) hist)
        "no read sees a faulty op's value")))
