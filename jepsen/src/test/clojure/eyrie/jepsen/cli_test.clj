(ns eyrie.jepsen.cli-test
  "bin/jepsen's command line: --help answers with the usage and exit 0, a wrong option or
  command is refused with one line and exit 2, and neither starts a test."
  (:require [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.core :as core]))

(defn- run
  "Runs the command line with run-test! and test-all! replaced by recorders; returns
  [exit stdout stderr started]."
  [args]
  (let [started (atom [])
        code (volatile! nil)
        err (java.io.StringWriter.)
        out (with-out-str
              (binding [*err* err]
                (with-redefs [core/run-test! (fn [t] (swap! started conj (:name t)) {:exit 0})
                              core/test-all! (fn [_] (swap! started conj :test-all) 0)]
                  (vreset! code (core/run-cli args)))))]
    [@code out (str err) @started]))

(deftest help-and-bogus-options-start-nothing
  (doseq [args [["--help"] ["test" "--help"] ["test" "--workload" "bank" "--help"] ["test-all" "--help"]
                ["check" "--help"] ["probe-f1" "--help"]]]
    (let [[code out _ started] (run args)]
      (testing (pr-str args)
        (is (= 0 code))
        (is (str/includes? out "usage: bin/jepsen test"))
        (is (empty? started)))))
  (doseq [args [["test" "--bogus"] ["test" "--time-limt" "30"] ["test-all" "--workload" "bank"] ["probe-f1" "--bogus"]
                ["nope"] []]]
    (let [[code _ err started] (run args)]
      (testing (pr-str args)
        (is (= 2 code))
        (is (= 1 (count (str/split-lines err))) err)
        (is (empty? started))))))

(deftest a-good-command-line-starts-the-test
  (let [[code _ _ started] (run ["test" "--workload" "bank" "--time-limit" "5"])]
    (is (= 0 code))
    (is (= ["bank-none"] started))))
