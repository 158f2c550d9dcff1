(ns eyrie.jepsen.linearizability
  "Linearizability checking by the Wing & Gong search as refined by Lowe (WGL).

  The history's calls and returns form a doubly-linked list in history order. The
  search linearizes ops one at a time: it scans the list from the front for a call
  (an op that may take effect now: every op that returned before it was invoked is
  already linearized), applies it to the model, unlinks its call and return, and starts
  over; on reaching a return whose op is not linearized it backtracks. Configurations
  (set of linearized ops as a bitset, model state) already explored are memoized, so
  each is searched once. The scan order is history order: the search is deterministic.

  - :fail ops are dropped: they did not happen.
  - :info ops (and invocations that never completed) have no return: they may be
    linearized at any point after their invocation, or never. Indeterminate ops that
    are pure for the model (e.g. reads) constrain nothing and are dropped.
  - Pure ok ops (see `eyrie.jepsen.models/pure-op?`) are linearized eagerly when they
    fit: if a configuration has an answer it has one that takes them first.
  - A time budget bounds the search; when it runs out the answer is :unknown.

  Results look like Knossos': {:valid? true|false|:unknown ...}; an invalid result names
  the op that could not be linearized (:op, its completion) and the configurations that
  got furthest: the model states and in-flight ops just before that op's return."
  (:require [eyrie.jepsen.history :as h]
            [eyrie.jepsen.independent :as independent]
            [eyrie.jepsen.models :as m])
  (:import (java.util BitSet HashSet)))

(set! *warn-on-reflection* true)

(def default-time-limit-ms
  "Default search budget per (sub)history."
  60000)

;; ---------------------------------------------------------------------------
;; Preparing the history

(defn- call-op
  "The op as the model sees it: the invocation, with an ok completion's value (an ok
  read carries the value read)."
  [inv comp]
  (if (and comp (h/ok? comp) (contains? comp :value))
    (assoc inv :value (:value comp))
    inv))

(defn- calls
  "The ops the search must place: ok ops (must be linearized) and impure indeterminate
  ops (may be). Each is {:op model-op, :invoke op, :complete op-or-nil, :ok? bool}."
  [model history]
  (into []
        (keep (fn [[inv comp]]
                (cond
                  (and comp (h/fail? comp)) nil
                  (and comp (h/ok? comp))   {:op (call-op inv comp), :invoke inv,
                                             :complete comp, :ok? true}
                  (m/pure-op? model inv)    nil
                  :else                     {:op inv, :invoke inv, :complete comp,
                                             :ok? false})))
        (h/pairs history)))

(defn- problem
  "Builds the search's arrays. Entries 1..e are calls and returns in history order;
  0 is the head sentinel and e+1 the tail."
  [model history]
  (let [cs     (calls model history)
        n      (count cs)
        events (sort-by first
                        (concat (map-indexed (fn [i c] [(:index (:invoke c)) i false]) cs)
                                (keep-indexed (fn [i c] (when (:ok? c)
                                                          [(:index (:complete c)) i true]))
                                              cs)))
        e      (count events)
        tail   (inc e)
        nxt    (int-array (+ e 2))
        prv    (int-array (+ e 2))
        eop    (int-array (+ e 2) -1)
        eret   (boolean-array (+ e 2))
        ret-of (int-array n -1)]
    (doseq [[j [_ i ret?]] (map-indexed vector events)]
      (let [x (inc j)]
        (aset eop x (int i))
        (aset eret x (boolean ret?))
        (when ret? (aset ret-of (int i) (int x)))))
    (dotimes [x (inc e)]
      (aset nxt x (int (inc x)))
      (aset prv (inc x) (int x)))
    (aset nxt tail (int tail))
    {:calls  cs
     :n      n
     :n-ok   (count (filter :ok? cs))
     :ops    (object-array (map :op cs))
     :pure   (boolean-array (map #(boolean (m/pure-op? model (:op %))) cs))
     :ok     (boolean-array (map :ok? cs))
     :tail   tail
     :nxt    nxt
     :prv    prv
     :eop    eop
     :eret   eret
     :ret-of ret-of}))

;; ---------------------------------------------------------------------------
;; Memo keys

(deftype Config [^BitSet linearized state ^int h]
  Object
  (hashCode [_] h)
  (equals [_ o]
    (and (instance? Config o)
         (let [^Config c o]
           (and (== h (.-h c))
                (.equals linearized (.-linearized c))
                (= state (.-state c)))))))

(defn- config
  "A memo key: a snapshot of the linearized set and the model state."
  [^BitSet linearized state]
  (Config. (.clone linearized) state
           (unchecked-add-int (unchecked-multiply-int 31 (.hashCode linearized))
                              (clojure.lang.Util/hasheq state))))

;; ---------------------------------------------------------------------------
;; The search

(defmacro ^:private unlink! [nxt prv x]
  `(let [x# ~x]
     (aset ~nxt (aget ~prv x#) (aget ~nxt x#))
     (aset ~prv (aget ~nxt x#) (aget ~prv x#))))

(defmacro ^:private relink! [nxt prv x]
  `(let [x# ~x]
     (aset ~nxt (aget ~prv x#) x#)
     (aset ~prv (aget ~nxt x#) x#)))

(def ^:private max-reported-configs 10)

(defn- search
  "Runs the WGL search. Returns {:outcome :valid|:invalid|:timeout|:config-limit,
  :explored n, :furthest {...}}."
  [model prob ^long deadline ^long max-configs]
  (let [n        (long (:n prob))
        ^objects ops (:ops prob)
        ^booleans pure (:pure prob)
        ^booleans ok (:ok prob)
        tail     (int (:tail prob))
        ^ints nxt (:nxt prob)
        ^ints prv (:prv prob)
        ^ints eop (:eop prob)
        ^booleans eret (:eret prob)
        ^ints ret-of (:ret-of prob)
        lin      (BitSet. n)
        cache    (HashSet.)
        ;; stack of lifted call entries, the state before each, and whether the lift
        ;; was an eager pure op (whose failure means the configuration below fails too)
        ^ints s-entry (int-array (inc n))
        ^objects s-state (object-array (inc n))
        ^booleans s-forced (boolean-array (inc n))
        ^longs remaining (long-array 1 (long (:n-ok prob)))
        ;; furthest return entry the search was blocked at, and configs seen there
        ^longs furthest (long-array 1 0)
        blocked  (java.util.ArrayList.)
        lift!    (fn [^long x]
                   (let [i (aget eop x), r (aget ret-of i)]
                     (unlink! nxt prv x)
                     (when (<= 0 r) (unlink! nxt prv r))
                     (.set lin i)
                     (when (aget ok i) (aset remaining 0 (dec (aget remaining 0))))))
        unlift!  (fn [^long x]
                   (let [i (aget eop x), r (aget ret-of i)]
                     (when (<= 0 r) (relink! nxt prv r))
                     (relink! nxt prv x)
                     (.clear lin i)
                     (when (aget ok i) (aset remaining 0 (inc (aget remaining 0))))))
        ;; pops until a non-eager frame; returns its stack position, or -1
        backtrack! (fn [^long sp]
                     (loop [sp sp]
                       (if (zero? sp)
                         -1
                         (let [sp (dec sp)]
                           (unlift! (aget s-entry sp))
                           (if (aget s-forced sp) (recur sp) sp)))))
        note-block! (fn [^long r state]
                      (let [best (aget furthest 0)]
                        (when (< best r)
                          (aset furthest 0 r)
                          (.clear blocked))
                        (when (and (<= best r) (< (.size blocked) max-reported-configs))
                          (.add blocked [state (.clone lin)]))))
        result   (fn [outcome]
                   {:outcome  outcome
                    :explored (.size cache)
                    :furthest {:entry (aget furthest 0), :configs (vec blocked)}})]
    (loop [entry (aget nxt 0), eager? true, state model, sp 0, iter 0]
      (cond
        (zero? (aget remaining 0))
        (result :valid)

        (< max-configs (.size cache))
        (result :config-limit)

        (and (zero? (bit-and iter 0xfff)) (< deadline (System/nanoTime)))
        (result :timeout)

        ;; reached a return (or the end): in the eager pass, go on to the general
        ;; pass; in the general pass, this return's op cannot be linearized here.
        (or (== entry tail) (aget eret entry))
        (if eager?
          (recur (aget nxt 0) false state sp (inc iter))
          (do (when-not (== entry tail) (note-block! entry state))
              (let [sp (long (backtrack! sp))]
                (if (neg? sp)
                  (result :invalid)
                  (recur (aget nxt (aget s-entry sp)) false (aget s-state sp) sp
                         (inc iter))))))

        :else
        (let [i (aget eop entry)]
          (if (not= eager? (aget pure i))
            ;; eager pass looks only at pure ops, the general pass only at the rest
            ;; (pure ops left in the list did not fit this state)
            (recur (aget nxt entry) eager? state sp (inc iter))
            (let [state' (m/step state (aget ops i))]
              (if (m/inconsistent? state')
                (recur (aget nxt entry) eager? state sp (inc iter))
                (do (.set lin i)
                    (if (.add cache (config lin state'))
                      (do (aset s-entry sp (int entry))
                          (aset s-state sp state)
                          (aset s-forced sp (boolean eager?))
                          (lift! entry)
                          (recur (aget nxt 0) true state' (inc sp) (inc iter)))
                      (do (.clear lin i)
                          (if eager?
                            ;; this configuration was already refuted, so is ours
                            (let [sp (long (backtrack! sp))]
                              (if (neg? sp)
                                (result :invalid)
                                (recur (aget nxt (aget s-entry sp)) false
                                       (aget s-state sp) sp (inc iter))))
                            (recur (aget nxt entry) false state sp
                                   (inc iter))))))))))))))

;; ---------------------------------------------------------------------------
;; Explaining the outcome

(defn- explain
  "Describes the furthest point the search reached: the op whose return blocked it,
  and for each configuration seen there, the model, the in-flight ops (invoked before
  that return and not yet completed) already linearized and those still pending, and
  why the blocked op does not fit the model. Ops are shown as the model sees them: the
  invocation with an ok completion's value."
  [prob {:keys [entry configs]}]
  (when (pos? entry)
    (let [^ints eop (:eop prob)
          cs        (:calls prob)
          blocked-c (nth cs (aget eop (int entry)))
          ret-index (:index (:complete blocked-c))
          in-flight (fn [c] (and (< (:index (:invoke c)) ret-index)
                                 (let [comp (:complete c)]
                                   (or (nil? comp) (not (h/ok? comp))
                                       (<= ret-index (:index comp))))))
          step-msg  (fn [state]
                      (let [s (m/step state (:op blocked-c))]
                        (when (m/inconsistent? s) (:msg s))))]
      {:op          (:complete blocked-c)
       :invoke      (:invoke blocked-c)
       :previous-ok (let [earlier (->> cs
                                       (keep :complete)
                                       (filter #(and (h/ok? %) (< (:index %) ret-index))))]
                      (when (seq earlier) (apply max-key :index earlier)))
       :configs     (let [flying (keep-indexed (fn [i c] (when (in-flight c) [i c])) cs)]
                      (vec (for [[state ^BitSet lin] configs]
                             (let [lin? (fn [[i _]] (.get lin (int i)))]
                               {:model      state
                                :linearized (mapv (comp :op second) (filter lin? flying))
                                :pending    (mapv (comp :op second) (remove lin? flying))
                                :error      (step-msg state)}))))})))

;; ---------------------------------------------------------------------------
;; Public API

(defn- default-max-configs
  "How many memo entries fit in about half the heap, for a history of n ops."
  [n]
  (let [bytes-per-config (+ 160 (* 8 (quot (+ (long n) 63) 64)))]
    (max 100000 (quot (quot (.maxMemory (Runtime/getRuntime)) 2) bytes-per-config))))

(defn check
  "Checks a history (a vector of op maps, e.g. from `eyrie.jepsen.history/read-history`)
  for linearizability against model (e.g. `(eyrie.jepsen.models/cas-register)`).
  Options:
    :time-limit-ms  search budget, default `default-time-limit-ms`
    :max-configs    memo-table size that also counts as running out of budget
                    (default: what fits in about half the heap)
  Returns {:valid? true|false|:unknown, :op-count n, :configs-explored k, ...}; when
  false also :op (the completion that could not be linearized), :invoke,
  :previous-ok and :configs (model and in-flight ops at the furthest point); when
  :unknown, :cause (:timeout or :config-limit)."
  ([model history] (check model history {}))
  ([model history {:keys [time-limit-ms max-configs]
                   :or   {time-limit-ms default-time-limit-ms}}]
   (let [t0       (System/nanoTime)
         prob     (problem model history)
         deadline (+ t0 (* 1000000 (long time-limit-ms)))
         max-configs (or max-configs (default-max-configs (:n prob)))
         {:keys [outcome explored furthest]} (search model prob deadline max-configs)
         base     {:op-count         (:n prob)
                   :configs-explored explored
                   :time-ms          (quot (- (System/nanoTime) t0) 1000000)}]
     (case outcome
       :valid   (assoc base :valid? true)
       :invalid (merge {:valid? false} base (explain prob furthest))
       (merge {:valid? :unknown, :cause outcome} base
              (if (= :timeout outcome)
                {:time-limit-ms time-limit-ms}
                {:max-configs max-configs}))))))

(defn merge-valid
  "Combines verdicts: false if any is false, else :unknown if any is :unknown, else
  true."
  [valids]
  (cond (some false? valids)         false
        (some #(= :unknown %) valids) :unknown
        :else                         true))

(defn check-independent
  "Checks a history in Jepsen's independent form, where every client op's value is a
  [key value] tuple (a cas is [k [old new]]): splits it by key and checks each key's
  history separately against a fresh model (options as for `check`, applied per key).
  Returns {:valid? v, :results {key result}, :failures [keys], :unknown [keys]} where
  v is false if any key is invalid, else :unknown if any is unknown, else true."
  ([model history] (check-independent model history {}))
  ([model history opts]
   (let [results (into (sorted-map-by independent/key-order)
                       (map (fn [[k sub]] [k (check model sub opts)]))
                       (independent/subhistories history))
         with    (fn [v] (vec (keep (fn [[k r]] (when (= v (:valid? r)) k)) results)))]
     {:valid?   (merge-valid (map :valid? (vals results)))
      :results  results
      :failures (with false)
      :unknown  (with :unknown)})))
