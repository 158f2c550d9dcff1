(ns eyrie.jepsen.nemesis
  "Faults. A nemesis takes ops `{:type :info :process :nemesis :f :start-<fault> :value mode}`
  and `{:f :stop-<fault>}` and answers the op with a :value saying what it did.

  | fault | start modes | stop |
  |---|---|---|
  | kill | :one :majority :all :leaders (SIGKILL) | restarts every killed node |
  | pause | :one :leaders (SIGSTOP) | SIGCONT |
  | partition | :one :majority :majorities-ring :leaders (the leaders isolated together) | heals |
  | move-storm | kills the oracle's leader and sends a stream of commands that move objects | stops them, restarts the node |

  `package` builds the nemesis and its generators for a set of faults."
  (:require [eyrie.jepsen.db :as db]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.net :as net]
            [eyrie.jepsen.util :as util])
  (:import (io.eyrie.core Client Command ObjId)
           (io.eyrie.examples.bank BankOps$Transfer)
           (io.eyrie.jepsen.node JepsenNode JepsenNode$TouchPair)
           (java.util Random)
           (java.util.concurrent CompletableFuture TimeUnit)))

(defprotocol Nemesis
  (setup! [n test] "Prepares; returns the nemesis.")
  (invoke! [n test op] "Performs a fault op; returns the completed op.")
  (teardown! [n test] "Undoes every fault."))

(def modes
  {:kill [:one :majority :all :leaders]
   :pause [:one :leaders]
   :partition [:one :majority :majorities-ring :leaders]
   :move-storm [:oracle-leader]})

(defn- pick [^Random rng coll] (nth (vec coll) (.nextInt rng (count coll))))

(defn- shuffled [nodes ^Random rng]
  (let [l (java.util.ArrayList. ^java.util.Collection (vec nodes))]
    (java.util.Collections/shuffle l rng)
    (vec l)))

(defn- leader-nodes [test]
  (set (keep val (db/leaders test))))

(defn- targets
  "The nodes a kill or pause in `mode` hits."
  [test mode rng]
  (let [nodes (:nodes test)]
    (case mode
      :one [(pick rng nodes)]
      :majority (vec (take (inc (quot (count nodes) 2)) (shuffled nodes rng)))
      :all (vec nodes)
      :leaders (let [l (leader-nodes test)] (if (seq l) (vec (sort l)) [(pick rng nodes)])))))

(defn- grudge [test mode rng]
  (let [nodes (:nodes test)]
    (case mode
      :one (net/isolate-one nodes rng)
      :majority (net/majority-minority nodes rng)
      :majorities-ring (net/majorities-ring nodes rng)
      :leaders (let [l (leader-nodes test)]
                 (if (and (seq l) (< (count l) (count nodes)))
                   (net/isolate l nodes)
                   (net/isolate-one nodes rng))))))

;; ---------------------------------------------------------------------------
;; The move storm

(defn- storm-command
  "A command that gathers two objects into one partition without changing anything."
  ^Command [test ^Random rng]
  (let [n (max 2 (:key-count test 50))
        a (.nextInt rng n)
        b (mod (+ a 1 (.nextInt rng (dec n))) n)
        ids (into-array ObjId [(ObjId/valueOf (long a)) (ObjId/valueOf (long b))])]
    (case (:service test)
      "bank" (Command/access (BankOps$Transfer. a b 0) ^"[Lio.eyrie.core.ObjId;" ids)
      (Command/access (JepsenNode$TouchPair. a b) ^"[Lio.eyrie.core.ObjId;" ids))))

(defn- start-storm!
  "Sends storm commands, 8 at a time, until `running` is false. Returns the thread."
  [test running sent]
  (doto (Thread.
          (fn []
            (let [rng (Random. (long (:seed test 0)))]
              (with-open [^Client c (-> (Client/newBuilder)
                                        (.cluster (db/cluster-config test))
                                        (.registry (JepsenNode/registry))
                                        (.build))]
                (while @running
                  (let [fs (vec (repeatedly 8 #(.sendAccess c (storm-command test rng))))]
                    (doseq [^CompletableFuture f fs]
                      (try (.get f 5 TimeUnit/SECONDS) (swap! sent inc)
                           (catch Exception _ nil))))))))
          "jepsen-move-storm")
    (.setDaemon true)
    (.start)))

;; ---------------------------------------------------------------------------

(defrecord ClusterNemesis [^Random rng state]
  Nemesis
  (setup! [this _] this)

  (invoke! [_ test op]
    (let [mode (:value op)
          done (fn [v] (assoc op :type :info :value v))]
      (case (:f op)
        :start-kill (let [ns (targets test mode rng)]
                      (doseq [n ns] (db/kill! test n))
                      (swap! state update :killed into ns)
                      (done {:mode mode :killed ns}))
        :stop-kill (let [ns (sort (:killed @state))]
                     (doseq [n ns] (db/start! test n))
                     (swap! state assoc :killed #{})
                     (done {:restarted ns}))
        :start-pause (let [ns (targets test mode rng)]
                       (doseq [n ns] (db/pause! test n))
                       (swap! state update :paused into ns)
                       (done {:mode mode :paused ns}))
        :stop-pause (let [ns (sort (:paused @state))]
                      (doseq [n ns] (db/resume! test n))
                      (swap! state assoc :paused #{})
                      (done {:resumed ns}))
        :start-partition (let [g (grudge test mode rng)]
                           (net/partition! test g)
                           (done {:mode mode
                                  :grudge (into (sorted-map) (map (fn [[k v]] [k (vec (sort v))]) g))}))
        :stop-partition (do (net/heal! test) (done :healed))
        :start-move-storm (let [leader (get (db/leaders test) "oracle")
                                running (atom true)
                                sent (atom 0)]
                            (when leader (db/kill! test leader))
                            (swap! state assoc :storm {:running running :sent sent
                                                       :thread (start-storm! test running sent)
                                                       :killed leader})
                            (done {:killed-oracle-leader leader}))
        :stop-move-storm (if-let [{:keys [running sent thread killed]} (:storm @state)]
                           (do (reset! running false)
                               (.join ^Thread thread 15000)
                               (when killed (db/start! test killed))
                               (swap! state dissoc :storm)
                               (done {:restarted killed :moves-acknowledged @sent}))
                           (done :no-storm))
        (done [:unknown-fault (:f op)]))))

  (teardown! [this test]
    (when-let [{:keys [running]} (:storm @state)] (reset! running false))
    (try (net/heal! test) (catch Exception e (util/log "heal failed:" e)))
    (doseq [n (:paused @state)] (db/resume! test n))
    (swap! state assoc :paused #{})))

(defn nemesis
  "A nemesis for the test's cluster."
  [^Random rng]
  (->ClusterNemesis rng (atom {:killed #{} :paused #{}})))

(defn- fault-cycle
  "start, wait, stop, wait — forever, with a random mode each time."
  [fault interval ^Random rng]
  (let [ms (modes fault)
        seed (.nextLong rng)
        r (Random. seed)]
    (gen/cycle
      [(gen/sleep interval)
       (gen/once (fn [] {:type :info :f (keyword (str "start-" (name fault))) :value (pick r ms)}))
       (gen/sleep interval)
       {:type :info :f (keyword (str "stop-" (name fault)))}])))

(defn package
  "{:nemesis n :generator g :final-generator g} for `faults` (a set of :kill :pause :partition
  :move-storm), one fault starting every `interval` seconds on average and each lasting about
  `interval` seconds. The final generator stops every fault."
  [{:keys [faults interval rng]}]
  (let [^Random rng (or rng (Random.))
        faults (sort faults)]
    {:nemesis (nemesis rng)
     :generator (when (seq faults)
                  (gen/mix (mapv #(fault-cycle % interval rng) faults) (.nextLong rng)))
     :final-generator (vec (for [f [:partition :pause :move-storm :kill] :when (some #{f} faults)]
                             {:type :info :f (keyword (str "stop-" (name f)))}))}))
