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
