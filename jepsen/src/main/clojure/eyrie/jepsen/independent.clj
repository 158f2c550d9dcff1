(ns eyrie.jepsen.independent
  "Jepsen's independent form: many keys, each an independent object, in one history.
  Every client op's value is a tuple [key value] (a read invokes with [k nil], a cas is
  [k [old new]]). Splitting by key gives one ordinary history per key."
  (:require [eyrie.jepsen.history :as h]))

(defn tuple?
  "Is x a [key value] tuple?"
  [x]
  (and (vector? x) (= 2 (count x))))

(defn subhistories
  "Splits an independent history into {key history}: each key's client ops, in order,
  with :value replaced by the tuple's value. Ops keep their original :index. Ops whose
  value is not a tuple (e.g. nemesis ops) belong to no key and are dropped."
  [history]
  (->> (h/ensure-indexed history)
       (filter #(and (h/client-op? %) (tuple? (:value %))))
       (reduce (fn [m op]
                 (let [[k v] (:value op)]
                   (update m k (fnil conj []) (assoc op :value v))))
               {})))

(defn key-order
  "A total order on keys of any types: natural order within a comparable type, else by
  class name, then printed form. Keeps per-key reports deterministic."
  [a b]
  (let [ca (class a), cb (class b)]
    (cond
      (and (= ca cb) (instance? Comparable a)) (compare a b)
      (and (number? a) (number? b))            (compare a b)
      (not= ca cb) (compare (str (some-> ca .getName)) (str (some-> cb .getName)))
      :else        (compare (pr-str a) (pr-str b)))))
