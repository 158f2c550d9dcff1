(ns eyrie.jepsen.tls-test
  "`bin/jepsen test --tls`: the option, the certificates and cluster file the nodes get, the node
  command line (no --insecure with TLS), and a register run on an embedded cluster with mutual
  TLS whose clients, connecting with a client certificate, are served."
  (:require [clojure.edn :as edn]
            [clojure.java.io :as io]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.core :as core]
            [eyrie.jepsen.db :as db]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.test-support :refer [temp-dir]]
            [eyrie.jepsen.tls :as tls])
  (:import (io.eyrie.multicast Identity$Role)))

(deftest the-tls-option
  (let [t (core/test-map (core/parse-opts ["--workload" "register" "--nemesis" "kill" "--tls"]))]
    (is (true? (:tls? t)))
    (is (= "register-tls-kill" (:name t))))
  (is (nil? (:tls? (core/test-map (core/parse-opts ["--workload" "register"])))) "plaintext by default")
  (is (:usage (ex-data (try (core/test-map (core/parse-opts ["--workload" "register" "--tls" "yes"])) nil
                            (catch clojure.lang.ExceptionInfo e e))))
      "--tls takes no value"))

(deftest the-nodes-get-certificates-and-a-tls-line-and-no-insecure
  (let [store (temp-dir "jepsen-tls-test")
        base {:nodes ["n1" "n2" "n3"] :store store :service "register" :classpath "cp"}
        plain (db/prepare base)
        secure (db/prepare (assoc base :tls? true))
        conf (slurp (:cluster-file secure))]
    (testing "without --tls: as before"
      (is (nil? (:tls-dir plain)))
      (is (not (str/includes? (db/cluster-text plain) "tls ")))
      (is (some #{"--insecure"} (#'db/node-command plain "n1"))))
    (testing "with --tls"
      (is (str/includes? conf (str "tls " (:tls-dir secure))) conf)
      (is (not-any? #{"--insecure"} (#'db/node-command secure "n1")))
      (is (= (:tls-dir secure) (str (.tlsDir (db/cluster-config secure)))) "the nodes read the tls line")
      (let [node (tls/config secure "node-2")
            sans (set (map second (.getSubjectAlternativeNames (.certificate node))))]
        (is (= Identity$Role/NODE (.role (.identity node))))
        (is (contains? sans "10.77.0.2") (str "a node certificate names the node's address: " sans)))
      (is (= Identity$Role/CLIENT (.role (.identity (tls/client secure)))))
      (is (= Identity$Role/ADMIN (.role (.identity (tls/admin secure)))))
      (is (= "1" (subs (.name (.identity (tls/node secure))) 5))))
    (is (nil? (tls/client plain)) "no TLS config without --tls")))

(deftest register-on-an-embedded-cluster-with-tls
  ;; The clients connect with the client certificate to nodes that run mutual TLS on both
  ;; ports: a plaintext client (or a TLS client against plaintext nodes) would get no ok op.
  (let [store (.getCanonicalPath (io/file "target" "jepsen-store-tls"))
        run (future (core/run-test! (core/test-map (core/parse-opts ["--workload" "register" "--db" "embedded" "--tls"
                                                                     "--time-limit" "4" "--recovery" "1"
                                                                     "--key-count" "4" "--concurrency" "4"
                                                                     "--seed" "9" "--store" store]))))
        r (deref run 180000 nil)
        _ (when-not r
            (future-cancel run)
            (throw (ex-info "the run took more than 180 s" {})))
        dir (io/file (get-in r [:test :store]))
        hist (h/read-history (io/file dir "history.edn"))
        results (edn/read-string (slurp (io/file dir "results.edn")))]
    (is (= 0 (:exit r)))
    (is (true? (:valid? results)))
    (is (= (.getCanonicalPath (io/file dir "certs")) (get-in r [:test :tls-dir])))
    (is (.exists (io/file dir "certs" "client-jepsen.pem")))
    (is (<= 10 (count (filter #(= :ok (:type %)) hist))) "the TLS clients were served")))
