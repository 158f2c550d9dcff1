(ns eyrie.jepsen.upgrade-test
  "The upgrade nemesis (issue 29 item 3) without node processes: its options, each node's
  command line before and after its upgrade, the schedule with and without other faults, the
  verdict that demands every node upgraded, and the setup error when the old build cannot
  be made."
  (:require [clojure.java.io :as io]
            [clojure.java.shell :as shell]
            [clojure.string :as str]
            [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.core :as core]
            [eyrie.jepsen.db :as db]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.nemesis :as nemesis]
            [eyrie.jepsen.report :as report]
            [eyrie.jepsen.test-support :refer [temp-dir]]
            [eyrie.jepsen.upgrade :as upgrade]))

(defn- repo-root
  "The repository's root: four levels above the Clojure sources when Maven runs the tests
  (eyrie.clojure.main.dir), else the working directory."
  []
  (if-let [d (System/getProperty "eyrie.clojure.main.dir")]
    (.getCanonicalPath (io/file d ".." ".." ".." ".."))
    (.getCanonicalPath (io/file "."))))

(defn- with-root
  "Calls f with the system property eyrie.root set to `root` (restored after)."
  [root f]
  (let [old (System/getProperty "eyrie.root")]
    (System/setProperty "eyrie.root" root)
    (try (f)
         (finally (if old (System/setProperty "eyrie.root" old) (System/clearProperty "eyrie.root"))))))

(defn- usage-error [args]
  (try (core/test-map (core/parse-opts args core/test-opts)) nil
       (catch clojure.lang.ExceptionInfo e (when (:usage (ex-data e)) (.getMessage e)))))

(deftest the-command-line-takes-upgrade-and-its-options
  (let [root (temp-dir "eyrie-upgrade-root")]
    (.mkdirs (io/file root "jepsen"))
    (spit (io/file root "jepsen" "upgrade-from") "abc1234\n")
    (with-root root
      (fn []
        (testing "the default old build is jepsen/upgrade-from's commit, from the harness's repository"
          (let [t (core/test-map (core/parse-opts ["--workload" "register" "--nemesis" "upgrade"] core/test-opts))]
            (is (= "register-upgrade" (:name t)))
            (is (= #{:upgrade} (:nemesis-faults t)))
            (is (= "abc1234" (:upgrade-from t)))
            (is (= root (:upgrade-repo t)))))
        (testing "--upgrade-from and --upgrade-repo, with another fault"
          (let [t (core/test-map (core/parse-opts ["--workload" "kv" "--nemesis" "upgrade,kill" "--upgrade-from" "v0.1"
                                                   "--upgrade-repo" "/src/eyrie"] core/test-opts))]
            (is (= "kv-kill+upgrade" (:name t)))
            (is (= #{:upgrade :kill} (:nemesis-faults t)))
            (is (= "v0.1" (:upgrade-from t)))
            (is (= "/src/eyrie" (:upgrade-repo t)))))
        (testing "without the upgrade nemesis there is no old build"
          (is (nil? (:upgrade-from (core/test-map (core/parse-opts ["--nemesis" "kill"] core/test-opts))))))
        (testing "wrong uses are usage errors"
          (is (str/includes? (usage-error ["--nemesis" "kill" "--upgrade-from" "abc"]) "needs --nemesis upgrade"))
          (is (str/includes? (usage-error ["--upgrade-repo" "/x"]) "needs --nemesis upgrade"))
          (is (str/includes? (usage-error ["--nemesis" "upgrade" "--upgrade-from"]) "needs a value"))
          (is (str/includes? (usage-error ["--nemesis" "upgrade" "--db" "embedded"]) "needs --db netns"))
          (is (str/includes? (usage-error ["--nemesis" "upgrad"]) "unknown nemesis")))))
    (testing "no jepsen/upgrade-from and no --upgrade-from: a usage error"
      (with-root (temp-dir "eyrie-upgrade-empty")
        #(is (str/includes? (usage-error ["--nemesis" "upgrade"]) "upgrade-from")))))
  (testing "the usage names the nemesis and the options"
    (is (str/includes? core/usage "elastic,upgrade|none"))
    (is (str/includes? core/usage "--upgrade-from COMMIT")))
  (testing "the repository's jepsen/upgrade-from names one commit"
    (let [f (io/file (repo-root) "jepsen" "upgrade-from")]
      (is (.isFile f))
      (is (re-matches #"[0-9a-f]{7,40}" (str (upgrade/default-from (repo-root))))))))

(defn- classpath-of [cmd]
  (second (drop-while #(not= "-cp" %) cmd)))

(deftest a-node-runs-the-old-build-until-its-upgrade
  (doseq [service ["register" "chirper"]]
    (testing service
      (let [test {:nodes ["n1" "n2" "n3"] :store (temp-dir "eyrie-upgrade-store") :cluster-file "/c.conf"
                  :service service :classpath "NEW.jar" :old-classpath "OLD.jar" :upgraded (atom #{})}]
        (is (= ["OLD.jar" "OLD.jar" "OLD.jar"] (map #(classpath-of (db/node-command test %)) (:nodes test))))
        (is (= :old (db/node-build test "n2")))
        (let [before (db/node-command test "n2")]
          (swap! (:upgraded test) conj "n2")
          (is (= ["OLD.jar" "NEW.jar" "OLD.jar"] (map #(classpath-of (db/node-command test %)) (:nodes test))))
          (is (= [:old :new :old] (map #(db/node-build test %) (:nodes test))))
          (testing "the rest of the command line (the same data directory) does not change with the build"
            (is (= (remove #{"OLD.jar"} before) (remove #{"NEW.jar"} (db/node-command test "n2"))))
            (is (some #(str/ends-with? % "/data/n2") before))))
        (testing "without an old build (no upgrade nemesis) every node runs the harness's classpath"
          (let [t (dissoc test :old-classpath)]
            (is (= ["NEW.jar" "NEW.jar" "NEW.jar"] (map #(classpath-of (db/node-command t %)) (:nodes t))))))))))

(defn- nemesis-ops
  "The nemesis ops `package`'s generator gives over `time-limit` seconds, with every op
  taking `op-s` seconds on the nemesis thread and sleeps as long as they say."
  [faults nodes time-limit op-s]
  (let [pkg (nemesis/package {:faults faults :interval 10 :rng (java.util.Random. 42)
                              :nodes nodes :time-limit time-limit})
        limit (gen/secs->nanos time-limit)]
    (loop [g (gen/time-limit time-limit (gen/nemesis (:generator pkg))), t 0, ops []]
      (let [r (gen/op g {} {:time t :free #{:nemesis} :workers {:nemesis :nemesis} :threads #{:nemesis}})]
        (if (or (not (vector? r)) (>= t limit))
          ops
          (let [[o g'] r
                start (max t (:time o))]
            (if (= :sleep (:type o))
              (recur g' (+ start (:value o)) ops)
              (recur g' (+ start (gen/secs->nanos op-s)) (conj ops (assoc o :time start))))))))))

(deftest the-upgrades-are-spread-over-two-thirds-of-the-run
  (let [nodes ["n1" "n2" "n3" "n4" "n5"]
        s (upgrade/schedule nodes 60)]
    (is (= nodes (map :value s)))
    (is (every? #(= :upgrade (:f %)) s))
    (is (apply < (map :time s)))
    (is (< 0 (:time (first s))))
    (is (<= (:time (last s)) (gen/secs->nanos 40))))
  (testing "alone: one upgrade per node, in order, at its time"
    (let [ops (nemesis-ops #{:upgrade} ["n1" "n2" "n3"] 45 5)]
      (is (= [:upgrade :upgrade :upgrade] (map :f ops)))
      (is (= ["n1" "n2" "n3"] (map :value ops)))
      (is (= (map :time (upgrade/schedule ["n1" "n2" "n3"] 45)) (map :time ops)))))
  (testing "with kills: every node is still upgraded, in order, and the kills go on"
    (let [ops (nemesis-ops #{:upgrade :kill} ["n1" "n2" "n3" "n4" "n5"] 120 8)]
      (is (= ["n1" "n2" "n3" "n4" "n5"] (map :value (filter #(= :upgrade (:f %)) ops))))
      (is (< (:time (last (filter #(= :upgrade (:f %)) ops))) (gen/secs->nanos 120)))
      (is (some #(= :start-kill (:f %)) ops))
      (is (some #(= :stop-kill (:f %)) ops))))
  (testing "without the upgrade fault there are no upgrades"
    (is (not-any? #(= :upgrade (:f %)) (nemesis-ops #{:kill} ["n1" "n2" "n3"] 60 1)))))

(defn- upgrade-op [node build serving]
  {:type :info :process :nemesis :f :upgrade
   :value {:node node :stopped :sigterm :build build :serving serving}})

(deftest the-verdict-demands-every-node-upgraded
  (let [nodes ["n1" "n2" "n3"]
        invocations (map (fn [n] {:type :info :process :nemesis :f :upgrade :value n}) nodes)
        all (concat invocations (map #(upgrade-op % :new true) nodes))]
    (testing "every node upgraded: the checker's verdict stands"
      (is (= {:valid? true :upgraded nodes} (upgrade/verdict {:valid? true} nodes all)))
      (is (= false (:valid? (upgrade/verdict {:valid? false} nodes all)))))
    (testing "a node never upgraded (positive control): not valid"
      (let [r (upgrade/verdict {:valid? true} nodes (concat invocations (map #(upgrade-op % :new true) ["n1" "n2"])))]
        (is (= :unknown (:valid? r)))
        (is (= ["n3"] (:not-upgraded r)))
        (is (= ["n1" "n2"] (:upgraded r)))))
    (testing "an upgrade that did not serve, or started the old build, or failed, does not count"
      (doseq [last-op [(upgrade-op "n3" :new false) (upgrade-op "n3" :old true)
                       {:type :info :process :nemesis :f :upgrade :value {:error "boom"}}]]
        (let [r (upgrade/verdict {:valid? true} nodes (concat (map #(upgrade-op % :new true) ["n1" "n2"]) [last-op]))]
          (is (not= true (:valid? r)) (pr-str last-op))
          (is (= ["n3"] (:not-upgraded r))))))
    (testing "no upgrade at all"
      (is (= :unknown (:valid? (upgrade/verdict {:valid? true} nodes [])))))))

(defn- git-init! [dir]
  (shell/sh "git" "init" "-q" dir))

(deftest an-old-build-that-cannot-be-made-is-a-setup-error
  (let [store (temp-dir "eyrie-upgrade-store")
        not-a-repo (temp-dir "eyrie-upgrade-norepo")
        empty-repo (temp-dir "eyrie-upgrade-empty-repo")]
    (git-init! empty-repo)
    (with-root (repo-root)
      (fn []
        (doseq [[repo why] [[not-a-repo "is not a git repository"] [empty-repo "commit 1234567 is not in"]]]
          (testing why
            (let [t (core/prepare-store! (core/test-map (core/parse-opts ["--nemesis" "upgrade" "--upgrade-from" "1234567"
                                                                         "--upgrade-repo" repo "--store" store]
                                                                        core/test-opts)))
                  e (try (upgrade/old-build! t) nil (catch clojure.lang.ExceptionInfo e e))]
              (is e)
              (is (str/includes? (.getMessage e) why) (some-> e .getMessage))
              (is (str/includes? (.getMessage e) "1234567")))))
        (testing "through the command line: exit 3, before any node starts"
          (is (= 3 (core/run-cli ["test" "--workload" "register" "--nemesis" "upgrade" "--upgrade-from" "1234567"
                                  "--upgrade-repo" not-a-repo "--store" store]))))))))

(deftest the-matrix-has-upgrade-rows
  (let [rows (filter #(str/includes? (:nemesis %) "upgrade") core/matrix)]
    (is (= #{["register" "upgrade"] ["kv" "upgrade,kill"]} (set (map (juxt :workload :nemesis) rows))))
    (is (every? #(true? (:expect %)) rows))
    (testing "each row is a valid command line"
      (with-root (repo-root)
        #(doseq [r rows]
           (is (= (set (map keyword (str/split (:nemesis r) #","))) (:nemesis-faults (core/test-map r)))))))
    (testing "the printed table says which old build a row started on"
      (is (= "--upgrade-from 1372d14" (#'core/matrix-options (assoc (first rows) :upgrade-from "1372d14"))))
      (is (= "-" (#'core/matrix-options (first rows)))))))

(deftest the-plots-shade-each-upgrade
  (let [hist [{:type :info :process :nemesis :f :upgrade :value "n1" :time 1000000000}
              {:type :info :process :nemesis :f :upgrade :value {:node "n1" :build :new :serving true} :time 3500000000}
              {:type :info :process :nemesis :f :start-kill :value :one :time 4000000000}
              {:type :info :process :nemesis :f :start-kill :value {:killed ["n2"]} :time 4100000000}
              {:type :info :process :nemesis :f :stop-kill :value nil :time 6000000000}
              {:type :info :process :nemesis :f :stop-kill :value {:restarted ["n2"]} :time 6200000000}]]
    (is (= #{{:fault "kill" :from 4.1 :to 6.2} {:fault "upgrade" :from 1.0 :to 3.5}}
           (set (report/nemesis-periods hist))))))

(deftest with-other-faults-an-upgrade-does-not-wait-for-leaders
  ;; A kill of every node, then an upgrade waiting for leaders, would hold the nemesis thread
  ;; that must restart the killed nodes (seen in a kv upgrade,kill run).
  (is (= upgrade/leaders-timeout-s (#'upgrade/leaders-wait-s {:nemesis-faults #{:upgrade}})))
  (is (zero? (#'upgrade/leaders-wait-s {:nemesis-faults #{:upgrade :kill}}))))
