(ns eyrie.jepsen.generator-test
  (:require [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.generator :as gen]))

(defn- ctx
  ([t] (ctx t (conj (set (range 4)) :nemesis)))
  ([t free] {:time t :free free :workers (into {} (map (fn [x] [x x]) (conj (range 4) :nemesis)))
             :threads (conj (set (range 4)) :nemesis)}))

(defn- drain
  "All ops of a generator asked with every thread free at time t (or advancing time to each
  op's time), up to n ops."
  [g n]
  (loop [g g, t 0, out []]
    (if (= n (count out))
      out
      (let [r (gen/op g nil (ctx t))]
        (if (vector? r)
          (recur (second r) (max t (:time (first r))) (conj out (first r)))
          out)))))

(deftest maps-are-one-shot-and-fns-endless
  (is (= [:a] (map :f (drain {:f :a} 10))))
  (is (= 10 (count (drain (fn [] {:f :x}) 10))))
  (is (= [:a :b :c] (map :f (drain [{:f :a} {:f :b} {:f :c}] 10))))
  (is (every? #(= :invoke (:type %)) (drain [{:f :a} {:f :b}] 10))))

(deftest limit-once-cycle-repeat
  (is (= 3 (count (drain (gen/limit 3 (fn [] {:f :x})) 10))))
  (is (= [:a] (map :f (drain (gen/once [{:f :a} {:f :b}]) 10))))
  (is (= [:a :b :a :b :a] (map :f (drain (gen/cycle [{:f :a} {:f :b}]) 5))))
  (is (= [:a :b :a :b] (map :f (drain (gen/cycle 2 [{:f :a} {:f :b}]) 10))))
  (is (= [:a :a :a] (map :f (drain (gen/repeat 3 {:f :a}) 10)))))

(deftest pure-same-answer-twice
  (let [g (gen/stagger 0.1 (gen/mix [(gen/repeat {:f :a}) (gen/repeat {:f :b})] 5))]
    (is (= (drain g 20) (drain g 20)))))

(deftest stagger-spaces-ops-and-time-limit-ends
  (let [ops (drain (gen/stagger 0.01 (gen/repeat {:f :x})) 200)
        gaps (map - (rest (map :time ops)) (map :time ops))]
    (is (every? #(<= 0 % 20000000) gaps))
    (is (< 5e6 (/ (reduce + gaps) (count gaps)) 15e6)))
  (let [ops (drain (gen/time-limit 1 (gen/delay 0.1 (gen/repeat {:f :x}))) 100)]
    (is (= 10 (count ops)))))

(deftest threads-clients-nemesis
  (let [g (gen/clients (gen/repeat {:f :c}) (gen/repeat {:type :info :f :n}))]
    (testing "a nemesis op only on the nemesis thread"
      (let [r (gen/op g nil (ctx 0 #{:nemesis}))]
        (is (= :n (:f (first r))))
        (is (= :nemesis (:process (first r))))))
    (testing "client ops only on client threads"
      (let [r (gen/op (gen/clients (gen/repeat {:f :c})) nil (ctx 0 #{:nemesis}))]
        (is (= :pending r)))
      (is (= 2 (:process (first (gen/op g nil (ctx 0 #{2})))))))))

(deftest phases-wait-for-every-thread
  (let [g (gen/phases {:f :a} {:f :b})
        [o g'] (gen/op g nil (ctx 0))]
    (is (= :a (:f o)))
    (is (= :pending (gen/op g' nil (ctx 0 (disj (conj (set (range 4)) :nemesis) 0)))))
    (is (= :b (:f (first (gen/op g' nil (ctx 0))))))))

(deftest independent-groups-work-on-their-own-key
  (let [g (gen/independent-concurrent-generator 2 [:k1 :k2 :k3] (fn [k] (gen/limit 2 (fn [] {:f :w :value 1}))))
        r1 (gen/op g nil (ctx 0 #{0}))
        r2 (gen/op (second r1) nil (ctx 0 #{2}))]
    (is (= [:k1 1] (:value (first r1))))
    (is (= [:k2 1] (:value (first r2))))
    (testing "a group takes the next key when its key is done"
      (let [ops (drain g 100)]
        (is (= 6 (count ops)))
        (is (= {:k1 2 :k2 2 :k3 2} (frequencies (map (comp first :value) ops))))))))

(deftest sleep-occupies-a-thread
  (let [[o g'] (gen/op [(gen/sleep 2) {:f :a}] nil (ctx 0 #{:nemesis}))]
    (is (= :sleep (:type o)))
    (is (= 2000000000 (:value o)))
    (is (= :a (:f (first (gen/op g' nil (ctx 0 #{:nemesis}))))))))
