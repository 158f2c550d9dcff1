(ns eyrie.jepsen.knossos-data-test
  "Optional self-test of the linearizability checker on Knossos' cas-register corpus
  (third-party data the repository does not carry): when
  `knossos-cas-register/{good,bad}` exists under the test data directory (see
  eyrie.jepsen.testdata: property eyrie.testdata.dir or variable EYRIE_TESTDATA_DIR),
  every good history must be valid and every bad one invalid, with per-file timings,
  slowest first, in target/knossos-timings-{good,bad}.txt. When it is not named or
  absent the tests print \"knossos corpus not found ...: skipped\" and pass; the
  checker's own self-test data is in checker-selftest-test."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.linearizability :as lin]
            [eyrie.jepsen.models :as models]
            [eyrie.jepsen.testdata :as testdata]))

(def time-limit-ms
  "Budget per history; the slowest takes well under a second."
  20000)

(defn- check-file [^java.io.File f]
  (let [t0     (System/nanoTime)
        result (lin/check (models/cas-register) (h/read-knossos f)
                          {:time-limit-ms time-limit-ms})]
    {:file   (.getName f)
     :ms     (/ (- (System/nanoTime) t0) 1e6)
     :result result}))

(defn- report! [kind runs]
  (let [lines (for [{:keys [file ms result]} (sort-by :ms > runs)]
                (format "%-5s %-36s %-8s %9.1f ms  ops=%d configs=%d" kind file
                        (pr-str (:valid? result)) ms (:op-count result)
                        (:configs-explored result)))
        dir   (or (System/getProperty "eyrie.report.dir") "target")]
    (.mkdirs (io/file dir))
    (spit (io/file dir (str "knossos-timings-" kind ".txt")) (str (str/join "\n" lines) "\n"))
    (println (str kind ": " (count runs) " histories, slowest:\n  "
                  (str/join "\n  " (take 3 lines))))))

(defn- check-dir [kind expect]
  (let [sub (str "knossos-cas-register/" kind)]
    (if-let [dir (testdata/dir sub)]
      (let [files (testdata/edn-files dir)]
        (is (seq files) (str "no .edn histories in " dir))
        (let [runs (mapv check-file files)]
          (report! kind runs)
          (doseq [{:keys [file result]} runs]
            (testing file
              (is (expect (:valid? result))
                  (str file " => " (pr-str (select-keys result [:valid? :cause :op]))))))))
      (let [base (testdata/base-dir)
            msg  (if base
                   (str "knossos corpus not found at "
                        (.getCanonicalPath (io/file base sub)) ": skipped")
                   (str "knossos corpus not found (name its directory with -Deyrie.testdata.dir=DIR"
                        " or EYRIE_TESTDATA_DIR): skipped"))]
        (println msg) ; ClojureTestSuiteTest echoes a test's output to the build log
        (is true msg)))))

(deftest good-histories-are-linearizable
  (check-dir "good" true?))

(deftest bad-histories-are-not-linearizable
  (check-dir "bad" false?))
