(ns eyrie.jepsen.embedded
  "An in-process cluster for `--db embedded`: 3 nodes, 2 partitions and the oracle, hosting the
  test's service on loopback. No network namespaces and no faults; used to check a workload and
  its checker end to end quickly (and by the default build's tests). With --tls (:tls-dir set
  by `eyrie.jepsen.tls/write-certs!`), the cluster runs mutual TLS on both ports."
  (:import (io.eyrie.jepsen.node JepsenNode)
           (io.eyrie.multicast EmbeddedCluster)
           (java.time Duration)))

(defn start!
  "Starts the cluster for the test's :service (register, kv or bank) and waits for its leaders."
  ^EmbeddedCluster [test]
  (let [app (case (:service test)
              ("register" "kv" "bank") (JepsenNode/service ^String (:service test))
              (throw (ex-info (str "--db embedded hosts register, kv or bank, not " (:service test)) {:usage true})))
        cluster (-> (EmbeddedCluster/newBuilder) (.nodes 3) (.partitions 2) (.oracle true)
                    (.app app)
                    (.tls (when-let [d (:tls-dir test)] (java.nio.file.Paths/get d (make-array String 0))))
                    (.start))]
    (.awaitLeaders cluster (Duration/ofSeconds 60))
    cluster))
