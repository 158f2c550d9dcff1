(ns eyrie.jepsen.core
  "Runs one test, or the matrix: `bin/jepsen test ...` and `bin/jepsen test-all`.

  A test: prepare the store directory; start the nodes (real JVM processes, each in its own
  network namespace: `eyrie.jepsen.db`, `eyrie.jepsen.net`; or, with `--db embedded`, an
  in-process cluster without faults, for quick checks); create the workload's objects; run the
  workload's generator with the nemesis's for --time-limit seconds; heal every fault, wait
  --recovery seconds and run the final generator (final reads); stop everything; write
  history.edn, check it, write results.edn, the reports and the `latest` links.
  Exit code: 0 valid, 1 invalid, 2 wrong command line, 3 setup error, 4 unknown."
  (:require [clojure.java.io :as io]
            [clojure.pprint :as pprint]
            [clojure.string :as str]
            [eyrie.jepsen.client :as client]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.runner :as runner]
            [eyrie.jepsen.util :as util])
  (:import (java.nio.file Files LinkOption Path Paths)
           (java.nio.file.attribute FileAttribute)
           (java.time LocalDateTime)
           (java.time.format DateTimeFormatter)))

(def workloads
  "Workload name -> the fully qualified name of its constructor (fn [test] -> workload map)
  and the node service it needs."
  {"register" {:ctor 'eyrie.jepsen.workload.register/workload :service "register"}
   "kv" {:ctor 'eyrie.jepsen.workload.kv/workload :service "kv"}
   "bank" {:ctor 'eyrie.jepsen.workload.bank/workload :service "bank"}
   "chirper" {:ctor 'eyrie.jepsen.workload.chirper/workload :service "chirper"}})

(def faults #{:kill :pause :partition :move-storm :asym :kill-partition-leader :elastic :upgrade})

;; ---------------------------------------------------------------------------
;; Command line

(def usage
  "usage: bin/jepsen test --workload register|kv|bank|chirper
                   [--nemesis kill,pause,partition,move-storm,asym,kill-partition-leader,elastic,upgrade|none]
                   [--time-limit S] [--nodes 5] [--concurrency C] [--interval S] [--recovery S]
                   [--key-count K] [--threads-per-key T] [--ops-per-key N] [--op-timeout-ms MS]
                   [--unsafe-reads] [--mode dssmr|ssmr] [--seed N] [--store DIR] [--db netns|embedded]
                   [--failing-creates] [--throwing-writes]   (kv: the service fails some creates /
                                                              throws after some writes, on purpose)
                   [--snapshot-threshold N]   (nodes snapshot every N log entries; low, so that
                                               some restarts load a snapshot and some replay)
                   [--tls]   (mutual TLS on every node's client and Raft ports, certificates
                              written for the run into <store>/certs; clients with a client
                              certificate, the nemesis's partition changes with an admin one)
                   [--upgrade-from COMMIT] [--upgrade-repo DIR]   (--nemesis upgrade: the nodes
                              start on COMMIT's build, default the SHA in jepsen/upgrade-from,
                              taken from the git repository DIR, default this one)
                   [--name NAME]
       bin/jepsen test-all [--time-limit S] [--store DIR]      (the matrix; see jepsen/README.md)
       bin/jepsen check [--independent] [--time-limit S] history.edn
       bin/jepsen probe-f1 [--store DIR]                        (issue 13's F1 schedule, directed)")

(def test-opts
  "The options `test` knows (valued and flags alike); any other is a usage error, so that a
  misspelt option never silently changes a run."
  #{:workload :nemesis :time-limit :nodes :concurrency :interval :recovery :unsafe-reads :seed :store :db
    :name :key-count :op-timeout-ms :threads-per-key :ops-per-key :mode :failing-creates :throwing-writes
    :snapshot-threshold :tls :upgrade-from :upgrade-repo})

(def test-all-opts "The options `test-all` knows." #{:time-limit :store})

(defn parse-opts
  "Parses `--name value` options (flags without a value are true); `--help` or `-h` gives
  {:help true}. With a set of known option keywords, any other option is a usage error. Throws
  ex-info on bad input."
  ([args] (parse-opts args nil))
  ([args known]
   (loop [args args, m {}]
     (if-let [a (first args)]
       (cond
         (#{"--help" "-h"} a) {:help true}
         (not (str/starts-with? a "--")) (throw (ex-info (str "expected an option, got " a) {:usage true}))
         :else
         (let [k (keyword (subs a 2))
               v (second args)]
           (when (and known (not (known k)))
             (throw (ex-info (str "unknown option " a) {:usage true})))
           (if (and v (not (str/starts-with? v "--")))
             (recur (nnext args) (assoc m k v))
             (recur (next args) (assoc m k true)))))
       m))))

(defn- parse-long-opt [m k default]
  (if-let [v (get m k)]
    (try (Long/parseLong (str v))
         (catch NumberFormatException _ (throw (ex-info (str "--" (name k) " needs a number, got " v) {:usage true}))))
    default))

(defn- kv-flag
  "A flag of the kv workload (`--failing-creates`, `--throwing-writes`): true when given, false
  when absent. It takes no value, and needs `--workload kv`."
  [opts k wname]
  (let [v (get opts k)]
    (cond (nil? v) false
          (not (true? v)) (throw (ex-info (str "--" (name k) " takes no value, got " v) {:usage true}))
          (not= "kv" wname) (throw (ex-info (str "--" (name k) " needs --workload kv") {:usage true}))
          :else true)))

(defn- upgrade-opts
  "{:upgrade-from commit :upgrade-repo dir} for the upgrade nemesis (nil without it, when
  neither option may be given)."
  [opts nem db-kind root]
  (let [given (filter opts [:upgrade-from :upgrade-repo])]
    (doseq [k given]
      (when-not (string? (opts k))
        (throw (ex-info (str "--" (name k) " needs a value") {:usage true}))))
    (cond
      (not (contains? nem :upgrade))
      (when (seq given)
        (throw (ex-info (str "--" (name (first given)) " needs --nemesis upgrade") {:usage true})))
      (not= :netns db-kind)
      (throw (ex-info "--nemesis upgrade needs --db netns (node processes)" {:usage true}))
      :else
      {:upgrade-from (or (:upgrade-from opts)
                         ((requiring-resolve 'eyrie.jepsen.upgrade/default-from) root)
                         (throw (ex-info (str root "/jepsen/upgrade-from names no commit; pass --upgrade-from")
                                         {:usage true})))
       :upgrade-repo (str (get opts :upgrade-repo root))})))

(defn test-map
  "The test map from parsed options."
  [opts]
  (let [wname (str (get opts :workload "register"))
        _ (when-not (workloads wname)
            (throw (ex-info (str "unknown workload " wname "; known: " (str/join ", " (sort (keys workloads)))) {:usage true})))
        nem (let [v (str (get opts :nemesis "none"))]
              (if (#{"none" ""} v)
                #{}
                (set (map keyword (str/split v #",")))))
        _ (when-let [bad (seq (remove faults nem))]
            (throw (ex-info (str "unknown nemesis " (str/join "," (map name bad)) "; known: "
                                 (str/join "," (map name (sort faults)))) {:usage true})))
        n (parse-long-opt opts :nodes 5)
        unsafe? (boolean (:unsafe-reads opts))
        mode (let [v (str (get opts :mode "dssmr"))]
               (if (#{"dssmr" "ssmr"} v)
                 (keyword v)
                 (throw (ex-info (str "unknown mode " v "; known: dssmr, ssmr") {:usage true}))))
        failing? (kv-flag opts :failing-creates wname)
        throwing? (kv-flag opts :throwing-writes wname)
        tls? (let [v (get opts :tls)]
               (cond (nil? v) false
                     (true? v) true
                     :else (throw (ex-info (str "--tls takes no value, got " v) {:usage true}))))
        db-kind (keyword (get opts :db "netns"))
        root (or (System/getProperty "eyrie.root") (.getCanonicalPath (io/file ".")))
        upgrade (upgrade-opts opts nem db-kind root)]
    (cond->
     {:name (or (:name opts)
                (str wname (when unsafe? "-unsafe") (when (= mode :ssmr) "-ssmr")
                     (when failing? "-failing-creates") (when throwing? "-throwing-writes") (when tls? "-tls") "-"
                     (if (empty? nem) "none" (str/join "+" (map name (sort nem))))))
      :workload wname
      :service (get-in workloads [wname :service])
      :nemesis-faults nem
      :time-limit (parse-long-opt opts :time-limit 60)
      :nodes (mapv #(str "n" %) (range 1 (inc n)))
      :concurrency (parse-long-opt opts :concurrency 10)
      :interval (parse-long-opt opts :interval 10)
      :recovery (parse-long-opt opts :recovery 10)
      :unsafe-reads? unsafe?
      :client-mode mode
      :seed (parse-long-opt opts :seed (System/currentTimeMillis))
      :store-root (str (get opts :store "store"))
      :db-kind db-kind
      :key-count (parse-long-opt opts :key-count 50)
      :op-timeout-ms (parse-long-opt opts :op-timeout-ms 5000)
      :root root
      :classpath (System/getProperty "java.class.path")}
    ;; per-key workloads (register, kv); when absent, the workload's own default
    (:threads-per-key opts) (assoc :threads-per-key (parse-long-opt opts :threads-per-key nil))
    (:ops-per-key opts) (assoc :ops-per-key (parse-long-opt opts :ops-per-key nil))
    (:snapshot-threshold opts) (assoc :snapshot-threshold (parse-long-opt opts :snapshot-threshold nil))
    ;; kv: the service's deliberate failures (absent: none, and the kv test is as before)
    failing? (assoc :failing-creates? true)
    throwing? (assoc :throwing-writes? true)
    ;; mutual TLS (absent: plaintext, the nodes started with --insecure, as before)
    tls? (assoc :tls? true)
    ;; the upgrade nemesis: the old build's commit and the repository it comes from
    upgrade (merge upgrade))))

;; ---------------------------------------------------------------------------
;; Store

(def ^:private ts-format (DateTimeFormatter/ofPattern "yyyyMMdd'T'HHmmss.SSS"))

(defn- relink!
  "Points the symbolic link `link` at `target` (relative), replacing an old link."
  [^Path link ^Path target]
  (Files/deleteIfExists link)
  (Files/createSymbolicLink link (.relativize (.getParent link) target) (make-array FileAttribute 0)))

(defn prepare-store!
  "Creates store/<name>/<timestamp>/ and returns the test with :store set."
  [test]
  (let [dir (io/file (:store-root test) (:name test) (.format ts-format (LocalDateTime/now)))]
    (.mkdirs (io/file dir "nodes"))
    (assoc test :store (.getCanonicalPath dir))))

(defn link-latest!
  "Links store/<name>/latest and store/latest to this run."
  [test]
  (let [run (Paths/get (:store test) (make-array String 0))]
    (try
      (relink! (.resolve (.getParent run) "latest") run)
      (relink! (.toAbsolutePath (Paths/get (str (:store-root test)) (into-array String ["latest"]))) run)
      (catch Exception e (util/log "cannot link latest:" e)))))

(defn- write-edn! [file x]
  (with-open [w (io/writer file)]
    (binding [*print-length* nil *print-level* nil *print-namespace-maps* false]
      (pprint/pprint x w))))

;; ---------------------------------------------------------------------------
;; Environments

(defn- resolve! [sym]
  (or (requiring-resolve sym) (throw (ex-info (str "missing " sym) {}))))

(defn- embedded-env
  "An in-process cluster (3 nodes, 2 partitions and the oracle) hosting the test's service. No
  faults: it checks the workload and checker end to end without network namespaces."
  [test]
  (let [test (if (:tls? test) ((resolve! 'eyrie.jepsen.tls/write-certs!) test [1 2 3] []) test)
        cluster ((resolve! 'eyrie.jepsen.embedded/start!) test)]
    {:test (assoc test :cluster-config (.cluster ^io.eyrie.multicast.EmbeddedCluster cluster)
                       :nodes ["n1" "n2" "n3"])
     :stop! (fn [] (.close ^java.lang.AutoCloseable cluster))}))

(defn- netns-env
  "Real node processes in network namespaces, and the nemesis."
  [test]
  (let [test ((resolve! 'eyrie.jepsen.db/prepare) test)
        test (assoc test :cluster-config ((resolve! 'eyrie.jepsen.db/cluster-config) test))]
    ((resolve! 'eyrie.jepsen.net/setup!) test)
    (try
      ((resolve! 'eyrie.jepsen.db/setup!) test)
      (catch Throwable t
        (try ((resolve! 'eyrie.jepsen.db/teardown!) test) (catch Throwable _))
        (try ((resolve! 'eyrie.jepsen.net/teardown!) test) (catch Throwable _))
        (throw t)))
    {:test test
     :stop! (fn []
              (try ((resolve! 'eyrie.jepsen.db/teardown!) test)
                   (finally ((resolve! 'eyrie.jepsen.net/teardown!) test))))}))

(defn- nemesis-for
  "{:nemesis-invoke f :generator g :final-generator g :teardown! f} for the test's faults."
  [test]
  (if (empty? (:nemesis-faults test))
    {:nemesis-invoke (fn [_ op] (assoc op :type :info)) :generator nil :final-generator nil :teardown! (fn [])}
    (let [pkg ((resolve! 'eyrie.jepsen.nemesis/package)
               {:faults (:nemesis-faults test) :interval (:interval test)
                :rng (java.util.Random. (long (:seed test)))
                :nodes (:nodes test) :time-limit (:time-limit test)})
          nem (:nemesis pkg)
          setup! (resolve! 'eyrie.jepsen.nemesis/setup!)
          invoke! (resolve! 'eyrie.jepsen.nemesis/invoke!)
          teardown! (resolve! 'eyrie.jepsen.nemesis/teardown!)
          nem (or (setup! nem test) nem)]
      {:nemesis-invoke (fn [test op] (invoke! nem test op))
       :generator (:generator pkg)
       :final-generator (:final-generator pkg)
       :teardown! (fn [] (teardown! nem test))})))

;; ---------------------------------------------------------------------------
;; Running one test

(defn generator
  "The whole test's generator: workload and nemesis for :time-limit seconds, then the nemesis's
  final ops (heal), a recovery pause, and the workload's final ops."
  [test workload nemesis]
  (gen/phases
    (gen/log (str "running " (:time-limit test) " s of " (:workload test) " with nemesis "
                  (if (empty? (:nemesis-faults test)) "none" (str/join "," (map name (sort (:nemesis-faults test)))))))
    (gen/time-limit (:time-limit test)
                    (gen/clients (:generator workload) (:generator nemesis)))
    (gen/log "healing")
    (gen/nemesis (:final-generator nemesis))
    (gen/log (str "waiting " (:recovery test) " s for recovery"))
    (gen/nemesis (gen/sleep (:recovery test)))
    (gen/log "final ops")
    (gen/clients (:final-generator workload))))

(defn- verdict-code [valid?]
  (cond (true? valid?) 0 (false? valid?) 1 :else 4))

(defn run-test!
  "Runs one test; returns {:test t :results r :exit code}."
  [test]
  (let [test (prepare-store! test)
        log-w (io/writer (io/file (:store test) "jepsen.log"))]
    (util/set-log-file! log-w)
    (try
      (util/log "test" (:name test) "store" (:store test) "seed" (:seed test))
      (let [test (if (:upgrade-from test) ((resolve! 'eyrie.jepsen.upgrade/old-build!) test) test)
            {env-test :test stop! :stop!} (if (= :embedded (:db-kind test)) (embedded-env test) (netns-env test))
            test (assoc env-test :start-nanos (System/nanoTime))
            history (atom nil)]
        ;; (:start-nanos is set again once the workload's objects exist: op times count from the run.)
        (try
          (let [workload ((resolve! (get-in workloads [(:workload test) :ctor])) test)
                test (assoc test :client (:client workload))
                _ (let [c (client/open! (:client test) test (first (:nodes test)))]
                    (try (client/setup! c test) (finally (client/close! c test))))
                nemesis (nemesis-for test)
                test (assoc test :nemesis-invoke (:nemesis-invoke nemesis) :start-nanos (System/nanoTime))]
            ;; history.edn grows while the test runs (a killed run leaves what it had); it is
            ;; written again in full below.
            (with-open [stream (io/writer (io/file (:store test) "history.edn"))]
              (try
                (reset! history (runner/run! (assoc test :history-out stream) (generator test workload nemesis)))
                (finally ((:teardown! nemesis)))))
            (util/log "history:" (count @history) "ops;" (pr-str (frequencies (map (juxt :type :f) (filter h/client-op? @history)))))
            (h/write-history! (io/file (:store test) "history.edn") @history)
            (stop!)
            (util/log "checking")
            (let [results ((:checker workload) test @history {})
                  ;; the upgrade nemesis: valid only if every node was upgraded
                  results (if (:upgrade-from test)
                            ((resolve! 'eyrie.jepsen.upgrade/verdict) results (:nodes test) @history)
                            results)
                  results (assoc results :op-count (count @history)
                                         :stats (into (sorted-map) (frequencies (map (fn [o] [(:f o) (:type o)])
                                                                                      (remove h/invoke? (filter h/client-op? @history))))))]
              (write-edn! (io/file (:store test) "results.edn") results)
              (when-let [report (try (requiring-resolve 'eyrie.jepsen.report/write!) (catch Exception _ nil))]
                (try (report (:store test) test @history)
                     (catch Throwable t (util/log "report failed:" t))))
              (util/log "valid?" (:valid? results) "—" (:store test))
              (link-latest! test)
              {:test test :results results :exit (verdict-code (:valid? results))}))
          (catch Throwable t
            (when @history (h/write-history! (io/file (:store test) "history.edn") @history))
            (try (stop!) (catch Throwable _))
            (throw t))))
      (finally
        (util/set-log-file! nil)
        (.close log-w)))))

;; ---------------------------------------------------------------------------
;; The matrix

(def matrix
  "workload × nemesis runs of `test-all`, and the verdict each must have. The unsafe register
  runs are the positive control: they must come out invalid. The kv runs always last 120 s
  (their own :time-limit): creates and deletes need time under faults to meet the schedules
  that break execution atomicity. The kv row with `--failing-creates` and `--throwing-writes`
  checks that refused creates and writes undone after a throw never take effect under faults.
  The upgrade rows start every node on the build of jepsen/upgrade-from's commit and restart
  them one at a time on the current build under load (issue 29 item 3)."
  [{:workload "register" :nemesis "kill" :expect true}
   {:workload "register" :nemesis "pause" :expect true}
   {:workload "register" :nemesis "partition" :expect true}
   {:workload "register" :nemesis "kill,partition" :expect true}
   {:workload "register" :nemesis "move-storm" :expect true}
   {:workload "bank" :nemesis "kill,partition" :expect true}
   {:workload "bank" :nemesis "pause,move-storm" :expect true}
   {:workload "kv" :nemesis "kill,partition" :time-limit 120 :expect true}
   {:workload "kv" :nemesis "asym,kill-partition-leader" :time-limit 120 :expect true}
   {:workload "kv" :nemesis "elastic,kill-partition-leader" :time-limit 120 :expect true}
   {:workload "kv" :nemesis "elastic,kill" :time-limit 120 :snapshot-threshold 400 :expect true}
   {:workload "kv" :nemesis "kill,partition" :time-limit 120 :failing-creates true :throwing-writes true
    :expect true}
   {:workload "chirper" :nemesis "kill,partition" :expect true}
   {:workload "chirper" :nemesis "pause" :expect true}
   {:workload "register" :nemesis "upgrade" :expect true}
   {:workload "kv" :nemesis "upgrade,kill" :time-limit 120 :expect true}
   {:workload "register" :nemesis "partition,pause" :unsafe-reads true :expect false}])

(defn- matrix-options
  "A matrix row's flags, as on the command line (or -)."
  [row]
  (let [flags (filter row [:unsafe-reads :failing-creates :throwing-writes])
        valued (for [k [:snapshot-threshold :upgrade-from] :when (row k)] (str "--" (name k) " " (row k)))
        all (concat (map #(str "--" (name %)) flags) valued)]
    (if (seq all) (str/join " " all) "-")))

(defn test-all!
  "Runs the matrix; returns 0 when every verdict is the expected one, else 1."
  [opts]
  (let [rows (doall
               (for [m matrix]
                 (let [o (merge opts (dissoc m :expect))
                       r (try (run-test! (test-map o))
                              (catch Throwable t (util/log "test failed to run:" t) {:error t}))
                       v (get-in r [:results :valid?])]
                   (util/log "matrix:" (:workload m) (:nemesis m) (if (:unsafe-reads m) "(unsafe reads)" "")
                             (if (:failing-creates m) "(failing creates)" "")
                             (if (:throwing-writes m) "(throwing writes)" "")
                             "->" v (if (= v (:expect m)) "as expected" "NOT AS EXPECTED"))
                   (cond-> (assoc m :valid? v :ops (get-in r [:results :op-count]) :store (get-in r [:test :store]))
                     ;; the upgrade rows: which old build they started on
                     (get-in r [:test :upgrade-from]) (assoc :upgrade-from (get-in r [:test :upgrade-from]))))))]
    (println)
    (println "| workload | nemesis | options | ops | valid? | expected |")
    (println "|---|---|---|---|---|---|")
    (doseq [r rows]
      (println (str "| " (:workload r) " | " (:nemesis r) " | " (matrix-options r) " | " (:ops r) " | "
                    (:valid? r) " | " (:expect r) " |")))
    (if (every? #(= (:valid? %) (:expect %)) rows) 0 1)))

(defn run-cli
  "Runs a command line; returns the exit code. A wrong command line is refused with one line on
  stderr and exit 2 before anything starts (as every Eyrie command does); `--help` prints the
  usage and returns 0. Other codes: 0 valid, 1 invalid, 3 setup error, 4 unknown verdict."
  [args]
  (let [usage-error (fn [msg]
                      (binding [*out* *err*]
                        (println (str "bin/jepsen: " msg " (bin/jepsen --help shows the usage)")))
                      2)]
    (try
      (case (first args)
        ("--help" "-h" "help") (do (println usage) 0)
        "test" (let [o (parse-opts (rest args) test-opts)]
                 (if (:help o) (do (println usage) 0) (:exit (run-test! (test-map o)))))
        "test-all" (let [o (parse-opts (rest args) test-all-opts)]
                     (if (:help o) (do (println usage) 0) (test-all! o)))
        "probe-f1" (let [o (parse-opts (rest args) #{:store})]
                     (if (:help o)
                       (do (println usage) 0)
                       ((resolve! 'eyrie.jepsen.probe/f1!) {:store-root (str (get o :store "store"))})))
        "check" (if (some #{"--help" "-h"} (rest args))
                  (do (println usage) 0)
                  (apply (resolve! 'eyrie.jepsen.check/run) [(rest args)]))
        (usage-error (if (first args) (str "unknown command " (first args)) "a command is needed")))
      (catch clojure.lang.ExceptionInfo e
        (if (:usage (ex-data e))
          (usage-error (.getMessage e))
          (do (util/log "error:" e) 3)))
      (catch Throwable t (util/log "error:" t) 3))))

(defn -main [& args]
  (let [code (run-cli args)]
    (shutdown-agents)
    (System/exit code)))
