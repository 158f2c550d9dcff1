(ns eyrie.jepsen.check-test
  (:require [clojure.edn :as edn]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.check :as check]
            [eyrie.jepsen.history :as h]))

(defn- history-file [ops]
  (let [f (java.io.File/createTempFile "history" ".edn")]
    (.deleteOnExit f)
    (h/write-history! f (h/index ops))
    (str f)))

(defn- op [p type f v] {:process p, :type type, :f f, :value v})

(defn- run [& args]
  (let [err  (java.io.StringWriter.)
        code (atom nil)
        out  (binding [*err* err] (with-out-str (reset! code (check/run args))))]
    {:code @code, :out out, :err (str err)}))

(deftest exit-codes
  (let [good (history-file [(op 0 :invoke :write 1) (op 0 :ok :write 1)
                            (op 1 :invoke :read nil) (op 1 :ok :read 1)])
        bad  (history-file [(op 0 :invoke :write 1) (op 0 :ok :write 1)
                            (op 1 :invoke :read nil) (op 1 :ok :read 2)])
        slow (history-file [(op 0 :invoke :write 1) (op 1 :invoke :write 2)
                            (op 0 :ok :write 1) (op 1 :ok :write 2)])]
    (testing "valid: exit 0 and the result map is printed"
      (let [{:keys [code out]} (run good)]
        (is (= 0 code))
        (is (true? (:valid? (edn/read-string out))))))
    (testing "invalid: exit 1"
      (let [{:keys [code out]} (run bad)]
        (is (= 1 code))
        (is (str/includes? out "can't read 2 from register 1"))))
    (testing "unknown: exit 4"
      (is (= 4 (:code (run "--time-limit" "0" slow)))))
    (testing "usage errors: exit 2; an unreadable file: exit 3"
      (is (= 2 (:code (run))))
      (is (= 2 (:code (run "--bogus" good))))
      (is (= 3 (:code (run "/no/such/history.edn")))))))

(deftest independent-histories
  (let [f (history-file [(op 0 :invoke :write [:x 1]) (op 0 :ok :write [:x 1])
                         (op 1 :invoke :write [:y 1]) (op 1 :ok :write [:y 1])
                         (op 0 :invoke :read [:y nil]) (op 0 :ok :read [:y 2])])]
    (testing "detected automatically"
      (let [{:keys [code out]} (run f)]
        (is (= 1 code))
        (is (= [:y] (:failures (edn/read-string {:default (fn [_ v] v)} out))))))
    (is (= 1 (:code (run "--independent" f))))))

(deftest knossos-files
  (let [f (java.io.File/createTempFile "knossos" ".edn")]
    (.deleteOnExit f)
    (spit f (pr-str [(op 0 :invoke :write 1) (op 0 :ok :write 1)]))
    (is (= 0 (:code (run (str f)))))))
