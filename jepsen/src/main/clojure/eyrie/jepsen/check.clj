(ns eyrie.jepsen.check
  "Command-line linearizability check of one history against the cas-register model.

      java -cp <jar+deps> clojure.main -m eyrie.jepsen.check [options] FILE

  FILE is a Jepsen history.edn (one op map per line) or a Knossos-format file (one EDN
  vector of ops); the format is recognised from the first form. Options:
    --independent       values are [key value] tuples: check each key separately
                        (chosen automatically when every :write value is a tuple)
    --time-limit SECS   search budget (per key), default 60
  Prints the result map and exits 0 when valid, 1 when invalid, 4 when unknown, 2 on a wrong command line and 3
  on an unreadable input."
  (:require [clojure.pprint :as pprint]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.independent :as independent]
            [eyrie.jepsen.linearizability :as lin]
            [eyrie.jepsen.models :as models]))

(def ^:private usage
  "usage: clojure.main -m eyrie.jepsen.check [--independent] [--time-limit SECS] FILE")

(defn parse-args
  "Parses command-line args into {:file f, :independent? bool-or-nil,
  :time-limit-ms ms} or {:error msg}."
  [args]
  (loop [args (seq args), opts {:time-limit-ms lin/default-time-limit-ms}]
    (if-let [[a & more] args]
      (case a
        "--independent" (recur more (assoc opts :independent? true))
        "--time-limit"  (if-let [secs (some-> (first more) parse-double)]
                          (recur (next more) (assoc opts :time-limit-ms
                                                    (long (* 1000 secs))))
                          {:error (str "--time-limit needs a number of seconds\n" usage)})
        (cond (.startsWith ^String a "-") {:error (str "unknown option " a " (--help shows the usage)")}
              (:file opts)                {:error (str "more than one FILE\n" usage)}
              :else                       (recur more (assoc opts :file a))))
      (if (:file opts) opts {:error usage}))))

(defn- independent-history?
  "Does this history look like Jepsen's independent form (every :write's value a
  tuple, and at least one write)?"
  [history]
  (let [writes (filter #(and (h/client-op? %) (= :write (:f %))) history)]
    (and (seq writes) (every? #(independent/tuple? (:value %)) writes))))

(defn exit-code
  "0 for valid, 1 for invalid, 4 for unknown (2 is a wrong command line, 3 an unreadable file)."
  [valid?]
  (case valid? true 0, false 1, 4))

(defn run
  "Runs the check for command-line args, printing the result. Returns the exit code."
  [args]
  (let [{:keys [error file time-limit-ms independent?]} (parse-args args)]
    (if error
      (do (binding [*out* *err*] (println error)) 2)
      (let [history (try (h/read-any file)
                         (catch Exception e
                           (binding [*out* *err*]
                             (println "cannot read" file ":" (.getMessage e)))
                           nil))]
        (if (nil? history)
          3
          (let [opts   {:time-limit-ms time-limit-ms}
                model  (models/cas-register)
                result (if (or independent? (independent-history? history))
                         (lin/check-independent model history opts)
                         (lin/check model history opts))]
            (binding [*print-length* nil, *print-level* nil]
              (pprint/pprint result))
            (exit-code (:valid? result))))))))

(defn -main
  "Entry point: checks FILE and exits with `run`'s code."
  [& args]
  (let [code (run args)]
    (flush)
    (shutdown-agents)
    (System/exit code)))
