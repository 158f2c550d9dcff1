(ns eyrie.jepsen.tls
  "`bin/jepsen test --tls`: mutual TLS on every node's client and Raft ports, with a development
  CA and certificates written for the run into <store>/certs (the code of `eyrie certs`,
  `io.eyrie.tools.DevCertificates`). The nodes read them through the cluster file's `tls DIR`
  line; the workload's clients connect as `client-jepsen`, the nemesis's partition changes as
  `admin-jepsen`, and the leader queries (which ask each Raft server) as `node-1`. Without
  `--tls` (no :tls-dir in the test) every function here returns nil: plaintext, as before."
  (:require [clojure.java.io :as io])
  (:import (io.eyrie.multicast TlsConfig)
           (io.eyrie.tools DevCertificates)
           (java.nio.file Paths)))

(def client-name "The workload clients' identity (file stem)." "client-jepsen")
(def admin-name "The nemesis's admin identity (file stem)." "admin-jepsen")
(def node-name "The identity of the harness's leader queries (file stem)." "node-1")

(defn write-certs!
  "Writes the CA and the certificates of node ids `ids` (naming `hosts` too), admin `jepsen` and
  client `jepsen` into <store>/certs; returns the test with :tls-dir set."
  [test ids hosts]
  (let [dir (.getCanonicalPath (io/file (:store test) "certs"))]
    (DevCertificates/write (Paths/get dir (make-array String 0)) (mapv str ids) (vec hosts) ["jepsen"] ["jepsen"])
    (assoc test :tls-dir dir)))

(defn config
  "The TlsConfig of identity `stem` (client-jepsen, admin-jepsen, node-1) for the test, or nil
  without --tls."
  ^TlsConfig [test stem]
  (when-let [d (:tls-dir test)]
    (TlsConfig/fromDir (Paths/get d (make-array String 0)) ^String stem)))

(defn client "The workload clients' TlsConfig, or nil." ^TlsConfig [test] (config test client-name))
(defn admin "The nemesis's admin TlsConfig, or nil." ^TlsConfig [test] (config test admin-name))
(defn node "The leader queries' TlsConfig, or nil." ^TlsConfig [test] (config test node-name))
