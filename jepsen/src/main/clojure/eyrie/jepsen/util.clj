(ns eyrie.jepsen.util
  "Logging, time and small helpers shared by the harness."
  (:require [clojure.string :as str])
  (:import (java.io Writer)
           (java.time LocalDateTime)
           (java.time.format DateTimeFormatter)))

(defonce ^:private log-writer (atom nil))

(defn set-log-file!
  "Also appends every log line to `writer` (nil stops it)."
  [^Writer writer]
  (reset! log-writer writer))

(def ^:private stamp (DateTimeFormatter/ofPattern "HH:mm:ss.SSS"))

(defn log
  "Prints one line, prefixed with the wall-clock time and the thread, to stdout and the log file."
  [& args]
  (let [line (str (.format stamp (LocalDateTime/now)) " [" (.getName (Thread/currentThread)) "] "
                  (str/join " " args))]
    (locking log-writer
      (println line)
      (flush)
      (when-let [^Writer w @log-writer]
        (.write w (str line "\n"))
        (.flush w)))))

(defn sleep-secs
  "Sleeps `s` seconds (fractional allowed); returns early, with the interrupt flag set, if interrupted."
  [s]
  (try (Thread/sleep (long (* 1000 s)))
       (catch InterruptedException _ (.interrupt (Thread/currentThread)))))

(defn await-fn
  "Calls `f` until it returns truthy or `timeout-s` passes; returns its value or throws ex-info
  with `what` in the message. Polls every `interval-s`."
  ([what f timeout-s] (await-fn what f timeout-s 0.2))
  ([what f timeout-s interval-s]
   (let [deadline (+ (System/nanoTime) (long (* timeout-s 1e9)))]
     (loop []
       (let [v (try (f) (catch Exception e (when (>= (System/nanoTime) deadline) (throw e)) nil))]
         (cond v v
               (>= (System/nanoTime) deadline)
               (throw (ex-info (str "timed out after " timeout-s " s waiting for " what) {:what what}))
               :else (do (sleep-secs interval-s) (recur))))))))

(defn relative-time-nanos
  "Nanoseconds since the test's origin (`:start-nanos` of the test map)."
  [test]
  (- (System/nanoTime) (:start-nanos test)))
