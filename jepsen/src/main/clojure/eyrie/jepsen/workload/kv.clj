(ns eyrie.jepsen.workload.kv
  "The kv workload: per-key create, delete, read, write and compare-and-set on the jepsen node's
  kv service (`JepsenNode.KvServer`), in Jepsen's independent form: `create [k v]`,
  `delete [k nil]`, `read [k nil]`, `write [k v]`, `cas [k [old new]]`. Keys are created and
  deleted with DS-SMR's own create and delete commands, so the oracle's map, consults and the
  partitions' objects all take part; every key starts absent. Some reads, writes and cas name a
  :partner, one of a few anchor keys that exist for the whole test and are never checked (ids
  from 1000000): the command then touches both keys, so the client proxy gathers them into one
  partition first (a move).

  How the library's answers become history ops (the library decides them before the service
  runs; see `JepsenNode.KvServer`):
  - create: ok -> :ok; EXISTS -> :fail :exists; REFUSED -> :fail [:refused reason].
  - delete: ok -> :ok; NOT_FOUND (the key was absent) -> :fail. The model needs the key to
    exist for a delete to succeed (strict delete).
  - read: ok -> :ok with the value; NOT_FOUND naming the key -> :ok with nil (the key was
    absent); any other refusal (e.g. a missing partner) -> :fail (a read that did not happen
    constrains nothing).
  - write, cas: nok (absent) -> :fail; a cas that finds another value -> :fail :mismatch.
  - a timeout (`--op-timeout-ms`) or any exception -> :info: it may take effect later or never.

  Deliberate application failures (`--failing-creates`, `--throwing-writes`; both off by
  default, and then nothing here changes): one create in five (`:faulty-share`, 0.2) sends a
  `FailingCreate`, whose `createObject` throws on every replica, with a value of 100-109; one
  write in five sends a `ThrowingWrite`, which sets the key to a value of 200-209 and then
  throws. Such ops carry `:faulty true`. No ordinary op writes those values, so a read of one
  means a failed op took effect. The library must refuse the create (REFUSED, nothing created)
  and undo the write (the client gets a `MulticastException`): both are :fail, did not happen.
  Since every replica fails them alike, a faulty op can never take effect, so its other
  outcomes are :fail too: a timeout or any exception ([:timeout :never-applies] ...) asks the
  checker to verify that no faulty op ever took effect, even one whose answer was lost.
  (Elsewhere a MulticastException stays :info, as without the options.)

  Checker: per-key linearizability (`eyrie.jepsen.linearizability`, WGL) against
  `eyrie.jepsen.models/kv-register`: a register that may be absent. :fail ops are dropped, so a
  refused create must leave the key absent (a later read of nil, a later create ok) and a
  throwing write the old value. With `--failing-creates` the checker also takes each create
  answered EXISTS as an observation that the key exists (`exists-observations`): a refused
  create that left the key behind in the oracle's map but on no partition would answer later
  reads NOT_FOUND (nil) and later creates EXISTS, which is otherwise a :fail that constrains
  nothing."
  (:require [clojure.string :as str]
            [eyrie.jepsen.client :as client]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.models :as models]
            [eyrie.jepsen.util :as util]
            [eyrie.jepsen.workload.register :as register])
  (:import (io.eyrie.core Client Command ObjId Reply Reply$Status)
           (io.eyrie.jepsen.node JepsenNode$Cas JepsenNode$FailingCreate JepsenNode$Keyed JepsenNode$Read
                                 JepsenNode$ThrowingWrite JepsenNode$Write)
           (io.eyrie.multicast MulticastException)
           (java.util Random)
           (java.util.concurrent CompletableFuture ExecutionException TimeUnit TimeoutException)))

(def anchor-base
  "The first anchor key's id: anchors are never checked and never deleted."
  1000000)

(defn anchors
  "The anchor keys of a test (`:anchor-count`, default 4)."
  [test]
  (mapv #(+ anchor-base %) (range (:anchor-count test 4))))

(def failing-create-base
  "Faulty creates (`--failing-creates`) carry values from here (100-109): no key ever holds one."
  100)

(def throwing-write-base
  "Throwing writes (`--throwing-writes`) carry values from here (200-209): no key may keep one."
  200)

(defn- oid ^ObjId [k] (ObjId/valueOf (long k)))

(defn- wait!
  "Waits up to the test's :op-timeout-ms for a reply; throws TimeoutException when it takes
  longer."
  ^Reply [^CompletableFuture f test]
  (try (.get f (long (:op-timeout-ms test 5000)) TimeUnit/MILLISECONDS)
       (catch ExecutionException e (throw (or (.getCause e) e)))))

(defn- access
  "The access command for op on key k, naming `partner` too when given."
  ^Command [k op partner]
  (if partner
    (Command/access (JepsenNode$Keyed. (long k) op) ^"[Lio.eyrie.core.ObjId;" (into-array ObjId [(oid k) (oid partner)]))
    (Command/access op ^"[Lio.eyrie.core.ObjId;" (into-array ObjId [(oid k)]))))

(defn- not-found?
  "Did Eyrie answer that key k does not exist?"
  [^Reply r k]
  (and (= Reply$Status/NOT_FOUND (.status r)) (= (oid k) (.object r))))

(defn- service-error?
  "Did the service answer its error string (it changed nothing)?"
  [v]
  (and (string? v) (.startsWith ^String v "error: ")))

(defn- create-failure
  "The :fail completion of a create that Eyrie answered with something other than ok: the key
  exists (:exists), the service could not make the object ([:refused reason]), or another status."
  [op ^Reply r]
  (condp = (.status r)
    Reply$Status/EXISTS (assoc op :type :fail :error :exists)
    Reply$Status/REFUSED (assoc op :type :fail :error [:refused (.reason r)])
    (assoc op :type :fail :error [(keyword (str/lower-case (str (.status r)))) (.reason r)])))

(defrecord KvClient [^Client proxy]
  client/Client
  (open! [_ test _node] (->KvClient (register/eyrie-client test)))

  (setup! [_ test]
    ;; Only the anchors exist before the run; checked keys start absent, like the model.
    (util/log "creating" (count (anchors test)) "anchor keys")
    (doseq [a (anchors test)]
      (util/await-fn (str "anchor " a " created")
                     (fn [] (let [^Reply r (try (.get (.sendCreate proxy (Command/create (oid a) (long 0)))
                                                      10 TimeUnit/SECONDS)
                                                (catch TimeoutException _ nil))]
                              (and r (or (.isOk r) (re-find #"(?i)exist" (str (.reason r)))))))
                     60)))

  (invoke! [_ test op]
    (let [[k v] (:value op)
          partner (:partner op)
          faulty? (boolean (:faulty op))]
      (try
        (case (:f op)
          :create (let [r (wait! (.sendCreate proxy (Command/create (oid k) (if faulty?
                                                                               (JepsenNode$FailingCreate. (long v))
                                                                               (long v))))
                                 test)]
                    (if (.isOk r)
                      (assoc op :type :ok)
                      (create-failure op r)))
          :delete (let [r (wait! (.sendDelete proxy (Command/delete (oid k) nil)) test)]
                    (cond (.isOk r) (assoc op :type :ok)
                          (not-found? r k) (assoc op :type :fail :error :absent)
                          :else (assoc op :type :fail :error (.reason r))))
          :read (let [r (wait! (.sendRead proxy (access k (JepsenNode$Read.) partner)) test)]
                  (cond (and (.isOk r) (service-error? (.value r))) (assoc op :type :fail :error (.value r))
                        (.isOk r) (assoc op :type :ok :value [k (.value r)])
                        (not-found? r k) (assoc op :type :ok :value [k nil] :absent true)
                        :else (assoc op :type :fail :error :absent)))
          :write (let [r (wait! (.sendAccess proxy (access k (if faulty?
                                                               (JepsenNode$ThrowingWrite. (long v))
                                                               (JepsenNode$Write. (long v)))
                                                           partner))
                                test)]
                   (cond (not (.isOk r)) (assoc op :type :fail :error :absent)
                         (service-error? (.value r)) (assoc op :type :fail :error (.value r))
                         :else (assoc op :type :ok)))
          :cas (let [[old new] v
                     r (wait! (.sendAccess proxy (access k (JepsenNode$Cas. (long old) (long new)) partner)) test)]
                 (cond (not (.isOk r)) (assoc op :type :fail :error :absent)
                       (true? (.value r)) (assoc op :type :ok)
                       (false? (.value r)) (assoc op :type :fail :error :mismatch)
                       :else (assoc op :type :fail :error (.value r)))))
        (catch MulticastException e
          ;; Definite: the cluster answered that the command failed (a throwing write's
          ;; exception; its write was undone).
          (if faulty? (assoc op :type :fail :error [:threw (.getMessage e)]) (throw e)))
        (catch TimeoutException _
          (if faulty?
            (assoc op :type :fail :error [:timeout :never-applies])
            (assoc op :type :info :error :timeout)))
        (catch Exception e
          ;; A faulty op fails on every replica: whatever the client saw, it cannot have taken
          ;; effect. Any other op's exception stays the runner's :info.
          (if faulty? (assoc op :type :fail :error [:never-applies (str e)]) (throw e))))))

  (teardown! [_ _])
  (close! [_ _] (register/close-proxy! proxy)))

(defn- op-gen
  "Ops on one key, delete-heavy: create 20%, delete 15%, read 40%, write 10%, cas 15% (by
  default; `:kv-mix` overrides, a map f -> weight). Values are small so cas often matches; a
  share of reads, writes and cas (`:move-share`, 0.2) names an anchor as partner (a move).
  With `:failing-creates?` a share (`:faulty-share`, 0.2) of creates are faulty (the node
  refuses them; values 100-109), with `:throwing-writes?` that share of writes (the node
  writes, then throws; values 200-209). Without them the rng is drawn exactly as before."
  [test ^Random rng]
  (let [mix (:kv-mix test {:create 20 :delete 15 :read 40 :write 10 :cas 15})
        failing? (boolean (:failing-creates? test))
        throwing? (boolean (:throwing-writes? test))
        faulty-share (double (:faulty-share test 0.2))
        faulty? (fn [on?] (and on? (< (.nextDouble rng) faulty-share)))
        fs (vec (sort (keys mix)))
        total (reduce + (vals mix))
        move-share (:move-share test 0.2)
        as (anchors test)
        value #(long (.nextInt rng 10))]
    (fn []
      (let [x (.nextInt rng (int total))
            f (loop [[f & more] fs, acc 0]
                (let [acc (+ acc (mix f))] (if (or (< x acc) (empty? more)) f (recur more acc))))
            op (case f
                 :create (if (faulty? failing?)
                           {:f :create :value (+ failing-create-base (value)) :faulty true}
                           {:f :create :value (value)})
                 :delete {:f :delete :value nil}
                 :read {:f :read :value nil}
                 :write (if (faulty? throwing?)
                          {:f :write :value (+ throwing-write-base (value)) :faulty true}
                          {:f :write :value (value)})
                 :cas {:f :cas :value [(value) (value)]})]
        (if (and (#{:read :write :cas} f) (seq as) (< (.nextDouble rng) move-share))
          (assoc op :partner (nth as (.nextInt rng (count as))))
          op)))))

(defn generator
  "Independent per-key ops, four threads a key, 100 ops a key (see
  `register/per-key-generator`)."
  [test]
  (register/per-key-generator test op-gen 4 100))

(defn final-generator
  "After the faults heal: one read of every key."
  [test]
  (register/final-generator test))

(defn exists-observations
  "The history with every create answered EXISTS (a :fail create with :error :exists) turned
  into an ok `:exists` op, its invocation and completion alike: the create changed nothing, but
  it saw the key exist at some point between the two (`eyrie.jepsen.models/kv-register`'s
  :exists needs the key present). Other ops are unchanged; indices are kept."
  [history]
  (let [history (h/ensure-indexed history)
        pi (h/pair-index history)
        rewrite (into #{}
                      (comp (filter #(and (h/fail? %) (= :create (:f %)) (= :exists (:error %))))
                            (mapcat (fn [c] [(:index c) (:index (pi (:index c)))])))
                      history)]
    (mapv (fn [op]
            (if (rewrite (:index op))
              (cond-> (assoc op :f :exists) (not (h/invoke? op)) (assoc :type :ok))
              op))
          history)))

(defn checker
  "Per-key linearizability against a register that may be absent, plus counts. With
  `:failing-creates?`, creates answered EXISTS are checked as observations that the key
  exists (`exists-observations`)."
  [test history _opts]
  (register/check-per-key test (models/kv-register {:strict-delete? true})
                          (cond-> (filterv h/client-op? history)
                            (:failing-creates? test) exists-observations)))

(defn workload
  "The kv workload for `test`."
  [test]
  {:client (->KvClient nil)
   :generator (generator test)
   :final-generator (final-generator test)
   :checker checker})
