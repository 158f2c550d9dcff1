(ns eyrie.jepsen.models
  "Pure, single-threaded models of the systems under test. A model is a value; `step`
  applies one completed operation and returns either the next model or an
  `Inconsistent` value explaining why the op could not have happened in this state.
  Models must implement value equality and hashing (records do): the linearizability
  search memoizes on them.")

(defprotocol Model
  (step [model op]
    "Applies op (a map with :f and :value; for reads the value that was read) to the
    model. Returns the next model, or an Inconsistent when op is impossible here."))

(defprotocol PureOps
  (pure-op? [model op]
    "True when op can never change any state of this model: in every state, stepping
    it returns an equal model or an inconsistency (e.g. a register read). The
    linearizability search linearizes such ops eagerly and drops indeterminate ones.
    Models that don't extend this protocol have no pure ops."))

(extend-protocol PureOps
  Object
  (pure-op? [_ _] false))

(defrecord Inconsistent [msg])

(defn inconsistent
  "An inconsistency with a human-readable message."
  [msg]
  (->Inconsistent msg))

(defn inconsistent?
  "Is x an inconsistency (rather than a model)?"
  [x]
  (instance? Inconsistent x))

(defrecord CASRegister [value]
  Model
  (step [this op]
    (let [v (:value op)]
      (case (:f op)
        :write (if (= v value) this (->CASRegister v))
        :cas   (if (and (sequential? v) (= 2 (count v)))
                 (let [[old new] v]
                   (cond (not= old value) (inconsistent (str "can't CAS " (pr-str value)
                                                             " from " (pr-str old)
                                                             " to " (pr-str new)))
                         (= new value)    this
                         :else            (->CASRegister new)))
                 (inconsistent (str "malformed :cas value " (pr-str v))))
        :read  (if (= v value)
                 this
                 (inconsistent (str "can't read " (pr-str v) " from register "
                                    (pr-str value))))
        (inconsistent (str "cas-register has no op " (pr-str (:f op)))))))

  PureOps
  (pure-op? [_ op]
    (case (:f op)
      :read true
      :cas  (let [v (:value op)]
              (and (sequential? v) (= 2 (count v)) (= (first v) (second v))))
      false)))

(defn cas-register
  "A compare-and-set register, initially nil (or `value`). Ops:
    :read        value is the value read (an ok read of nil means the register was nil)
    :write v     sets the register to v
    :cas [old new]  sets it to new if it holds old, else the op is inconsistent."
  ([] (cas-register nil))
  ([value] (->CASRegister value)))

(defrecord KVRegister [value strict-delete?]
  ;; value: the key's value, nil while the key is absent (values of existing keys are never nil)
  Model
  (step [this op]
    (let [v (:value op)
          absent? (nil? value)]
      (case (:f op)
        :create (cond (not absent?) (inconsistent (str "can't create: the key exists with "
                                                       (pr-str value)))
                      (nil? v)      (inconsistent "can't create with the value nil")
                      :else         (assoc this :value v))
        :delete (if (and absent? strict-delete?)
                  (inconsistent "can't delete: the key is absent")
                  (if absent? this (assoc this :value nil)))
        :read   (if (= v value)
                  this
                  (inconsistent (str "can't read " (pr-str v) " from "
                                     (if absent? "an absent key" (str "a key holding " (pr-str value))))))
        :exists (if absent?
                  (inconsistent "a create found the key existing, but it is absent")
                  this)
        :write  (cond absent?  (inconsistent (str "can't write " (pr-str v) " to an absent key"))
                      (nil? v) (inconsistent "can't write nil")
                      :else    (assoc this :value v))
        :cas    (if (and (sequential? v) (= 2 (count v)))
                  (let [[old new] v]
                    (cond absent?           (inconsistent (str "can't CAS an absent key from "
                                                               (pr-str old) " to " (pr-str new)))
                          (not= old value)  (inconsistent (str "can't CAS " (pr-str value)
                                                               " from " (pr-str old)
                                                               " to " (pr-str new)))
                          :else             (assoc this :value new)))
                  (inconsistent (str "malformed :cas value " (pr-str v))))
        (inconsistent (str "kv-register has no op " (pr-str (:f op)))))))

  PureOps
  (pure-op? [_ op]
    (case (:f op)
      :read   true
      :exists true
      :cas    (let [v (:value op)]
                (and (sequential? v) (= 2 (count v)) (= (first v) (second v))))
      false)))

(defn kv-register
  "A register that may be absent (a key of a key-value store), initially absent. Ops:
    :create v       needs the key absent; it then holds v (v is never nil)
    :delete         makes the key absent. By default a delete of an absent key is fine too
                    (Eyrie's delete answers ok whether or not the object existed, so an ok
                    delete says only that the key is absent afterwards); with
                    {:strict-delete? true} it needs the key to exist
    :read           value is the value read; nil means the key was absent
    :write v        needs the key to exist; sets it to v
    :cas [old new]  needs the key to exist and hold old; sets it to new
    :exists         needs the key to exist; changes nothing (a create that found the key:
                    see `eyrie.jepsen.workload.kv/exists-observations`)."
  ([] (kv-register {}))
  ([{:keys [strict-delete? value]}] (->KVRegister value (boolean strict-delete?))))
