(ns eyrie.jepsen.db
  "The nodes: one JVM process per node, started inside the node's network namespace
  (`eyrie.jepsen.net`), its stdout and stderr appended to <store>/nodes/<node>.log and its
  Raft storage in <store>/data/<node>, which survives kills and restarts.

  The cluster file (<store>/cluster.conf) spreads the groups over the nodes as a ring: with 5
  nodes, partitions p0..p3 on {1,2,3} {2,3,4} {3,4,5} {4,5,1} and the oracle on {5,1,2}; so a
  network partition leaves some groups with a quorum and others without.

  Builds: a node runs the harness's own classpath (:classpath, the new build), unless the
  test has an :old-classpath (the upgrade nemesis, `eyrie.jepsen.upgrade`) and the node is not
  yet in the :upgraded set; :builds records which build each node's last start ran."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [eyrie.jepsen.net :as net]
            [eyrie.jepsen.tls :as tls]
            [eyrie.jepsen.util :as util])
  (:import (io.eyrie.jepsen.node Leaders)
           (io.eyrie.multicast ClusterConfig)
           (java.lang ProcessBuilder$Redirect)
           (java.util.concurrent TimeUnit)))

(def raft-port 7101)
(def client-port 7201)

(defn ring
  "Members (node indexes 1..n) of the i-th group on the ring, 3 (or all, if fewer) nodes."
  [n i]
  (sort (distinct (map #(inc (mod (+ i %) n)) (range (min 3 n))))))

(defn cluster-text
  "The cluster file for the test's nodes."
  [test]
  (let [nodes (:nodes test)
        n (count nodes)
        partitions (:partitions test 4)]
    (str/join "\n"
              (concat
                ["# written by the jepsen harness: one node per network namespace"]
                (for [node nodes]
                  (str "node " (net/node-index node) " " (net/ip node) " raft=" raft-port " client=" client-port))
                [(str "group oracle oracle " (str/join "," (ring n (dec n))))]
                (for [p (range partitions)]
                  (str "group p" p " partition " (str/join "," (ring n p))))
                (when-let [d (:tls-dir test)]
                  [(str "tls " d)])
                [""]))))

(defn prepare
  "Adds :ips, :cluster-file and the process registry to the test and writes the cluster file;
  with --tls (:tls? true), first the certificates (:tls-dir), node ones naming the nodes' addresses."
  [test]
  (let [test (if (:tls? test)
               (tls/write-certs! test (map net/node-index (:nodes test)) (map net/ip (:nodes test)))
               test)
        f (io/file (:store test) "cluster.conf")]
    (spit f (cluster-text test))
    (assoc test
           :ips (into {} (map (fn [n] [n (net/ip n)]) (:nodes test)))
           :cluster-file (.getCanonicalPath f)
           :processes (atom {})
           :builds (atom {})
           :upgraded (atom #{}))))

(defn node-build
  "Which build node's next start runs: :old while the test has an old build (:old-classpath)
  and the node is not in the :upgraded set (an atom), else :new."
  [test node]
  (if (and (:old-classpath test) (not (contains? (some-> (:upgraded test) deref) node)))
    :old
    :new))

(defn node-classpath
  "The classpath of node's next start (`node-build`)."
  [test node]
  (case (node-build test node)
    :old (:old-classpath test)
    :new (:classpath test)))

(defn node-command
  "The command line that starts node's process, in its network namespace."
  [test node]
  (let [id (str (net/node-index node))
        data (.getCanonicalPath (io/file (:store test) "data" node))
        java (str (System/getProperty "java.home") "/bin/java")
        jvm [java "-Xmx384m" "-XX:+UseSerialGC" "-XX:TieredStopAtLevel=1" "-Djava.awt.headless=true"
             "-cp" (node-classpath test node)]]
    (concat ["ip" "netns" "exec" (net/netns node)]
            jvm
            ;; Without --tls, --insecure: the nodes' addresses (10.77.0.N, private network
            ;; namespaces) are not loopback. With --tls the cluster file's tls line turns it on.
            (if (= "chirper" (:service test))
              (concat ["io.eyrie.chirper.ChirperMain" "node" "--cluster" (:cluster-file test) "--id" id "--storage" data]
                      (when-not (:tls-dir test) ["--insecure"]))
              (concat ["io.eyrie.jepsen.node.JepsenNode" "--cluster" (:cluster-file test) "--id" id
                       "--service" (:service test) "--data" data]
                      (when-not (:tls-dir test) ["--insecure"])
                      (when (:unsafe-reads? test) ["--unsafe-reads" (str (:unsafe-reads-port test 7300))])
                      (when-let [t (:snapshot-threshold test)] ["--snapshot-threshold" (str t)]))))))

(defn running
  "The nodes whose process is alive (paused ones included)."
  [test]
  (set (keep (fn [[node ^Process p]] (when (.isAlive p) node)) @(:processes test))))

(defn start!
  "Starts a node's process unless it is running."
  [test node]
  (let [procs (:processes test)]
    (locking procs
      (when-not (some-> ^Process (get @procs node) .isAlive)
        (let [log (io/file (:store test) "nodes" (str node ".log"))
              _ (.mkdirs (.getParentFile log))
              build (node-build test node)
              _ (spit log (str "\n=== " (java.time.LocalDateTime/now) " starting " node " on the " (name build)
                               " build\n") :append true)
              p (-> (ProcessBuilder. ^java.util.List (vec (node-command test node)))
                    (.redirectErrorStream true)
                    (.redirectOutput (ProcessBuilder$Redirect/appendTo log))
                    (.start))]
          (swap! procs assoc node p)
          (when-let [b (:builds test)] (swap! b assoc node build))
          node)))))

(defn- signal! [test node sig]
  (when-let [^Process p (get @(:processes test) node)]
    (when (.isAlive p)
      (net/sh! {:may-fail true} "kill" (str "-" sig) (str (.pid p)))
      node)))

(defn kill!
  "SIGKILLs a node's process and waits for it to die."
  [test node]
  (when-let [^Process p (get @(:processes test) node)]
    (when (.isAlive p)
      (signal! test node "CONT")
      (net/sh! {:may-fail true} "kill" "-9" (str (.pid p)))
      (.waitFor p 10 TimeUnit/SECONDS)
      node)))

(defn stop!
  "Stops a node's process: SIGCONT (it may be paused) and SIGTERM, then SIGKILL if it still
  runs after `timeout-s`. Returns :sigterm or :sigkill (how it ended), or nil when it was not
  running."
  [test node timeout-s]
  (when-let [^Process p (get @(:processes test) node)]
    (when (.isAlive p)
      (signal! test node "CONT")
      (signal! test node "TERM")
      (if (.waitFor p (long (* 1000 timeout-s)) TimeUnit/MILLISECONDS)
        :sigterm
        (do (kill! test node) :sigkill)))))

(defn pause! "SIGSTOPs a node's process." [test node] (signal! test node "STOP"))

(defn resume! "SIGCONTs a node's process." [test node] (signal! test node "CONT"))

(defn cluster-config ^ClusterConfig [test]
  (ClusterConfig/load (.toPath (io/file (:cluster-file test)))))

(defn leaders
  "{group-name node-or-nil}: who leads each group, as the Raft servers say."
  [test]
  (into (sorted-map)
        (map (fn [[g id]] [g (when (pos? id) (str "n" id))]))
        (Leaders/of (cluster-config test) 1000 (tls/node test))))

(defn await-leaders!
  "Waits until every group has a leader."
  [test timeout-s]
  (util/await-fn "a leader in every group"
                 (fn [] (let [l (leaders test)] (when (every? some? (vals l)) l)))
                 timeout-s 0.5))

(defn- port-open? [host port]
  (try (with-open [s (java.net.Socket.)]
         (.connect s (java.net.InetSocketAddress. ^String host (int port)) 1000)
         true)
       (catch java.io.IOException _ false)))

(defn await-serving!
  "Waits until node's process runs and accepts connections on its client port (then it
  serves: :serving true), `timeout-s` at most, and then, `leaders-timeout-s` at most, until
  every group has a leader (:leaders true, or the reason it has not). The second wait does not
  decide :serving: another fault may hold a group without a quorum until the nemesis heals it.
  Returns {:serving bool :leaders true-or-reason} or {:serving false :why reason}."
  [test node timeout-s leaders-timeout-s]
  (let [deadline (+ (System/nanoTime) (long (* timeout-s 1e9)))
        ^Process p (get @(:processes test) node)]
    (loop []
      (cond
        (not (and p (.isAlive p))) {:serving false :why "the process is not running"}
        (port-open? (net/ip node) client-port)
        {:serving true
         :leaders (try (await-leaders! test leaders-timeout-s) true
                       (catch Exception e (str "not every group has a leader: " (.getMessage e))))}
        (> (System/nanoTime) deadline) {:serving false :why "the client port never opened"}
        :else (do (Thread/sleep 250) (recur))))))

(defn setup!
  "Starts every node and waits until every group has a leader."
  [test]
  (doseq [node (:nodes test)] (start! test node))
  (let [l (await-leaders! test 120)]
    (util/log "nodes up; leaders" (pr-str l))))

(defn teardown!
  "Kills every node (their logs and data stay in the store)."
  [test]
  (doseq [node (keys @(:processes test))] (kill! test node)))
