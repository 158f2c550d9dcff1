(ns eyrie.jepsen.test-runner
  "Glue between JUnit (io.eyrie.jepsen.ClojureTestSuiteTest) and clojure.test: finds
  namespaces under a source directory and runs one clojure.test var at a time,
  capturing its report."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :as t]))

(defn namespaces-in
  "The namespace symbols of the .clj files under dir (path eyrie/jepsen/foo_bar.clj
  gives eyrie.jepsen.foo-bar), sorted; only files whose name ends with suffix."
  [dir suffix]
  (let [root (.getCanonicalFile (io/file dir))
        base (count (str (.getPath root) "/"))]
    (->> (file-seq root)
         (filter #(and (.isFile ^java.io.File %) (str/ends-with? (.getName ^java.io.File %) suffix)))
         (map #(-> (subs (.getPath (.getCanonicalFile ^java.io.File %)) base)
                   (str/replace #"\.clj$" "")
                   (str/replace "/" ".")
                   (str/replace "_" "-")
                   symbol))
         sort
         vec)))

(defn load-ns!
  "Requires a namespace (from the classpath). Throws on compile errors."
  [ns-sym]
  (require ns-sym)
  (str ns-sym))

(defn test-var-names
  "Names of the clojure.test vars (those with :test metadata) in a loaded namespace,
  in source order."
  [ns-sym]
  (->> (ns-interns (the-ns ns-sym))
       vals
       (filter (comp :test meta))
       (sort-by (comp :line meta))
       (mapv (comp str :name meta))))

(defn run-test-var
  "Runs one test var and returns {\"pass\" n, \"fail\" n, \"error\" n, \"output\" s}
  where s is clojure.test's report (failures, errors, and anything printed)."
  [ns-sym var-name]
  (let [v        (ns-resolve (the-ns ns-sym) (symbol var-name))
        counters (ref t/*initial-report-counters*)
        out      (java.io.StringWriter.)]
    (binding [t/*report-counters* counters
              t/*test-out*        out
              *out*               out]
      (t/test-vars [v]))
    (let [{:keys [pass fail error]} @counters]
      {"pass" pass, "fail" fail, "error" error, "output" (str out)})))
