(ns eyrie.jepsen.runner
  "The interpreter: runs a generator against worker threads (one client per client thread and a
  nemesis thread) and records the history.

  One scheduler thread asks the generator for ops with a context of free threads, hands each
  op to its thread's worker and records the invocation; workers perform ops and hand back
  completions, which the scheduler records. An op that throws, or completes :info, leaves its
  process crashed: the thread continues under a new process id (the old one plus the
  concurrency) with a freshly opened client, as in Jepsen. Op :time is nanoseconds since the
  test's :start-nanos; :index is the position in the history."
  (:refer-clojure :exclude [run!])
  (:require [eyrie.jepsen.client :as client]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.util :as util])
  (:import (java.util.concurrent LinkedBlockingQueue TimeUnit)))

(defn- now [test] (util/relative-time-nanos test))

(defn- complete
  "Normalizes a worker's result into a completion of `op`."
  [test op result]
  (let [c (if (map? result) result (assoc op :type :info :error [:bad-completion (pr-str result)]))
        c (if (#{:ok :fail :info} (:type c)) c (assoc c :type :info :error [:bad-type (:type c)]))]
    (assoc c :process (:process op) :time (now test))))

(defn- safely
  "Calls `f`, turning an exception into an :info completion of `op`."
  [test op f]
  (try (complete test op (f))
       (catch Throwable t
         (assoc op :type :info :time (now test)
                   :error (str (.getSimpleName (class t)) ": " (.getMessage t))))))

(defn- client-worker
  "Performs ops for client thread `t`, reopening its client after a crash."
  [test t ^LinkedBlockingQueue inbox ^LinkedBlockingQueue out]
  (let [nodes (:nodes test)
        node (nth nodes (mod t (count nodes)))
        open (fn [] (try (client/open! (:client test) test node)
                         (catch Throwable e (util/log "worker" t "cannot open a client:" e) nil)))]
    (loop [c (open)]
      (let [op (.take inbox)]
        (if (= ::exit op)
          (when c (try (client/close! c test) (catch Throwable _)))
          (let [c (or c (open))
                done (if c
                       (safely test op #(client/invoke! c test op))
                       (assoc op :type :info :time (now test) :error "no client"))]
            (.put out [t done])
            (if (= :info (:type done))
              (do (when c (try (client/close! c test) (catch Throwable _)))
                  (recur (open)))
              (recur c))))))))

(defn- nemesis-worker
  [test ^LinkedBlockingQueue inbox ^LinkedBlockingQueue out]
  (let [invoke (:nemesis-invoke test)]
    (loop []
      (let [op (.take inbox)]
        (when-not (= ::exit op)
          (let [done (safely test op #(invoke test op))]
            (.put out [:nemesis (assoc done :type :info)])
            (recur)))))))

(defn- start-thread [name f]
  (doto (Thread. ^Runnable f ^String name) (.setDaemon true) (.start)))

(defn run!
  "Runs `generator` for `test` and returns the history (a vector of ops). The test map needs
  :concurrency, :nodes, :client (an `eyrie.jepsen.client/Client`), :start-nanos and, when the
  generator emits nemesis ops, :nemesis-invoke (fn [test op] -> completion). With
  :history-out (a java.io.Writer), every op is also written there as it is recorded, one EDN
  line each, and flushed: a run that is killed leaves the history it had."
  [test generator]
  (let [c (:concurrency test)
        threads (conj (vec (range c)) :nemesis)
        out (LinkedBlockingQueue.)
        inboxes (into {} (map (fn [t] [t (LinkedBlockingQueue.)]) threads))
        workers (mapv (fn [t]
                        (start-thread (str "jepsen-" (if (= t :nemesis) "nemesis" (str "worker-" t)))
                                      (if (= t :nemesis)
                                        #(nemesis-worker test (inboxes t) out)
                                        #(client-worker test t (inboxes t) out))))
                      threads)
        history (java.util.ArrayList.)
        last-time (long-array 1)
        ;; Completions are stamped by their workers and recorded later: keep :time
        ;; non-decreasing in history order.
        record! (fn [op] (let [t (max (long (:time op)) (aget last-time 0))
                               op (assoc op :index (.size history) :time t)]
                           (aset last-time 0 t)
                           (.add history op)
                           (when-let [^java.io.Writer w (:history-out test)]
                             (h/write-op! w op)
                             (.flush w))
                           op))]
    (try
      (loop [g generator
             free (set threads)
             procs (into {} (map (fn [t] [t t]) threads))   ; thread -> process
             sleepers {}                                     ; thread -> wake time
             in-flight 0]
        (let [t-now (now test)
              woken (keep (fn [[t until]] (when (<= until t-now) t)) sleepers)
              free (into free woken)
              sleepers (apply dissoc sleepers woken)
              next-wake (when (seq sleepers) (apply min (vals sleepers)))
              wait-ns (fn [ns] (max 0 (min ns (if next-wake (- next-wake t-now) Long/MAX_VALUE))))
              handle (fn [[t done]]
                       (let [crashed? (and (number? t) (= :info (:type done)))]
                         (record! done)
                         [(conj free t)
                          (if crashed? (update procs t + c) procs)]))]
          ;; A completion that is already waiting goes first.
          (if-let [done (.poll out)]
            (let [[free procs] (handle done)]
              (recur g free procs sleepers (dec in-flight)))
            (let [ctx {:time t-now :free free :workers procs :threads (set threads)}
                  r (gen/op g test ctx)]
              (cond
                (nil? r)
                (if (and (zero? in-flight) (empty? sleepers))
                  nil
                  (if-let [done (.poll out (wait-ns 100000000) TimeUnit/NANOSECONDS)]
                    (let [[free procs] (handle done)] (recur g free procs sleepers (dec in-flight)))
                    (recur g free procs sleepers in-flight)))

                (= :pending r)
                (if-let [done (.poll out (wait-ns 10000000) TimeUnit/NANOSECONDS)]
                  (let [[free procs] (handle done)] (recur g free procs sleepers (dec in-flight)))
                  (recur g free procs sleepers in-flight))

                :else
                (let [[o g'] r]
                  (if (> (:time o) t-now)
                    ;; Not yet: wait for its time, unless a completion comes first (then ask again).
                    (if-let [done (.poll out (wait-ns (- (:time o) t-now)) TimeUnit/NANOSECONDS)]
                      (let [[free procs] (handle done)] (recur g free procs sleepers (dec in-flight)))
                      (recur g free procs sleepers in-flight))
                    (let [t (some (fn [[t p]] (when (= p (:process o)) t)) procs)]
                      (case (:type o)
                        :log (do (util/log (:value o)) (recur g' free procs sleepers in-flight))
                        :sleep (recur g' (disj free t) procs (assoc sleepers t (+ t-now (:value o))) in-flight)
                        (let [inv (record! (assoc o :time (now test)))]
                          (.put ^LinkedBlockingQueue (inboxes t) inv)
                          (recur g' (disj free t) procs sleepers (inc in-flight))))))))))))
      (vec history)
      (finally
        (doseq [t threads] (.put ^LinkedBlockingQueue (inboxes t) ::exit))
        (doseq [^Thread w workers] (.join w 10000))))))
