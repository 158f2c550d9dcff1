(ns eyrie.jepsen.workload.register
  "The register workload: per-key read, write and compare-and-set on `Register` objects of the
  jepsen node's register service, in Jepsen's independent form ([k v]; cas [k [old new]]).
  Some ops name a :partner key: the command then also touches that register, which forces the
  client proxy to gather both into one partition (a move) before it executes.

  Checker: per-key linearizability against a cas-register (`eyrie.jepsen.linearizability`).

  Positive control: with the test's :unsafe-reads? set, reads skip the ordered path and ask
  one node's HTTP endpoint for the last value its replicas applied (see JepsenNode's
  --unsafe-reads); under partitions and pauses such reads come out stale, and the checker must
  say invalid."
  (:require [eyrie.jepsen.client :as client]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.linearizability :as lin]
            [eyrie.jepsen.models :as models]
            [eyrie.jepsen.tls :as tls]
            [eyrie.jepsen.util :as util])
  (:import (io.eyrie.core Client Client$Mode Command ObjId Reply)
           (io.eyrie.jepsen.node JepsenNode JepsenNode$Cas JepsenNode$Keyed JepsenNode$Read
                                 JepsenNode$Write)
           (io.eyrie.multicast ClusterConfig)
           (java.net URI)
           (java.net.http HttpClient HttpRequest HttpResponse$BodyHandlers)
           (java.time Duration)
           (java.util.concurrent CompletableFuture ExecutionException TimeUnit TimeoutException)))

(defn cluster-config
  "The test's cluster: :cluster-config (a ClusterConfig) or loaded from :cluster-file."
  ^ClusterConfig [test]
  (or (:cluster-config test)
      (ClusterConfig/load (.toPath (java.io.File. ^String (:cluster-file test))))))

(defn client-mode
  "The client proxies' mode: DS-SMR (moves), or S-SMR (--mode ssmr: multi-partition commands
  run on every partition they touch, exchanging values)."
  ^Client$Mode [test]
  (if (= :ssmr (:client-mode test)) Client$Mode/SSMR Client$Mode/DSSMR))

(defn eyrie-client
  "A client proxy for the test's cluster with the jepsen node's registrations."
  ^Client [test]
  (-> (Client/newBuilder)
      (.cluster (cluster-config test))
      (.service (JepsenNode/clientService))
      (.mode (client-mode test))
      (.tls (tls/client test))
      (.build)))

(defn call!
  "Sends `cmd` as a create (`how` true), a read (:read: Client.sendRead, which a partition's
  leader may serve without a log entry) or an access (false), waits up to the test's
  :op-timeout-ms. Returns the Reply; throws TimeoutException when it takes longer."
  ^Reply [^Client c test ^Command cmd how]
  (let [^CompletableFuture f (case how
                               true (.sendCreate c cmd)
                               :read (.sendRead c cmd)
                               (.sendAccess c cmd))]
    (try (.get f (long (:op-timeout-ms test 5000)) TimeUnit/MILLISECONDS)
         (catch ExecutionException e (throw (or (.getCause e) e))))))

(defn log-proxy!
  "Logs how many of a client proxy's reads the partitions served off the log (the rest went
  through the log: a partition busy with the object, or a failed query), and how many moves and
  multi-partition (S-SMR) executions its commands took."
  [^Client c]
  (let [s (.stats c)]
    (when (pos? (.commands s))
      (util/log "client proxy:" (.commands s) "commands," (.reads s) "reads served off the log,"
                (.moves s) "moves," (.multiPartition s) "S-SMR executions"))))

(defn close-proxy!
  "Closes a client proxy, logging its counts first."
  [^Client c]
  (when c
    (log-proxy! c)
    (.close c)))

(defn- oid ^ObjId [k] (ObjId/valueOf (long k)))

(defn- command
  "The access command for register op `op` on key `k`, with the op's :partner if any."
  ^Command [k op partner]
  (if (and partner (not= partner k))
    (Command/access (JepsenNode$Keyed. (long k) op) ^"[Lio.eyrie.core.ObjId;" (into-array ObjId [(oid k) (oid partner)]))
    (Command/access op ^"[Lio.eyrie.core.ObjId;" (into-array ObjId [(oid k)]))))

(def ^:private ^HttpClient http
  (delay (-> (HttpClient/newBuilder) (.connectTimeout (Duration/ofSeconds 2)) (.build))))

(defn- unsafe-read
  "Reads key k from one node's unsafe endpoint."
  [test node k]
  (let [host (get (:ips test) node "127.0.0.1")
        port (:unsafe-reads-port test 7300)
        req (-> (HttpRequest/newBuilder (URI. (str "http://" host ":" port "/read?k=" k)))
                (.timeout (Duration/ofMillis (long (:op-timeout-ms test 5000))))
                (.build))
        body (str (.body (.send ^HttpClient @http req (HttpResponse$BodyHandlers/ofString))))]
    (if (= "nil" body) nil (Long/parseLong body))))

(defn- replica-node
  "A random node holding a replica of the partition where this client last saw key k (any
  node when it has not seen k yet)."
  [test ^Client proxy k]
  (if-let [g (.cachedLocation proxy (oid k))]
    (str "n" (rand-nth (vec (.members (.group (cluster-config test) g)))))
    (rand-nth (:nodes test))))

(defrecord RegisterClient [^Client proxy node]
  client/Client
  (open! [_ test node] (->RegisterClient (eyrie-client test) node))

  (setup! [_ test]
    ;; Every key starts as nil, like the model. Creation is retried until it answers: a create
    ;; that timed out may have happened, and then the retry says the object exists.
    (let [keys (range (:key-count test 50))]
      (util/log "creating" (count keys) "registers")
      (doseq [batch (partition-all 16 keys)]
        (let [futs (mapv (fn [k] [k (.sendCreate proxy (Command/create (oid k) nil))]) batch)]
          (doseq [[k ^CompletableFuture f] futs]
            (util/await-fn (str "register " k " created")
                           (fn [] (let [^Reply r (try (.get f 10 TimeUnit/SECONDS)
                                                        (catch TimeoutException _
                                                          (.get (.sendCreate proxy (Command/create (oid k) nil))
                                                                10 TimeUnit/SECONDS)))]
                                    (or (.isOk r) (re-find #"(?i)exist" (str (.reason r)))
                                        (throw (ex-info (str "create " k ": " (.reason r)) {})))))
                           60))))))

  (invoke! [_ test op]
    (let [[k v] (:value op)
          partner (:partner op)]
      (try
        (case (:f op)
          :read (if (:unsafe-reads? test)
                  (assoc op :type :ok :value [k (unsafe-read test (replica-node test proxy k) k)])
                  (let [r (call! proxy test (command k (JepsenNode$Read.) partner) :read)]
                    (if (.isOk r)
                      (assoc op :type :ok :value [k (.value r)])
                      (assoc op :type :fail :error (.reason r)))))
          :write (let [r (call! proxy test (command k (JepsenNode$Write. (long v)) partner) false)]
                   (if (.isOk r)
                     (assoc op :type :ok)
                     (assoc op :type :fail :error (.reason r))))
          :cas (let [[old new] v
                     r (call! proxy test (command k (JepsenNode$Cas. (long old) (long new)) partner) false)]
                 (cond (not (.isOk r)) (assoc op :type :fail :error (.reason r))
                       (true? (.value r)) (assoc op :type :ok)
                       :else (assoc op :type :fail :error :mismatch))))
        (catch TimeoutException _
          (assoc op :type :info :error :timeout))
        (catch java.io.IOException e
          ;; the unsafe endpoint could not be reached: a read that did not happen
          (assoc op :type :fail :error (str "unreachable: " (.getMessage e)))))))

  (teardown! [_ _])
  (close! [_ _] (close-proxy! proxy)))

(defn- op-gen
  "Ops on one key: reads, writes and cas with small values (so cas often succeeds); a share
  of them names a partner key (forces a move)."
  [test rng]
  (let [key-count (:key-count test 50)
        move-share (:move-share test 0.1)]
    (fn []
      (let [r (.nextDouble ^java.util.Random rng)
            op (cond (< r 0.4) {:f :read}
                     (< r 0.7) {:f :write :value (.nextInt ^java.util.Random rng 5)}
                     :else {:f :cas :value [(.nextInt ^java.util.Random rng 5) (.nextInt ^java.util.Random rng 5)]})]
        (if (< (.nextDouble ^java.util.Random rng) move-share)
          (assoc op :partner (.nextInt ^java.util.Random rng (int key-count)))
          op)))))

(defn per-key-generator
  "Independent per-key ops (the register and kv workloads): client threads in groups of
  `:threads-per-key` (default `threads`), each group on one key for `:ops-per-key` (default
  `ops`) ops drawn from `(op-gen test rng)`, then the next key (cycling over `:key-count`)."
  [test op-gen threads ops]
  (let [rng (java.util.Random. (long (:seed test 1)))
        key-count (:key-count test 50)
        per-key (:ops-per-key test ops)]
    (gen/independent-concurrent-generator
      (:threads-per-key test threads)
      (clojure.core/cycle (range key-count))
      (fn [_k] (gen/limit per-key (op-gen test rng))))))

(defn generator
  "Independent per-key ops, two threads a key, 60 ops a key (see `per-key-generator`)."
  [test]
  (per-key-generator test op-gen 2 60))

(defn final-generator
  "After the faults heal: one read of every key (the register and kv workloads)."
  [test]
  (map (fn [k] {:f :read :value [k nil]}) (range (:key-count test 50))))

(defn check-per-key
  "Checks `client-ops` per key against `model` within the test's `:check-time-limit-ms`
  (30 s by default). The result keeps only the keys that are not valid, in key order, and
  counts the keys checked in `:keys-checked`."
  [test model client-ops]
  (let [result (lin/check-independent model client-ops
                                      {:time-limit-ms (:check-time-limit-ms test 30000)})]
    (-> result
        (update :results (fn [rs] (into (sorted-map)
                                        (keep (fn [[k r]] (when (not= true (:valid? r)) [k r])))
                                        rs)))
        (assoc :keys-checked (count (:results result))))))

(defn checker
  "Per-key linearizability (cas-register), plus op counts."
  [test history _opts]
  (check-per-key test (models/cas-register) (filterv h/client-op? history)))

(defn workload
  "The register workload for `test`."
  [test]
  {:client (->RegisterClient nil nil)
   :generator (generator test)
   :final-generator (final-generator test)
   :checker checker})
