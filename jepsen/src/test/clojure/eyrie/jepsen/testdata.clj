(ns eyrie.jepsen.testdata
  "Locates the shared test data: `../shared/testdata/` relative to the repository root
  (the repo and `shared/` are siblings). The system property eyrie.testdata.dir (set by
  the pom) is tried first, then every ancestor of the working directory is searched for
  `shared/testdata`."
  (:require [clojure.java.io :as io]))

(defn- candidates []
  (concat
   (when-let [p (System/getProperty "eyrie.testdata.dir")] [(io/file p)])
   (->> (.getCanonicalFile (io/file (System/getProperty "user.dir")))
        (iterate #(.getParentFile ^java.io.File %))
        (take-while some?)
        (map #(io/file % "shared" "testdata")))))

(defn dir
  "The test data directory containing `sub` (e.g. \"knossos-cas-register\"), or nil."
  [sub]
  (->> (candidates)
       (map #(.getCanonicalFile (io/file % sub)))
       (filter #(.isDirectory ^java.io.File %))
       first))

(defn searched
  "Where `dir` looked, for error messages."
  [sub]
  (mapv #(str (io/file % sub)) (candidates)))

(defn edn-files
  "The .edn files directly in dir, sorted by name."
  [dir]
  (->> (.listFiles (io/file dir))
       (filter #(and (.isFile ^java.io.File %) (.endsWith (.getName ^java.io.File %) ".edn")))
       (sort-by #(.getName ^java.io.File %))))
