(ns eyrie.jepsen.net
  "The test network: one Linux network namespace per node (`eyr-n1`, ...), each with a veth pair
  into a bridge `eyr0` in the root namespace. Node i has address 10.77.0.i; the bridge (and so
  the harness and its clients, in the root namespace) has 10.77.0.254 and reaches every node.
  Partitions are iptables DROP rules on INPUT inside the nodes' namespaces, so they cut nodes
  off from each other, never from the harness. One-way drops (the asymmetric nemesis) are DROP
  rules on OUTPUT in the sender's namespace, kept apart from partitions: each heals on its own. Needs root; installs iptables (and iproute2,
  procps) with apt-get when missing."
  (:require [clojure.set :as set]
            [clojure.string :as str]
            [eyrie.jepsen.util :as util])
  (:import (java.util Random)
           (java.util.concurrent TimeUnit)))

(def bridge "eyr0")
(def bridge-ip "10.77.0.254")

(defn node-index
  "1 for \"n1\"."
  [node]
  (Long/parseLong (subs node 1)))

(defn ip
  "The address of a node."
  [node]
  (str "10.77.0." (node-index node)))

(defn netns "The namespace of a node." [node] (str "eyr-" node))

(defn sh!
  "Runs a command; returns its stdout. Throws ex-info with stderr on a non-zero exit, unless
  :may-fail is given (then returns nil on failure)."
  [& args]
  (let [[opts args] (if (map? (first args)) [(first args) (rest args)] [{} args])
        p (-> (ProcessBuilder. ^java.util.List (map str args))
              (.redirectErrorStream false)
              (.start))
        out (future (slurp (.getInputStream p)))
        err (future (slurp (.getErrorStream p)))]
    (when-not (.waitFor p 60 TimeUnit/SECONDS)
      (.destroyForcibly p)
      (throw (ex-info (str "timed out: " (str/join " " args)) {})))
    (if (zero? (.exitValue p))
      @out
      (when-not (:may-fail opts)
        (throw (ex-info (str (str/join " " args) " failed (" (.exitValue p) "): " (str/trim @err)) {:args args}))))))

(defn- in-ns! [node & args] (apply sh! "ip" "netns" "exec" (netns node) args))

(defn- apt-install! [pkg]
  (util/log "installing" pkg "(apt-get)")
  (when-not (sh! {:may-fail true} "apt-get" "install" "-y" "-q" pkg)
    (sh! "apt-get" "update" "-q")
    (sh! "apt-get" "install" "-y" "-q" pkg)))

(defn ensure-tools!
  "Installs, with apt-get, what the harness runs and the machine lacks: iptables, ip
  (iproute2) and kill (procps)."
  []
  (doseq [[cmd pkg] [["iptables" "iptables"] ["ip" "iproute2"] ["kill" "procps"]]]
    (when-not (sh! {:may-fail true} "sh" "-c" (str "command -v " cmd))
      (apt-install! pkg))))

(defn teardown!
  "Removes the namespaces and the bridge of this harness (idempotent)."
  [_test]
  (doseq [ns (str/split-lines (or (sh! {:may-fail true} "ip" "netns" "list") ""))
          :let [name (first (str/split ns #"\s+"))]
          :when (and name (str/starts-with? name "eyr-n"))]
    (sh! {:may-fail true} "ip" "netns" "del" name))
  (doseq [line (str/split-lines (or (sh! {:may-fail true} "ip" "-o" "link" "show") ""))
          :let [[_ name] (re-find #"^\d+: ([^:@]+)" line)]
          :when (and name (or (str/starts-with? name "eyr-h") (= name bridge)))]
    (sh! {:may-fail true} "ip" "link" "del" name)))

(defn setup!
  "Creates the bridge and one namespace per node of the test (after removing leftovers of an
  earlier run)."
  [test]
  (when-not (= "0" (str/trim (sh! "id" "-u")))
    (throw (ex-info "the jepsen harness needs root (network namespaces, iptables)" {})))
  (ensure-tools!)
  (teardown! test)
  (sh! "ip" "link" "add" bridge "type" "bridge")
  (sh! "ip" "addr" "add" (str bridge-ip "/24") "dev" bridge)
  (sh! "ip" "link" "set" bridge "up")
  (doseq [node (:nodes test)
          :let [i (node-index node), host (str "eyr-h" i), inner (str "eyr-c" i)]]
    (sh! "ip" "netns" "add" (netns node))
    (sh! "ip" "link" "add" host "type" "veth" "peer" "name" inner)
    (sh! "ip" "link" "set" inner "netns" (netns node))
    (sh! "ip" "link" "set" host "master" bridge)
    (sh! "ip" "link" "set" host "up")
    (in-ns! node "ip" "addr" "add" (str (ip node) "/24") "dev" inner)
    (in-ns! node "ip" "link" "set" inner "up")
    (in-ns! node "ip" "link" "set" "lo" "up"))
  (util/log "network:" (count (:nodes test)) "namespaces on bridge" bridge))

;; ---------------------------------------------------------------------------
;; Partitions

(defn heal!
  "Removes every partition."
  [test]
  (doseq [node (:nodes test)]
    (in-ns! node "iptables" "-F" "INPUT")))

(defn partition!
  "Applies a grudge: {node #{nodes whose packets it drops}} (replacing any earlier partition)."
  [test grudge]
  (heal! test)
  (doseq [[node enemies] grudge
          enemy enemies]
    (in-ns! node "iptables" "-A" "INPUT" "-s" (ip enemy) "-j" "DROP")))

(defn- one-way-rule
  "The iptables rule (after -A/-D OUTPUT) of a one-way drop from `from` to `to`'s `ports`."
  [to ports]
  ["-d" (ip to) "-p" "tcp" "-m" "multiport" "--dports" (str/join "," ports) "-j" "DROP"])

(defn drop-one-way!
  "Holds the messages `from` sends to `to`, not those `to` sends to `from`: an OUTPUT rule in
  `from`'s namespace that drops the TCP packets `from` sends to `to`'s server `ports` (every
  connection `from` opened to `to`). Dropping every packet from `from` to `to` would hold both
  directions, since TCP needs acknowledgements: `to`'s connections to `from` would stall once
  their window filled. Here those stay whole, so `to`'s requests reach `from` and are answered."
  [_test from to ports]
  (apply in-ns! from "iptables" "-A" "OUTPUT" (one-way-rule to ports)))

(defn allow-one-way!
  "Removes a `drop-one-way!` rule (no error when there is none)."
  [_test from to ports]
  (apply sh! {:may-fail true} "ip" "netns" "exec" (netns from) "iptables" "-D" "OUTPUT" (one-way-rule to ports)))

(defn heal-one-way!
  "Removes every one-way drop."
  [test]
  (doseq [node (:nodes test)]
    (in-ns! node "iptables" "-F" "OUTPUT")))

(defn complete-grudge
  "A grudge in which no component hears from any other: [#{a b} #{c d e}] -> {a #{c d e} ...}."
  [components]
  (let [components (map set components)
        all (apply set/union components)]
    (into {} (for [c components, n c] [n (set/difference all c)]))))

(defn- shuffled [nodes ^Random rng]
  (let [l (java.util.ArrayList. ^java.util.Collection (vec nodes))]
    (java.util.Collections/shuffle l rng)
    (vec l)))

(defn isolate-one
  "One random node cut off from the rest."
  [nodes rng]
  (let [[a & more] (shuffled nodes rng)]
    (complete-grudge [#{a} (set more)])))

(defn majority-minority
  "A random majority and the minority, cut off from each other."
  [nodes rng]
  (let [s (shuffled nodes rng)
        k (inc (quot (count nodes) 2))]
    (complete-grudge [(set (take k s)) (set (drop k s))])))

(defn majorities-ring
  "Every node sees a majority (itself and its nearest neighbours on a random ring), and no two
  nodes see the same majority."
  [nodes rng]
  (let [ring (shuffled nodes rng)
        n (count ring)
        m (inc (quot n 2))
        half (quot (dec m) 2)]
    (into {}
          (for [i (range n)]
            (let [sees (set (for [d (range (- half) (inc (- (dec m) half)))]
                              (nth ring (mod (+ i d) n))))
                  sees (if (< (count sees) m) (conj sees (nth ring (mod (+ i (inc half)) n))) sees)]
              [(nth ring i) (set/difference (set ring) sees)])))))

(defn isolate
  "The given nodes, together, cut off from the others."
  [group nodes]
  (complete-grudge [(set group) (set/difference (set nodes) (set group))]))
