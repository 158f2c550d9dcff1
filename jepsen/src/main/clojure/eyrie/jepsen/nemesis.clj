(ns eyrie.jepsen.nemesis
  "Faults. A nemesis takes ops `{:type :info :process :nemesis :f :start-<fault> :value mode}`
  and `{:f :stop-<fault>}` and answers the op with a :value saying what it did.

  | fault | start modes | stop |
  |---|---|---|
  | kill | :one :majority :all :leaders (SIGKILL) | restarts every killed node |
  | pause | :one :leaders (SIGSTOP) | SIGCONT |
  | partition | :one :majority :majorities-ring :leaders (the leaders isolated together) | heals |
  | move-storm | kills the oracle's leader and sends a stream of commands that move objects | stops them, restarts the node |
  | asym | :oracle->partition :partition->oracle: one direction between the oracle leader's node and one partition leader's node (another node) held in short bursts; :oracle->partition-after-kill: that partition's leader killed and the oracle leader's node's traffic to the partition's other nodes held | heals (restarts the killed node) |
  | kill-partition-leader | :one: SIGKILLs one partition's leader, one that does not lead the oracle when possible | restarts it |
  | elastic | :add: adds a partition to the running cluster (a new Raft group on 3 nodes, then active in the oracle's table; once `max-added-groups` exist, a drained one is made active again instead) | drains a random active partition (retire, move every object out) |
  | upgrade | `:upgrade` ops, one per node at the times `eyrie.jepsen.upgrade/schedule` gives: the node stopped (SIGTERM, then SIGKILL) and started again on the new build, waiting until it serves | - |

  `package` builds the nemesis and its generators for a set of faults."
  (:require [eyrie.jepsen.db :as db]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.net :as net]
            [eyrie.jepsen.tls :as tls]
            [eyrie.jepsen.upgrade :as upgrade]
            [eyrie.jepsen.util :as util])
  (:import (io.eyrie.core Client Command ObjId PartitionTable)
           (io.eyrie.multicast ClusterAdmin GroupId MulticastClient)
           (java.time Duration)
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
   :move-storm [:oracle-leader]
   ;; DS-SMR's F1 schedule needs the oracle->partition direction held (the review's schedule:
   ;; also with the partition's leader killed), so those modes come up 3 times in 4
   :asym [:oracle->partition :oracle->partition-after-kill :oracle->partition-after-kill
          :partition->oracle]
   :kill-partition-leader [:one]
   :elastic [:add]})

(def max-added-groups
  "How many partition groups the elastic fault adds in one test at most; after that it makes
  drained partitions active again (every added group is one more Raft group on the nodes)."
  2)

(def asym-hold-ms
  "How long each burst of the asymmetric fault holds the direction: [min max), ms. Shorter
  than the clients' op timeout (5 s), so that commands caught behind a hold still complete:
  that is the schedule in which a destination that finished a command early shows."
  [200 2000])

(def asym-gap-ms
  "The pause between two holds of the asymmetric fault: [min max), ms."
  [300 1500])

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
                                        (.service (JepsenNode/clientService))
                                        (.tls (tls/client test))
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
;; The asymmetric fault and partition-leader kills

(defn- partition-leaders
  "[[group node] ...] for the partitions that have a leader, sorted."
  [leaders]
  (vec (sort (filter (fn [[g n]] (and n (not= "oracle" g))) leaders))))

(defn- members
  "The nodes holding a replica of group g."
  [test g]
  (mapv #(str "n" %) (.members (.group (db/cluster-config test) (io.eyrie.multicast.GroupId/valueOf ^String g)))))

(defn hold-targets
  "The nodes whose traffic from the oracle leader's node `ol` a hold toward partition g (led
  on `pl`) cuts: g's nodes but `ol`, less the oracle's followers other than `pl` when all of
  them would be cut: the oracle must keep a quorum, or it could not run ahead of g at all."
  [test g ol pl]
  (let [held (vec (remove #{ol} (members test g)))
        followers (set (remove #{ol} (members test "oracle")))]
    (if (every? (set held) followers)
      (vec (remove #(and (followers %) (not= pl %)) held))
      held)))

(defn- asym-pair
  "{:from node :to [nodes] :partition g} for an asymmetric fault in `mode`, between the oracle
  leader's node and the leader node of a random partition led elsewhere (nil when there is
  none):
  - :oracle->partition: holds what the oracle leader's node sends to the partition leader's;
  - :partition->oracle: the other direction;
  - :oracle->partition-after-kill: also kills the partition's leader (:kill), and holds what
    the oracle leader's node sends to every other node of the partition, where its new leader
    will be: the review's F1 schedule (the oracle decides and executes a delete the partition
    has started but not decided, while the partition keeps ordering later commands)."
  [test mode rng]
  (let [leaders (db/leaders test)
        ol (get leaders "oracle")
        others (filterv (fn [[_ n]] (not= n ol)) (partition-leaders leaders))]
    (when (and ol (seq others))
      (let [[g pl] (pick rng others)]
        (case mode
          :partition->oracle {:from pl :to [ol] :partition g}
          :oracle->partition-after-kill {:from ol :to (hold-targets test g ol pl)
                                         :partition g :kill pl}
          {:from ol :to [pl] :partition g})))))

(defn- range-ms [^Random rng [lo hi]] (+ lo (.nextInt rng (int (- hi lo)))))

(defn- start-asym!
  "Holds the direction from -> to in bursts (`asym-hold-ms`, `asym-gap-ms`) until `running` is
  false, counting the holds. Returns the thread."
  [test {:keys [from to]} running holds seed]
  (doto (Thread.
          (fn []
            (let [rng (Random. (long seed))
                  ports [db/raft-port db/client-port]]
              (try
                (while @running
                  (doseq [t to] (net/drop-one-way! test from t ports))
                  (swap! holds inc)
                  (Thread/sleep (long (range-ms rng asym-hold-ms)))
                  (doseq [t to] (net/allow-one-way! test from t ports))
                  (when @running (Thread/sleep (long (range-ms rng asym-gap-ms)))))
                (catch InterruptedException _ nil)
                (catch Exception e (util/log "asymmetric fault failed:" e))
                (finally (doseq [t to] (net/allow-one-way! test from t ports))))))
          "jepsen-asym")
    (.setDaemon true)
    (.start)))

(defn- partition-leader-target
  "The node to kill for :kill-partition-leader: the leader of a random partition, among those
  not leading the oracle when there are any (the oracle then stays up to finish commands the
  partition has not started); nil when no partition has a leader."
  [test rng]
  (let [leaders (db/leaders test)
        ol (get leaders "oracle")
        pls (partition-leaders leaders)
        elsewhere (filterv (fn [[_ n]] (not= n ol)) pls)]
    (when (seq pls) (pick rng (if (seq elsewhere) elsewhere pls)))))

;; ---------------------------------------------------------------------------
;; Elastic partitions

(defn- cluster-of
  "The test's cluster file (real nodes) or embedded cluster's configuration."
  ^io.eyrie.multicast.ClusterConfig [test]
  (or (:cluster-config test) (db/cluster-config test)))

(defn- admin-client ^Client [test]
  (-> (Client/newBuilder) (.cluster (cluster-of test)) (.service (JepsenNode/clientService))
      (.totalTimeoutMs 60000) (.tls (tls/admin test)) (.build)))

(defn- table-summary [^PartitionTable t]
  (into (sorted-map) (map (fn [[g st]] [(.name ^GroupId g) [(keyword (.toLowerCase (str st))) (.objectsAt t g)]])
                          (.states t))))

(defn- elastic-add!
  "Adds partition p<k> (k the next free index) on 3 nodes of the ring, or, once
  `max-added-groups` were added, makes a drained partition active again. Returns what it did."
  [test state]
  (with-open [c (admin-client test)]
    (let [^PartitionTable t (.get (.partitionTable c) 30 TimeUnit/SECONDS)
          retired (map #(.name ^GroupId %) (.retired t))
          added (:added @state 0)]
      (if (and (>= added max-added-groups) (seq retired))
        (let [g (first retired)]
          {:reactivated g :table (table-summary (.get (.addPartition c (GroupId/valueOf ^String g)) 60 TimeUnit/SECONDS))})
        (with-open [mc (-> (MulticastClient/newBuilder) (.cluster (cluster-of test))
                           (.registry (.registry (JepsenNode/clientService))) (.totalTimeoutMs 60000)
                           (.tls (tls/admin test)) (.build))]
          (let [view (.get (.refreshView mc) 30 TimeUnit/SECONDS)
                k (count (.partitions view))
                g (str "p" k)
                members (db/ring (count (:nodes test)) k)]
            (ClusterAdmin/addGroup mc (GroupId/valueOf g) (mapv #(Integer/valueOf (int %)) members)
                                   (Duration/ofSeconds 90))
            (swap! state update :added (fnil inc 0))
            {:added g :members (vec members)
             :table (table-summary (.get (.addPartition c (GroupId/valueOf g)) 60 TimeUnit/SECONDS))}))))))

(defn- elastic-drain!
  "Drains a random active partition (there must stay one). Returns what it did."
  [test ^Random rng]
  (with-open [c (admin-client test)]
    (let [^PartitionTable t (.get (.partitionTable c) 30 TimeUnit/SECONDS)
          active (vec (.active t))]
      (if (< (count active) 2)
        {:skipped "one active partition"}
        (let [^GroupId g (pick rng active)
              ^PartitionTable after (.get (.drain c g 16 (Duration/ofSeconds 60)) 70 TimeUnit/SECONDS)]
          {:drained (.name g) :table (table-summary after)})))))

(defn- attempt
  "Runs f; an exception becomes {:error message} (the fault did not complete; the run goes on)."
  [f]
  (try (f) (catch Exception e {:error (str (or (.getCause e) e))})))

;; ---------------------------------------------------------------------------

;; Kills and pauses: the nodes at fault are kept in the nemesis's state under `k` (:killed,
;; :paused) until healed.
(defn- fault-targets!
  "Applies `fault!` to the targets of `mode`, adds them to the set at `k` and returns them."
  [state k fault! test mode rng]
  (let [ns (targets test mode rng)]
    (doseq [n ns] (fault! test n))
    (swap! state update k into ns)
    ns))

(defn- heal-all!
  "Applies `heal!` to every node in the set at `k`, in order, empties the set and returns the nodes."
  [state k heal! test]
  (let [ns (sort (k @state))]
    (doseq [n ns] (heal! test n))
    (swap! state assoc k #{})
    ns))

(defrecord ClusterNemesis [^Random rng state]
  Nemesis
  (setup! [this _] this)

  (invoke! [_ test op]
    (let [mode (:value op)
          done (fn [v] (assoc op :type :info :value v))]
      (case (:f op)
        :start-kill (done {:mode mode :killed (fault-targets! state :killed db/kill! test mode rng)})
        :stop-kill (done {:restarted (heal-all! state :killed db/start! test)})
        :start-pause (done {:mode mode :paused (fault-targets! state :paused db/pause! test mode rng)})
        :stop-pause (done {:resumed (heal-all! state :paused db/resume! test)})
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
        :start-asym (if (:asym @state)
                      (done :already-running)
                      (if-let [pair (asym-pair test mode rng)]
                        (let [running (atom true)
                              holds (atom 0)]
                          (when-let [n (:kill pair)] (db/kill! test n))
                          (swap! state assoc :asym (assoc pair :running running :holds holds
                                                               :thread (start-asym! test pair running holds (.nextLong rng))))
                          (done (assoc pair :mode mode)))
                        (done {:mode mode :skipped "no partition led away from the oracle's leader"})))
        :stop-asym (if-let [{:keys [running thread holds from to kill]} (:asym @state)]
                     (do (reset! running false)
                         (.interrupt ^Thread thread)
                         (.join ^Thread thread 10000)
                         (net/heal-one-way! test)
                         (when kill (db/start! test kill))
                         (swap! state dissoc :asym)
                         (done (cond-> {:healed [from to] :holds @holds} kill (assoc :restarted kill))))
                     (do (net/heal-one-way! test) (done :healed)))
        :start-kill-partition-leader (if-let [[g n] (partition-leader-target test rng)]
                                       (do (db/kill! test n)
                                           (swap! state update :killed-pl (fnil conj #{}) n)
                                           (done {:partition g :killed n}))
                                       (done {:skipped "no partition leader"}))
        :upgrade (done (attempt #(upgrade/upgrade! test (:value op))))
        :start-elastic (done (attempt #(elastic-add! test state)))
        :stop-elastic (done (attempt #(elastic-drain! test rng)))
        :stop-kill-partition-leader (let [ns (sort (:killed-pl @state))]
                                      (doseq [n ns] (db/start! test n))
                                      (swap! state assoc :killed-pl #{})
                                      (done {:restarted ns}))
        (done [:unknown-fault (:f op)]))))

  (teardown! [this test]
    (when-let [{:keys [running]} (:storm @state)] (reset! running false))
    (when-let [{:keys [running ^Thread thread]} (:asym @state)]
      (reset! running false)
      (.interrupt thread)
      (.join thread 10000))
    (try (net/heal-one-way! test) (catch Exception e (util/log "one-way heal failed:" e)))
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
  :move-storm :asym :kill-partition-leader :elastic :upgrade), one fault starting every `interval` seconds on average and each lasting about
  `interval` seconds. With :upgrade, the upgrade ops (`upgrade/schedule` of `nodes` over
  `time-limit`) come at their times too, before any other fault due then. The final generator
  stops every fault."
  [{:keys [faults interval rng nodes time-limit]}]
  (let [^Random rng (or rng (Random.))
        cycled (sort (disj (set faults) :upgrade))
        cycles (when (seq cycled)
                 (gen/mix (mapv #(fault-cycle % interval rng) cycled) (.nextLong rng)))]
    {:nemesis (nemesis rng)
     :generator (if (contains? (set faults) :upgrade)
                  (gen/any (upgrade/schedule nodes time-limit) cycles)
                  cycles)
     :final-generator (vec (for [f [:partition :asym :pause :move-storm :kill :kill-partition-leader]
                                 :when (some #{f} faults)]
                             {:type :info :f (keyword (str "stop-" (name f)))}))}))
