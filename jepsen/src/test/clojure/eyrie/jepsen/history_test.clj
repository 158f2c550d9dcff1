(ns eyrie.jepsen.history-test
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.history :as h]))

(defn- temp-file [content]
  (let [f (java.io.File/createTempFile "history" ".edn")]
    (.deleteOnExit f)
    (spit f content)
    f))

(def ops
  [{:type :invoke, :process 0, :f :write, :value 1, :time 10}
   {:type :invoke, :process 1, :f :read, :value nil, :time 11}
   {:type :info, :process :nemesis, :f :kill, :value [:n1], :time 12}
   {:type :ok, :process 0, :f :write, :value 1, :time 13}
   {:type :info, :process 1, :f :read, :value nil, :time 14, :error "timeout"}
   {:type :invoke, :process 2, :f :cas, :value [1 2], :time 15}])

(deftest predicates
  (is (h/invoke? (ops 0)))
  (is (h/ok? (ops 3)))
  (is (h/info? (ops 4)))
  (is (h/fail? {:type :fail}))
  (is (h/client-op? (ops 0)))
  (is (not (h/client-op? (ops 2)))))

(deftest indexing
  (is (= [0 1 2] (map :index (h/index [{} {} {:index 7}]))))
  (is (h/has-indices? [{:index 3} {:index 5}]))
  (is (not (h/has-indices? [{:index 3} {:index 3}])))
  (is (not (h/has-indices? [{:index 0} {}])))
  (testing "an indexed sub-history keeps its indices"
    (is (= [3 5] (map :index (h/ensure-indexed [{:index 3} {:index 5}])))))
  (is (= [0 1] (map :index (h/ensure-indexed [{} {}])))))

(deftest pairing
  (let [history (h/index ops)
        pairs   (h/pairs history)]
    (testing "invocations pair with their completions, in invocation order"
      (is (= [[0 3] [1 4] [5 nil]]
             (map (fn [[inv comp]] [(:index inv) (:index comp)]) pairs))))
    (testing "pair-index maps both ways"
      (let [idx (h/pair-index history)]
        (is (= 3 (:index (idx 0))))
        (is (= 0 (:index (idx 3))))
        (is (nil? (idx 5)))
        (is (not (contains? idx 2)) "nemesis ops are not paired"))))
  (testing "a process cannot invoke twice without completing"
    (is (thrown-with-msg? clojure.lang.ExceptionInfo #"while another op was pending"
          (h/pairs (h/index [{:type :invoke, :process 0, :f :read}
                             {:type :invoke, :process 0, :f :read}]))))))

(deftest history-edn-round-trip
  (let [history (h/index ops)
        f       (java.io.File/createTempFile "history" ".edn")]
    (.deleteOnExit f)
    (h/write-history! f history)
    (let [lines (str/split-lines (slurp f))]
      (is (= (count history) (count lines)) "one op per line")
      (is (str/starts-with? (first lines) "{:index 0, :time 10, :type :invoke, :process 0"))
      (is (every? #(= 1 (count (re-seq #"\{:index" %))) lines)))
    (is (= history (h/read-history f)))
    (is (= history (h/read-any f)))))

(deftest reading-history-edn
  (testing "ops without :index are indexed, unknown tags are read as their value"
    (let [f (temp-file (str "{:type :invoke, :process 0, :f :read, :value nil}\n"
                            "#jepsen.history.Op{:type :ok, :process 0, :f :read, :value 3}\n"))]
      (is (= [{:type :invoke, :process 0, :f :read, :value nil, :index 0}
              {:type :ok, :process 0, :f :read, :value 3, :index 1}]
             (h/read-history f)))))
  (is (= [] (h/read-history (temp-file "")))))

(deftest reading-knossos-format
  (let [content "; a comment\n[{:process 0, :type :invoke, :f :write, :value 1}\n {:process 0, :type :ok, :f :write, :value 1}]\n"
        f       (temp-file content)]
    (is (= [{:process 0, :type :invoke, :f :write, :value 1, :index 0}
            {:process 0, :type :ok, :f :write, :value 1, :index 1}]
           (h/read-knossos f)
           (h/read-any f))))
  (testing "a list works too"
    (is (= 1 (count (h/read-knossos (temp-file "({:process 0 :type :invoke :f :read :value nil})"))))))
  (testing "anything else is rejected"
    (is (thrown? clojure.lang.ExceptionInfo (h/read-knossos (temp-file "{:a 1}"))))))
