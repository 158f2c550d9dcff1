(ns eyrie.jepsen.probe
  "`bin/jepsen probe-f1`: a directed run of issue 13's F1 schedule on the kv service, checked
  like any kv history. For each of a few keys at partitions led away from the oracle's
  leader: client C reads the key (its cache now says where it is); the oracle leader's node
  stops sending to the key's partition (`net/drop-one-way!`, every node of the partition);
  client A deletes the key; after 400 ms a fresh client B reads it (a consult); then C reads it
  again (its cache sends the read straight to the partition); 1.5 s later the oracle's
  direction is released. With execution atomicity, B's read either waits for the delete or
  sees the key, and C, invoked after B's read returned, cannot see a value B saw deleted.
  F1 lets the oracle finish the delete alone: B sees the key absent, and C, ordered before
  the delete at the partition, returns the old value: not linearizable.

  The ops land in store/probe-f1/<timestamp>/history.edn and are checked by the kv checker
  (results.edn). Exit code: 0 valid, 1 invalid (F1 seen), 4 unknown, 3 setup error."
  (:require [clojure.java.io :as io]
            [clojure.pprint :as pprint]
            [eyrie.jepsen.db :as db]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.nemesis :as nemesis]
            [eyrie.jepsen.net :as net]
            [eyrie.jepsen.util :as util]
            [eyrie.jepsen.workload.kv :as kv])
  (:import (io.eyrie.core Client Command ObjId Reply)
           (io.eyrie.jepsen.node JepsenNode JepsenNode$Read)
           (java.util.concurrent CompletableFuture TimeUnit)))

(defn- oid ^ObjId [k] (ObjId/valueOf (long k)))

(defn- client ^Client [test]
  (-> (Client/newBuilder) (.cluster (db/cluster-config test)) (.service (JepsenNode/clientService)) (.build)))

(defn- op!
  "Runs one op of `process` and records its invocation and completion in `hist`. `f` returns
  the completion's [type value]; an exception or a 20 s wait makes it :info."
  [hist t0 process f k value run]
  (let [now #(- (System/nanoTime) t0)]
    (swap! hist conj {:process process :type :invoke :f f :value [k value] :time (now)})
    (let [[type v] (try (run) (catch Exception e [:info value]))]
      (swap! hist conj {:process process :type type :f f :value [k v] :time (now)})
      [type v])))

(defn- reply ^Reply [^CompletableFuture fut] (.get fut 20 TimeUnit/SECONDS))

(defn- read-op [^Client c k]
  (fn [] (let [r (reply (.sendAccess c (Command/access (JepsenNode$Read.) ^"[Lio.eyrie.core.ObjId;" (into-array ObjId [(oid k)]))))]
           [:ok (when (.isOk r) (.value r))])))

(defn- round!
  "One try of the schedule on key k (at partition p, the oracle led on node ol); processes are
  numbered from `base`. B's reads are fresh clients fired every 100 ms (one that consults
  before the oracle has executed the delete waits at the partition); C reads as soon as one
  of them has returned nil."
  [test hist t0 ^Client c k p ol pl base]
  (let [to (nemesis/hold-targets test p ol pl)
        ports [db/raft-port db/client-port]
        clients (atom [])
        fresh (fn [] (let [x (client test)] (swap! clients conj x) x))]
    ;; Skeen orders C's read before the delete at p only when the oracle's timestamp for the
    ;; delete is above p's clock: creates and deletes of scratch keys, most of them at other
    ;; partitions, move the oracle's clock ahead of p's.
    (let [x (fresh)]
      (doseq [j (range 12)
              :let [s (+ 1000 (* 100 base) j)]]
        (op! hist t0 1 :create s 1 (fn [] [(if (.isOk (reply (.sendCreate x (Command/create (oid s) (long 1))))) :ok :fail) 1]))
        (op! hist t0 1 :delete s nil (fn [] [(if (.isOk (reply (.sendDelete x (Command/delete (oid s) nil)))) :ok :fail) nil]))))
    (op! hist t0 base :read k nil (read-op c k))
    (doseq [n to] (net/drop-one-way! test ol n ports))
    (try
      (let [a (fresh)
            del (future (op! hist t0 (+ base 1) :delete k nil
                             (fn [] [(if (.isOk (reply (.sendDelete a (Command/delete (oid k) nil)))) :ok :fail) nil])))
            deadline (+ (System/currentTimeMillis) 1800)
            bs (loop [i 0, bs []]
                 (Thread/sleep 100)
                 (if (or (some #(and (realized? %) (= [:ok nil] @%)) bs) (< deadline (System/currentTimeMillis)))
                   bs
                   (let [b (fresh)]
                     (recur (inc i) (conj bs (future (op! hist t0 (+ base 2 i) :read k nil (read-op b k))))))))
            late (future (op! hist t0 base :read k nil (read-op c k)))]
        (Thread/sleep 1000)
        (doseq [n to] (net/allow-one-way! test ol n ports))
        @del @late (doseq [b bs] @b))
      (finally
        (doseq [n to] (net/allow-one-way! test ol n ports))
        (doseq [^Client x @clients] (.close x))))))

(defn f1!
  "Runs the probe; returns the exit code."
  [{:keys [store-root] :or {store-root "store"}}]
  (let [dir (io/file store-root "probe-f1" (str (System/currentTimeMillis)))
        _ (.mkdirs (io/file dir "nodes"))
        test (db/prepare {:name "probe-f1" :nodes (mapv #(str "n" %) (range 1 6)) :service "kv"
                          :store (.getCanonicalPath dir) :classpath (System/getProperty "java.class.path")})
        hist (atom [])
        t0 (System/nanoTime)]
    (net/setup! test)
    (try
      (db/setup! test)
      (with-open [x (client test) c (client test)]
        (doseq [k (range 1 9)]
          (op! hist t0 0 :create k (* 10 k)
               (fn [] [(if (.isOk (reply (.sendCreate x (Command/create (oid k) (long (* 10 k)))))) :ok :fail) (* 10 k)])))
        (let [leaders (db/leaders test)
              ol (get leaders "oracle")
              ;; C's first read fills its cache; keys whose partition is led on the oracle
              ;; leader's node cannot be held apart from it
              at (into {} (for [k (range 1 9)] (do (reply (.sendAccess c (Command/access (JepsenNode$Read.) ^"[Lio.eyrie.core.ObjId;" (into-array ObjId [(oid k)]))))
                                                   [k (str (.cachedLocation c (oid k)))])))
              ks (filterv #(not= ol (get leaders (at %))) (range 1 9))]
          (util/log "probe-f1: leaders" (pr-str leaders) "keys held away from the oracle's leader" (pr-str (select-keys at ks)))
          (doseq [[i k] (map-indexed vector ks)]
            ;; leaders move under the holds: hold from the oracle's leader of the moment
            (let [leaders (db/leaders test)
                  ol (get leaders "oracle")
                  pl (get leaders (at k))]
              (if (or (nil? ol) (nil? pl) (= ol pl))
                (util/log "probe-f1: key" k "skipped: its partition is led on the oracle leader's node")
                (try (round! test hist t0 c k (at k) ol pl (* 100 (inc i)))
                     (catch Exception e (util/log "probe-f1: key" k "failed:" e))))))))
      (finally (db/teardown! test) (net/teardown! test)))
    (let [history (h/index (sort-by :time @hist))
          results (kv/checker {} history {})]
      (h/write-history! (io/file dir "history.edn") history)
      (with-open [w (io/writer (io/file dir "results.edn"))] (pprint/pprint results w))
      (util/log "probe-f1: valid?" (:valid? results) "failures" (pr-str (:failures results)) "—" (.getPath dir))
      (cond (true? (:valid? results)) 0 (false? (:valid? results)) 1 :else 4))))
