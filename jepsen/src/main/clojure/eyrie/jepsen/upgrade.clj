(ns eyrie.jepsen.upgrade
  "The rolling upgrade (issue 29 item 3; `--nemesis upgrade`): every node starts on an older
  commit's build (`--upgrade-from`, default the SHA in jepsen/upgrade-from), made once by
  bin/old-build into ${EYRIE_UPGRADE_CACHE:-~/.cache/eyrie/upgrade}/<sha>/; during the run the
  nemesis upgrades the nodes one at a time (`upgrade!`: SIGTERM, SIGKILL after
  `stop-timeout-s`, started again on the same data on the harness's own build, then waits
  until it serves and every group has a leader), spread over the first `window` of the time limit. The verdict is valid
  only when the history is and every node was upgraded (`verdict`)."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [eyrie.jepsen.db :as db]
            [eyrie.jepsen.util :as util]))

(def stop-timeout-s "How long a node has to end after SIGTERM before SIGKILL." 30)

(def serve-timeout-s "How long an upgraded node has to serve (its client port open)." 90)

(def leaders-timeout-s
  "How long the nemesis then waits for a leader in every group before the next upgrade (it goes
  on without), when the upgrade is the test's only fault. With other faults (`upgrade,kill`) it
  only looks once: a kill may hold a group without a quorum, and only the nemesis thread,
  busy waiting, could restart its nodes (seen: a kill of every node, then each upgrade waiting
  its 30 s in vain while the kill's stop waited behind it)."
  30)

(defn- leaders-wait-s [test]
  (if (= #{:upgrade} (set (:nemesis-faults test))) leaders-timeout-s 0))

(def window "The part of the time limit the upgrades are spread over." 2/3)

(def default-from-file "The file (under the repository root) naming the default old build." "jepsen/upgrade-from")

(defn default-from
  "The commit in <root>/jepsen/upgrade-from (its first word), or nil when there is none."
  [root]
  (let [f (io/file root default-from-file)]
    (when (.isFile f)
      (first (str/split (str/trim (slurp f)) #"\s+")))))

(defn schedule
  "The nemesis's upgrade ops: one per node, in order, the i-th (of n) due at
  window * time-limit * (i + 1/2) / n seconds into the run (op :time, nanoseconds). A node
  whose turn comes while the nemesis thread is busy is upgraded when it is free."
  [nodes time-limit]
  (let [n (count nodes)
        w (* window time-limit)]
    (vec (map-indexed (fn [i node]
                        {:type :info :f :upgrade :value node
                         :time (long (* 1e9 w (+ i 1/2) (/ 1 n)))})
                      nodes))))

(defn upgrade!
  "Upgrades one node: stops it (SIGTERM, then SIGKILL after `stop-timeout-s`), marks it
  upgraded, starts it on the same data directory on the new build and waits until it serves.
  Returns what happened, for the nemesis op's :value."
  [test node]
  (let [t0 (System/nanoTime)
        stopped (db/stop! test node stop-timeout-s)]
    (swap! (:upgraded test) conj node)
    (db/start! test node)
    (let [serving (db/await-serving! test node serve-timeout-s (leaders-wait-s test))
          r (merge {:node node :stopped (or stopped :was-not-running)
                    :build (get @(:builds test) node)
                    :seconds (/ (Math/round (/ (- (System/nanoTime) t0) 1e8)) 10.0)}
                   (select-keys serving [:serving :leaders :why]))]
      (util/log "upgrade:" (pr-str r))
      r)))

(defn upgraded-nodes
  "The nodes the history's nemesis ops show restarted on the new build and serving."
  [history]
  (set (keep (fn [o]
               (let [v (:value o)]
                 (when (and (= :nemesis (:process o)) (= :upgrade (:f o)) (map? v)
                            (= :new (:build v)) (:serving v))
                   (:node v))))
             history)))

(defn verdict
  "The checker's results with :upgraded (the nodes upgraded, `upgraded-nodes`) and, when
  some node was not, :not-upgraded; then a valid verdict becomes :unknown: the run did not
  test what it claims."
  [results nodes history]
  (let [up (upgraded-nodes history)
        missing (vec (sort (remove up nodes)))
        results (assoc results :upgraded (vec (sort up)))]
    (if (seq missing)
      (cond-> (assoc results :not-upgraded missing)
        (true? (:valid? results)) (assoc :valid? :unknown))
      results)))

(defn old-build!
  "Builds (or finds in the cache) the test's :upgrade-from commit with bin/old-build, its
  output in <store>/old-build.log, and returns the test with :old-classpath (the old jepsen
  jar and its classpath) and :old-build (the build's directory). Throws (a setup error, exit
  3) when the build cannot be made, with bin/old-build's last line."
  [test]
  (let [log (io/file (:store test) "old-build.log")
        script (io/file (:root test) "bin" "old-build")
        cmd ["bash" (.getPath script) "--repo" (str (:upgrade-repo test)) (str (:upgrade-from test))]
        _ (util/log "old build:" (str/join " " cmd))
        p (-> (ProcessBuilder. ^java.util.List cmd)
              (.redirectError (java.lang.ProcessBuilder$Redirect/appendTo log))
              (.start))
        out (slurp (.getInputStream p))
        code (.waitFor p)
        dir (some-> (last (str/split-lines out)) str/trim)]
    (if (and (zero? code) (seq dir) (.isFile (io/file dir "jepsen" "classpath.txt")))
      (let [cp (str (io/file dir "jepsen" "jepsen.jar") ":" (str/trim (slurp (io/file dir "jepsen" "classpath.txt"))))]
        (util/log "old build of" (:upgrade-from test) "in" dir)
        (assoc test :old-build dir :old-classpath cp))
      (let [why (or (last (remove str/blank? (str/split-lines (if (.isFile log) (slurp log) ""))))
                    (str "bin/old-build exited with " code))]
        (throw (ex-info (str "cannot make the old build " (:upgrade-from test) ": " why
                             " (" (.getPath log) ")")
                        {:old-build code}))))))
