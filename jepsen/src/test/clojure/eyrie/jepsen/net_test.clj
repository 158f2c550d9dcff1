(ns eyrie.jepsen.net-test
  (:require [clojure.set :as set]
            [clojure.test :refer [deftest is]]
            [eyrie.jepsen.generator :as gen]
            [eyrie.jepsen.nemesis :as nemesis]
            [eyrie.jepsen.net :as net]))

(def nodes ["n1" "n2" "n3" "n4" "n5"])

(defn- symmetric? [g] (every? (fn [[a es]] (every? #(contains? (get g % #{}) a) es)) g))

(deftest grudges
  (let [rng (java.util.Random. 3)]
    (let [g (net/isolate-one nodes rng)
          lonely (first (filter #(= 4 (count (g %))) nodes))]
      (is lonely)
      (is (every? #(= #{lonely} (g %)) (remove #{lonely} nodes)))
      (is (symmetric? g)))
    (let [g (net/majority-minority nodes rng)]
      (is (= {2 3, 3 2} (frequencies (map (comp count g) nodes))))
      (is (symmetric? g)))
    (dotimes [_ 20]
      (let [g (net/majorities-ring nodes rng)
            sees (into {} (map (fn [n] [n (set/difference (set nodes) (g n))]) nodes))]
        (is (every? #(= 3 (count (sees %))) nodes) "each node sees a majority")
        (is (= 5 (count (set (vals sees)))) "no two nodes see the same majority")
        (is (symmetric? g))))
    (is (= {"n1" #{"n3" "n4" "n5"} "n2" #{"n3" "n4" "n5"} "n3" #{"n1" "n2"} "n4" #{"n1" "n2"} "n5" #{"n1" "n2"}}
           (net/isolate ["n1" "n2"] nodes)))))

(deftest the-nemesis-generator-alternates-start-and-stop-per-fault
  (let [{:keys [generator final-generator]} (nemesis/package {:faults #{:kill :partition} :interval 1
                                                             :rng (java.util.Random. 9)})
        ctx (fn [t] {:time t :free #{:nemesis} :workers {:nemesis :nemesis} :threads #{:nemesis}})
        ops (loop [g generator, t 0, out []]
              (if (= 40 (count out))
                out
                (let [[o g'] (gen/op g nil (ctx t))]
                  (recur g' (if (= :sleep (:type o)) (+ t (:value o)) t) (conj out o)))))
        faults (remove #(= :sleep (:type %)) ops)]
    (is (seq faults))
    (doseq [f ["kill" "partition"]]
      (let [mine (filter #(.endsWith (name (:f %)) f) faults)]
        (is (= (take (count mine) (cycle [(keyword (str "start-" f)) (keyword (str "stop-" f))]))
               (map :f mine)))))
    (is (every? #(contains? (set (nemesis/modes (keyword (subs (name (:f %)) 6)))) (:value %))
                (filter #(.startsWith (name (:f %)) "start-") faults)))
    (is (= [:stop-partition :stop-kill] (map :f final-generator)))))
