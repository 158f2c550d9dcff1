(ns eyrie.jepsen.history
  "Jepsen's history model.

  A history is a vector of op maps

      {:type :invoke|:ok|:fail|:info, :process P, :f F, :value V, :time ns, :index i}

  in the order they happened. A client process invokes one op at a time; the op then
  completes with :ok (it happened), :fail (it certainly did not happen) or :info
  (indeterminate: it may take effect at any point after its invocation, or never). A
  process that got :info never issues again under the same process id. An invocation
  with no completion at all is treated like :info. Ops whose :process is not an integer
  (e.g. :nemesis) are not client ops and are ignored by checkers.

  Two on-disk formats are read: Jepsen's `history.edn` (one op map per line) and the
  Knossos test-data format (one EDN vector or list of ops without :time/:index)."
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io])
  (:import (java.io PushbackReader Writer)))

;; ---------------------------------------------------------------------------
;; Op predicates

(defn invoke?
  "Is this op an invocation?"
  [op]
  (identical? :invoke (:type op)))

(defn ok?
  "Did this op complete successfully?"
  [op]
  (identical? :ok (:type op)))

(defn fail?
  "Did this op certainly not happen?"
  [op]
  (identical? :fail (:type op)))

(defn info?
  "Is this op's outcome indeterminate?"
  [op]
  (identical? :info (:type op)))

(defn client-op?
  "Is this op from a client process (an integer :process)? Nemesis and other
  bookkeeping ops are not."
  [op]
  (integer? (:process op)))

;; ---------------------------------------------------------------------------
;; Indexing and pairing

(defn index
  "Assigns :index 0, 1, 2, ... to ops in order, replacing any existing index.
  Returns a vector."
  [ops]
  (into [] (map-indexed (fn [i op] (assoc op :index i))) ops))

(defn has-indices?
  "Does every op carry an integer :index, strictly increasing in history order? (A
  sub-history, e.g. one key of an independent history, keeps its parent's indices.)"
  [history]
  (loop [prev -1, ops (seq history)]
    (if-let [op (first ops)]
      (let [i (:index op)]
        (and (integer? i) (< prev i) (recur (long i) (next ops))))
      true)))

(defn ensure-indexed
  "Returns the history as a vector, indexing it by position unless it is already
  indexed (see `has-indices?`)."
  [history]
  (if (has-indices? history) (vec history) (index history)))

(defn pairs
  "Pairs each client invocation with its completion. Returns a vector, in invocation
  order, of [invoke completion] where completion is nil when the history ends before
  the op completed (treat it like :info). Completions with no pending invocation (e.g.
  nemesis :info ops) are skipped. Throws ex-info when a process invokes while it still
  has an op pending, which a well-formed history never does."
  [history]
  (let [history (ensure-indexed history)]
    (loop [ops     (seq history)
           pending (transient {})      ; process -> position in out
           out     (transient [])]
      (if-let [op (first ops)]
        (let [p (:process op)]
          (cond
            (not (client-op? op))
            (recur (next ops) pending out)

            (invoke? op)
            (do (when (contains? pending p)
                  (throw (ex-info (str "Process " p " invoked " (pr-str op)
                                       " while another op was pending")
                                  {:type :malformed-history, :op op})))
                (recur (next ops)
                       (assoc! pending p (count out))
                       (conj! out [op nil])))

            :else
            (if-let [i (get pending p)]
              (recur (next ops)
                     (dissoc! pending p)
                     (assoc! out i [(first (nth out i)) op]))
              (recur (next ops) pending out))))
        (persistent! out)))))

(defn pair-index
  "Returns a map from the :index of each client invocation to its completion op (or nil
  when it never completed), and from each completion's :index to its invocation."
  [history]
  (reduce (fn [m [inv comp]]
            (cond-> (assoc m (:index inv) comp)
              comp (assoc (:index comp) inv)))
          {}
          (pairs history)))

;; ---------------------------------------------------------------------------
;; Reading and writing

(defn- default-tag-reader
  "Reads unknown tagged literals (e.g. records Jepsen printed) as their plain value."
  [_tag value]
  value)

(def ^:private edn-opts {:eof ::eof, :default default-tag-reader})

(defn- read-forms
  "Reads every EDN form from a reader, eagerly."
  [rdr]
  (let [r (PushbackReader. rdr)]
    (loop [out (transient [])]
      (let [form (edn/read edn-opts r)]
        (if (identical? ::eof form)
          (persistent! out)
          (recur (conj! out form)))))))

(defn read-history
  "Reads a Jepsen `history.edn` file (one op map per line; any whitespace between maps
  is accepted). Ops without an :index are indexed by position."
  [file]
  (with-open [r (io/reader file)]
    (ensure-indexed (read-forms r))))

(defn read-knossos
  "Reads a Knossos test-data file: a single EDN vector (or list) of op maps without
  :time/:index. Returns the indexed history."
  [file]
  (with-open [r (io/reader file)]
    (let [forms (read-forms r)]
      (when-not (and (= 1 (count forms)) (sequential? (first forms)))
        (throw (ex-info (str file " is not a single EDN vector of ops")
                        {:type :bad-format, :file (str file)})))
      (index (first forms)))))

(defn read-any
  "Reads either format, telling them apart by the first form: a map starts a
  `history.edn`, a vector or list is a Knossos file."
  [file]
  (let [first-form (with-open [r (PushbackReader. (io/reader file))]
                     (edn/read edn-opts r))]
    (if (sequential? first-form)
      (read-knossos file)
      (read-history file))))

(def ^:private key-order [:index :time :type :process :f :value])

(defn- ordered-op
  "The op as an array map with Jepsen's usual keys first, for readable output."
  [op]
  (let [known (keep (fn [k] (when (contains? op k) [k (get op k)])) key-order)
        rest  (apply dissoc op key-order)]
    (apply array-map (concat (mapcat identity known) (mapcat identity (sort-by str rest))))))

(defn write-op!
  "Writes one op as a single EDN line."
  [^Writer w op]
  (binding [*print-length* nil, *print-level* nil, *print-meta* false,
            *print-namespace-maps* false, *print-dup* false, *print-readably* true]
    (.write w (pr-str (ordered-op op)))
    (.write w "\n")))

(defn write-history!
  "Writes a history as Jepsen's `history.edn`: one op map per line."
  [file history]
  (with-open [w (io/writer file)]
    (doseq [op history]
      (write-op! w op))))
