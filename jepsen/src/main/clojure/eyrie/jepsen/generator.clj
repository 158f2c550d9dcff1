(ns eyrie.jepsen.generator
  "Pure generators in Jepsen's style. A generator is an immutable value; asking it for an
  operation returns the operation and the generator that follows, so the same generator asked
  twice gives the same answer, and the runner can throw an answer away (for instance when a
  completion arrives before the operation's time) and ask again.

  `(op gen test ctx)` returns
  - nil: the generator is exhausted;
  - :pending: no operation now (no free thread, or waiting for time to pass);
  - [op gen']: the next operation (a map with :type, :process, :time, :f, :value) and the
    generator after it. An op's :time may lie in the future: the runner waits until then.

  The context `ctx` has :time (nanoseconds since the test started), :free (the set of free
  threads), :workers (thread -> process) and :threads (the threads this generator may use:
  integers 0..concurrency-1 for clients and :nemesis for the nemesis).

  What is a generator:
  - nil, exhausted;
  - a map: emits that op once, on any free thread it may use, filling :type :invoke,
    :process and :time;
  - a function of no arguments: an endless generator; each call returns an op map (or a
    generator to ask once), nil ends it;
  - a sequential collection (lazy and infinite allowed): each generator in turn;
  - the combinators below (records implementing `Generator`)."
  (:refer-clojure :exclude [cycle repeat delay])
  (:require [eyrie.jepsen.util :as util]))

(defprotocol Generator
  (op [gen test ctx] "nil, :pending, or [op gen']"))

(defn secs->nanos [s] (long (* s 1e9)))

(defn free-threads
  "The free threads this context lets a generator use, in ascending order (clients first)."
  [ctx]
  (let [allowed (:threads ctx)]
    (->> (:free ctx)
         (filter #(contains? allowed %))
         (sort-by #(if (number? %) % Long/MAX_VALUE)))))

(defn- fill
  "Completes an op map for the first free thread, or nil when none is free."
  [m ctx]
  (when-let [t (first (free-threads ctx))]
    (merge {:type :invoke} m {:process (get-in ctx [:workers t]) :time (max (:time ctx) (or (:time m) 0))})))

(extend-protocol Generator
  nil
  (op [_ _ _] nil)

  clojure.lang.IPersistentMap
  (op [m _ ctx]
    (if-let [o (fill m ctx)] [o nil] :pending))

  clojure.lang.AFunction
  (op [f test ctx]
    (if (empty? (free-threads ctx))
      :pending
      (when-let [g (f)]
        (let [r (op g test ctx)]
          (if (vector? r) [(first r) f] r)))))

  clojure.lang.Sequential
  (op [s test ctx]
    (loop [s (seq s)]
      (when s
        (let [r (op (first s) test ctx)]
          (cond (nil? r) (recur (next s))
                (= :pending r) :pending
                :else [(first r) (cons (second r) (rest s))]))))))

;; ---------------------------------------------------------------------------
;; Threads: clients, nemesis, reserve, each-thread

(defrecord OnThreads [pred gen]
  Generator
  (op [_ test ctx]
    (let [r (op gen test (update ctx :threads #(set (filter pred %))))]
      (if (vector? r) [(first r) (OnThreads. pred (second r))] r))))

(defn on-threads
  "Restricts `gen` to the threads satisfying `pred`."
  [pred gen]
  (OnThreads. pred gen))

(defn- soonest
  "Of several [op gen'] answers (index, answer), the one whose op comes first."
  [answers]
  (reduce (fn [a b] (if (< (:time (first (second b))) (:time (first (second a)))) b a)) answers))

(defrecord Any [gens]
  Generator
  (op [_ test ctx]
    (let [answers (keep-indexed (fn [i g] (let [r (op g test ctx)] (when r [i r]))) gens)]
      (cond (empty? answers) nil
            (every? #(= :pending (second %)) answers)
            ;; keep only the generators that are not exhausted
            :pending
            :else (let [ready (filter #(vector? (second %)) answers)
                        [i [o g']] (soonest ready)]
                    [o (Any. (assoc gens i g'))])))))

(defn any
  "Takes ops from whichever of `gens` offers the soonest one; exhausted when all are."
  [& gens]
  (Any. (vec gens)))

(defn clients
  "`gen` on client threads only; with two arguments, `client-gen` on clients and `nemesis-gen`
  on the nemesis, together."
  ([gen] (on-threads number? gen))
  ([client-gen nemesis-gen] (any (clients client-gen) (on-threads #{:nemesis} nemesis-gen))))

(defn nemesis
  "`gen` on the nemesis thread only; with two arguments, nemesis and clients together."
  ([gen] (on-threads #{:nemesis} gen))
  ([nemesis-gen client-gen] (clients client-gen nemesis-gen)))

(defrecord EachThread [fresh per]
  Generator
  (op [_ test ctx]
    (let [threads (free-threads ctx)
          answers (keep (fn [t]
                          (let [g (get per t fresh)
                                r (op g test (assoc ctx :threads #{t}))]
                            (when (vector? r) [t r])))
                        threads)]
      (if (seq answers)
        (let [[t [o g']] (soonest answers)]
          [o (EachThread. fresh (assoc per t g'))])
        (if (every? (fn [t] (nil? (op (get per t fresh) test (assoc ctx :threads #{t} :free #{t}))))
                    (:threads ctx))
          nil
          :pending)))))

(defn each-thread
  "Every thread runs its own copy of `gen`."
  [gen]
  (EachThread. gen {}))

(defn reserve
  "`(reserve 2 g1 3 g2 default)`: the first 2 client threads run g1, the next 3 run g2, the rest
  run `default` (the nemesis thread is left to the enclosing generator)."
  [& args]
  (let [pairs (partition 2 (butlast args))
        default (last args)]
    (loop [pairs pairs, lo 0, gens []]
      (if-let [[n g] (first pairs)]
        (let [hi (+ lo n)]
          (recur (rest pairs) hi (conj gens (on-threads #(and (number? %) (<= lo %) (< % hi)) g))))
        (apply any (conj gens (on-threads #(and (number? %) (>= % lo)) default)))))))

;; ---------------------------------------------------------------------------
;; Time and counting

(defrecord Limit [n gen]
  Generator
  (op [_ test ctx]
    (when (pos? n)
      (let [r (op gen test ctx)]
        (if (vector? r) [(first r) (Limit. (dec n) (second r))] r)))))

(defn limit "At most `n` ops of `gen`." [n gen] (Limit. n gen))

(defn once "One op of `gen`." [gen] (limit 1 gen))

(defrecord Repeat [n original gen]
  Generator
  (op [_ test ctx]
    (when (or (nil? n) (pos? n))
      (let [r (op gen test ctx)]
        (cond (vector? r) [(first r) (Repeat. n original (second r))]
              (= :pending r) :pending
              ;; exhausted: start over, unless it never produced anything (avoid spinning)
              (identical? gen original) nil
              :else (op (Repeat. (when n (dec n)) original original) test ctx))))))

(defn cycle
  "Runs `gen` to exhaustion, then again from the start, forever (or `n` times)."
  ([gen] (Repeat. nil gen gen))
  ([n gen] (Repeat. n gen gen)))

(defn repeat
  "Emits the (first) op of `gen` again and again, forever or `n` times."
  ([gen] (cycle (once gen)))
  ([n gen] (cycle n (once gen))))

(defrecord TimeLimit [dt deadline gen]
  Generator
  (op [_ test ctx]
    (let [deadline (or deadline (+ (:time ctx) dt))]
      (when (< (:time ctx) deadline)
        (let [r (op gen test ctx)]
          (cond (vector? r) (when (< (:time (first r)) deadline)
                              [(first r) (TimeLimit. dt deadline (second r))])
                :else r))))))

(defn time-limit
  "Ops of `gen` until `secs` after its first op was asked for."
  [secs gen]
  (TimeLimit. (secs->nanos secs) nil gen))

(defrecord Stagger [dt next-time rng-seed gen]
  Generator
  (op [_ test ctx]
    (let [r (op gen test ctx)]
      (if (vector? r)
        (let [[o g'] r
              t (max (:time o) (or next-time (:time ctx)))
              rnd (java.util.Random. rng-seed)
              gap (long (* 2 dt (.nextDouble rnd)))]
          [(assoc o :time t) (Stagger. dt (+ t gap) (.nextLong rnd) g')])
        r))))

(defn stagger
  "Spaces the ops of `gen` by random gaps averaging `secs` (uniform in 0..2*secs)."
  ([secs gen] (stagger secs gen 42))
  ([secs gen seed] (Stagger. (secs->nanos secs) nil seed gen)))

(defrecord Delay [dt next-time gen]
  Generator
  (op [_ test ctx]
    (let [r (op gen test ctx)]
      (if (vector? r)
        (let [[o g'] r
              t (max (:time o) (or next-time (:time ctx)))]
          [(assoc o :time t) (Delay. dt (+ t dt) g')])
        r))))

(defn delay "Spaces the ops of `gen` `secs` apart." [secs gen] (Delay. (secs->nanos secs) nil gen))

(defrecord Sleep [dt]
  Generator
  (op [_ _ ctx]
    ;; Like Jepsen: a :sleep op occupies a thread for `dt` nanoseconds and is not recorded.
    (if-let [o (fill {:type :sleep :value dt} ctx)] [o nil] :pending)))

(defn sleep
  "In a sequence, waits `secs` (on one of its threads) before the next generator."
  [secs]
  (Sleep. (secs->nanos secs)))

(defn log
  "Logs `msg` (no thread needed) when reached."
  [msg]
  {:type :log :value msg})

;; ---------------------------------------------------------------------------
;; Choice and phases

(defrecord Mix [seed gens]
  Generator
  (op [_ test ctx]
    (when (seq gens)
      (let [rnd (java.util.Random. seed)
            i (.nextInt rnd (count gens))
            r (op (nth gens i) test ctx)]
        (cond (nil? r) (op (Mix. (.nextLong rnd) (vec (concat (subvec gens 0 i) (subvec gens (inc i))))) test ctx)
              (= :pending r) :pending
              :else [(first r) (Mix. (.nextLong rnd) (assoc gens i (second r)))])))))

(defn mix
  "Each op from a randomly chosen one of `gens` (seeded: the same seed gives the same choices)."
  ([gens] (mix gens 7))
  ([gens seed] (Mix. seed (vec gens))))

(defrecord Synchronize [gen]
  Generator
  (op [this test ctx]
    (if (= (set (:free ctx)) (set (keys (:workers ctx))))
      (op gen test ctx)
      :pending)))

(defn synchronize
  "Waits until every thread is free (nothing in flight) before `gen` starts."
  [gen]
  (Synchronize. gen))

(defn phases
  "Runs each generator to exhaustion, and lets every op in flight complete, before the next."
  [& gens]
  (map (fn [g] (synchronize g)) gens))

(defn then
  "`a` after `b` (Jepsen's argument order)."
  [a b]
  [b (synchronize a)])

;; ---------------------------------------------------------------------------
;; Independent keys

(defn- group-ctx [ctx group-size gi]
  (let [lo (* gi group-size)]
    (update ctx :threads (fn [ts] (set (filter #(and (number? %) (<= lo %) (< % (+ lo group-size))) ts))))))

(defrecord Independent [group-size fgen keys per-group]
  ;; per-group: group index -> [key generator-of-that-key]
  Generator
  (op [_ test ctx]
    (let [groups (->> (free-threads ctx) (filter number?) (map #(quot % group-size)) distinct)]
      (loop [groups groups, keys keys, per-group per-group]
        (if-let [gi (first groups)]
          (let [[k g keys'] (if-let [[k g] (get per-group gi)]
                              [k g keys]
                              (when-let [s (seq keys)] [(first s) (fgen (first s)) (rest s)]))]
            (if (nil? k)
              (recur (rest groups) keys per-group)
              (let [r (op g test (group-ctx ctx group-size gi))]
                (cond
                  (vector? r) [(update (first r) :value (fn [v] [k v]))
                               (Independent. group-size fgen keys' (assoc per-group gi [k (second r)]))]
                  (= :pending r) (recur (rest groups) keys' (assoc per-group gi [k g]))
                  ;; this key is done: the same group takes the next key
                  :else (recur groups keys' (dissoc per-group gi))))))
          (if (and (empty? per-group) (empty? keys)) nil :pending))))))

(defn independent-concurrent-generator
  "Jepsen's independent concurrent generator: client threads in groups of `group-size`; each
  group works on one key at a time with `(fgen key)`, whose op values are wrapped as [key value];
  when a key's generator is exhausted the group takes the next of `keys`."
  [group-size keys fgen]
  (Independent. group-size fgen keys {}))
