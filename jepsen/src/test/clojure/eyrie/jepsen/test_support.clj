(ns eyrie.jepsen.test-support
  "Helpers the Clojure tests share. Not a test namespace itself: ClojureTestSuiteTest runs only
  the namespaces whose file name ends with _test.clj."
  (:import (java.nio.file Files)
           (java.nio.file.attribute FileAttribute)))

(defn temp-dir
  "Creates a new temporary directory whose name starts with prefix; returns its path."
  [prefix]
  (str (Files/createTempDirectory prefix (make-array FileAttribute 0))))
