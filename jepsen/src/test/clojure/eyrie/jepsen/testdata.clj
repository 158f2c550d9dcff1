(ns eyrie.jepsen.testdata
  "Locates optional external test data (the Knossos corpus), which the repository does
  not carry. The system property eyrie.testdata.dir or the environment variable
  EYRIE_TESTDATA_DIR names the directory (e.g. `./mvnw test -Deyrie.testdata.dir=/data/testdata`);
  there is no default. Tests that need such data skip, saying so, when it is not named
  or absent."
  (:require [clojure.java.io :as io]))

(defn base-dir
  "Where external test data is looked for (a File, which may not exist), or nil when
  neither the system property eyrie.testdata.dir nor the environment variable
  EYRIE_TESTDATA_DIR names a directory."
  []
  (when-let [p (or (System/getProperty "eyrie.testdata.dir") (System/getenv "EYRIE_TESTDATA_DIR"))]
    (io/file p)))

(defn dir
  "The existing directory `sub` (e.g. \"knossos-cas-register/good\") under `base-dir`,
  canonical, or nil (also when no directory is named)."
  [sub]
  (when-let [base (base-dir)]
    (let [f (.getCanonicalFile (io/file base sub))]
      (when (.isDirectory f) f))))

(defn edn-files
  "The .edn files directly in dir, sorted by name."
  [dir]
  (->> (.listFiles (io/file dir))
       (filter #(and (.isFile ^java.io.File %) (.endsWith (.getName ^java.io.File %) ".edn")))
       (sort-by #(.getName ^java.io.File %))))
