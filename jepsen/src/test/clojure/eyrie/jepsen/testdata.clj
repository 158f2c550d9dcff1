(ns eyrie.jepsen.testdata
  "Locates optional external test data (the Knossos corpus), which the repository does
  not carry. The system property eyrie.testdata.dir names the directory when set
  (e.g. `./mvnw test -Deyrie.testdata.dir=/data/testdata`); otherwise it is
  `../shared/testdata` relative to the repository root, found at run time as the
  nearest ancestor of the working directory that holds `mvnw` and `jepsen/`. Tests that
  need such data skip, saying so, when it is absent."
  (:require [clojure.java.io :as io]))

(defn repo-root
  "The repository root: the nearest ancestor of the working directory (itself included)
  holding `mvnw` and a `jepsen` directory, or nil."
  []
  (->> (.getCanonicalFile (io/file (System/getProperty "user.dir")))
       (iterate #(.getParentFile ^java.io.File %))
       (take-while some?)
       (filter #(and (.isFile (io/file % "mvnw")) (.isDirectory (io/file % "jepsen"))))
       first))

(defn base-dir
  "Where external test data is looked for (a File, which may not exist)."
  []
  (if-let [p (System/getProperty "eyrie.testdata.dir")]
    (io/file p)
    (io/file (or (repo-root) (io/file (System/getProperty "user.dir"))) ".." "shared" "testdata")))

(defn dir
  "The existing directory `sub` (e.g. \"knossos-cas-register/good\") under `base-dir`,
  canonical, or nil."
  [sub]
  (let [f (.getCanonicalFile (io/file (base-dir) sub))]
    (when (.isDirectory f) f)))

(defn edn-files
  "The .edn files directly in dir, sorted by name."
  [dir]
  (->> (.listFiles (io/file dir))
       (filter #(and (.isFile ^java.io.File %) (.endsWith (.getName ^java.io.File %) ".edn")))
       (sort-by #(.getName ^java.io.File %))))
