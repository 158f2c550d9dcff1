(ns eyrie.jepsen.workload.bank
  "The bank workload: transfers between accounts (which live in different partitions until
  DS-SMR gathers them) and reads of every balance, on the example bank service
  (`io.eyrie.examples.bank`).

  Ops: `{:f :transfer :value {:from a :to b :amount n}}` (:ok when it moved the money, :fail
  when the source could not pay) and `{:f :read}` completing with `{account balance}`.

  Checker: every ok read names every account, sums to the total and has no negative balance;
  and the final read is explained by the acknowledged transfers plus some subset of the
  indeterminate (:info) ones (searched with a budget: over budget the answer is :unknown)."
  (:require [eyrie.jepsen.client :as client]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.util :as util]
            [eyrie.jepsen.workload.register :as reg])
  (:import (io.eyrie.core Client Command ObjId Reply)
           (io.eyrie.examples.bank BankOps$Read BankOps$Transfer)
           (java.util Random)
           (java.util.concurrent CompletableFuture TimeUnit TimeoutException)))

(defn accounts [test] (vec (range (:accounts test 8))))

(defn initial-balance [test] (quot (:total test 80) (count (accounts test))))

(defn total [test] (* (initial-balance test) (count (accounts test))))

(defn- ids ^"[Lio.eyrie.core.ObjId;" [ks] (into-array ObjId (map #(ObjId/valueOf (long %)) ks)))

(defrecord BankClient [^Client proxy]
  client/Client
  (open! [_ test _node] (->BankClient (reg/eyrie-client test)))

  (setup! [_ test]
    (util/log "creating" (count (accounts test)) "accounts of" (initial-balance test))
    (doseq [a (accounts test)]
      (util/await-fn (str "account " a " created")
                     (fn [] (let [^Reply r (.get ^CompletableFuture
                                                 (.sendCreate proxy (Command/create (ObjId/valueOf (long a))
                                                                                    (Long/valueOf (long (initial-balance test)))))
                                                 10 TimeUnit/SECONDS)]
                              (or (.isOk r) (re-find #"(?i)exist" (str (.reason r)))
                                  (throw (ex-info (str "create " a ": " (.reason r)) {})))))
                     60)))

  (invoke! [_ test op]
    (try
      (case (:f op)
        :transfer (let [{:keys [from to amount]} (:value op)
                        r (reg/call! proxy test (Command/access (BankOps$Transfer. from to amount) (ids [from to])) false)]
                    (cond (not (.isOk r)) (assoc op :type :fail :error (.reason r))
                          (= "ok" (.value r)) (assoc op :type :ok)
                          :else (assoc op :type :fail :error :insufficient)))
        :read (let [as (accounts test)
                    r (reg/call! proxy test (Command/access (BankOps$Read.) (ids as)) :read)]
                (if (.isOk r)
                  (assoc op :type :ok :value (zipmap as (vec ^longs (.value r))))
                  (assoc op :type :fail :error (.reason r)))))
      (catch TimeoutException _ (assoc op :type :info :error :timeout))))

  (teardown! [_ _])
  (close! [_ _] (reg/close-proxy! proxy)))

(defn generator
  "Transfers between random distinct accounts (amounts 1-5) and, one op in five, a read."
  [test]
  (let [rng (Random. (long (:seed test 1)))
        as (accounts test)]
    (fn []
      (if (< (.nextDouble rng) 0.2)
        {:f :read}
        (let [from (nth as (.nextInt rng (count as)))
              to (nth as (mod (+ (.indexOf ^java.util.List as from) 1 (.nextInt rng (dec (count as)))) (count as)))]
          {:f :transfer :value {:from from :to to :amount (inc (.nextInt rng 5))}})))))

;; ---------------------------------------------------------------------------
;; Checker

(defn- delta
  "A transfer's effect, as a vector over the accounts."
  [as {:keys [from to amount]}]
  (mapv (fn [a] (cond (= a from) (- amount) (= a to) amount :else 0)) as))

(defn- v+ [a b] (mapv + a b))

(defn explain-final
  "Is `target` (a vector of balance changes) the sum of some subset of `deltas`? Returns
  {:explained? true|false|:unknown ...}. A depth-first search over the deltas (take or leave
  each), trying first the choice that brings the partial sum nearer the target, pruning every
  partial sum from which the remaining deltas can no longer reach the target (per account they
  can add at most the sum of their positive parts and take at most the sum of their negative
  parts), and remembering the (step, partial sum) pairs that failed. Beyond `max-states`
  visited pairs the answer is :unknown, never a guess."
  [target deltas max-states]
  (let [deltas (vec deltas)
        n (count deltas)
        dims (count target)
        zero (vec (repeat dims 0))
        ;; suffix bounds: what deltas i..n-1 can still add, per account
        lo (vec (reverse (reductions (fn [acc d] (mapv + acc (map #(min 0 %) d))) zero (reverse deltas))))
        hi (vec (reverse (reductions (fn [acc d] (mapv + acc (map #(max 0 %) d))) zero (reverse deltas))))
        feasible? (fn [i s] (let [l (lo i) h (hi i)]
                              (loop [c 0]
                                (or (= c dims)
                                    (let [gap (- (target c) (s c))]
                                      (and (<= (l c) gap (h c)) (recur (inc c))))))))
        distance (fn [s] (reduce + (map #(Math/abs (long (- %1 %2))) target s)))
        failed (java.util.HashSet.)
        visited (long-array 1)]
    (letfn [(search [i s]
              (aset visited 0 (inc (aget visited 0)))
              (cond
                (> (aget visited 0) max-states) ::budget
                (= s target) true
                (or (= i n) (not (feasible? i s)) (.contains failed [i s])) false
                :else (let [taken (v+ s (deltas i))
                            order (if (< (distance taken) (distance s)) [taken s] [s taken])
                            r (reduce (fn [_ nxt] (let [r (search (inc i) nxt)]
                                                    (if (false? r) false (reduced r))))
                                      false order)]
                        (when (false? r) (.add failed [i s]))
                        r)))]
      (let [r (search 0 zero)]
        (cond (= ::budget r) {:explained? :unknown :cause :search-limit :visited (aget visited 0)}
              (true? r) {:explained? true :visited (aget visited 0)}
              :else {:explained? false :visited (aget visited 0)})))))

(defn checker
  "Reads conserve the total with no negative balance; the final read is explained by the ok
  transfers plus a subset of the :info ones."
  [test history _opts]
  (let [as (accounts test)
        total (total test)
        ops (filter h/client-op? history)
        reads (filter #(and (= :read (:f %)) (h/ok? %)) ops)
        bad-reads (vec (keep (fn [r]
                               (let [v (:value r)
                                     problems (cond-> []
                                                (not= (set as) (set (keys v))) (conj :wrong-accounts)
                                                (not= total (reduce + (vals v))) (conj :wrong-total)
                                                (some neg? (vals v)) (conj :negative))]
                                 (when (seq problems) {:op r :problems problems :total (reduce + (vals v))})))
                             reads))
        pairs (h/pairs ops)
        transfers (filter (fn [[inv _]] (= :transfer (:f inv))) pairs)
        ok-transfers (keep (fn [[inv c]] (when (h/ok? c) (:value inv))) transfers)
        unknown-transfers (keep (fn [[inv c]] (when (or (nil? c) (h/info? c)) (:value inv))) transfers)
        last-transfer (reduce max -1 (keep (fn [[inv c]] (when (= :transfer (:f inv)) (:index inv))) transfers))
        ;; The final read: an ok read invoked after every transfer was invoked (the final phase).
        final (last (filter #(> (:index %) last-transfer) reads))
        init (vec (repeat (count as) (initial-balance test)))
        final-check
        (if-not final
          {:explained? :unknown :cause :no-final-read}
          (let [balances (mapv #(get (:value final) % 0) as)
                from-ok (reduce v+ init (map #(delta as %) ok-transfers))
                target (mapv - balances from-ok)]
            (assoc (explain-final target (map #(delta as %) unknown-transfers) (:bank-max-states test 2000000))
                   :final-read (:value final)
                   :ok-transfers (count ok-transfers)
                   :indeterminate-transfers (count unknown-transfers))))]
    {:valid? (cond (seq bad-reads) false
                   (false? (:explained? final-check)) false
                   (= :unknown (:explained? final-check)) :unknown
                   :else true)
     :reads (count reads)
     :bad-reads (vec (take 10 bad-reads))
     :bad-read-count (count bad-reads)
     :final final-check}))

(defn workload [test]
  {:client (->BankClient nil)
   :generator (generator test)
   :final-generator [{:f :read}]
   :checker checker})
