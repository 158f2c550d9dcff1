(ns eyrie.jepsen.workload.chirper-test
  (:require [clojure.test :refer [deftest is]]
            [eyrie.jepsen.workload.chirper :as ch]))

(defn- hist [ops] (vec (map-indexed (fn [i [p type f v]] {:index i :process p :type type :f f :value v}) ops)))

(defn- kinds [ops] (let [r (ch/checker {} (hist ops) {})] [(:valid? r) (:error-kinds r)]))

(def base [[0 :invoke :follow [1 0]] [0 :ok :follow [1 0]]
           [0 :invoke :post [0 1]] [0 :ok :post [0 1]]
           [1 :invoke :timeline [1 nil]] [1 :ok :timeline [1 [1]]]])

(deftest a-followed-post-is-in-the-timeline
  (is (= [true {}] (kinds base))))

(deftest a-lost-post-is-invalid-unless-an-unfollow-may-have-removed-it
  (is (= [false {:lost 1}] (kinds (assoc base 5 [1 :ok :timeline [1 []]]))))
  (is (= [true {}] (kinds (concat (take 4 base) [[2 :invoke :unfollow [1 0]] [2 :info :unfollow [1 0]]
                                                 [1 :invoke :timeline [1 nil]] [1 :ok :timeline [1 []]]]))))
  (is (= [false {:lost 1}] (kinds (concat (take 4 base) [[2 :invoke :unfollow [1 0]] [2 :fail :unfollow [1 0]]
                                                         [1 :invoke :timeline [1 nil]] [1 :ok :timeline [1 []]]])))
      "a failed unfollow did not happen"))

(deftest the-bound-may-drop-old-posts
  ;; 50 newer posts by the reader itself push post 1 out
  (let [own (mapcat (fn [id] [[0 :invoke :post [1 id]] [0 :ok :post [1 id]]]) (range 2 52))]
    (is (= [true {}] (kinds (concat (take 4 base) own [[1 :invoke :timeline [1 nil]]
                                                       [1 :ok :timeline [1 (vec (range 51 1 -1))]]]))))
    (is (= [false {:too-long 1}] (kinds (concat (take 4 base) own [[1 :invoke :timeline [1 nil]]
                                                                   [1 :ok :timeline [1 (vec (range 51 0 -1))]]]))))))

(deftest phantoms-duplicates-and-order
  (is (= [false {:out-of-order 1 :phantom 1}] (kinds (assoc base 5 [1 :ok :timeline [1 [1 7]]]))))
  (is (= [false {:phantom-not-followed 1}] (kinds (drop 2 base))))
  (is (= [false {:duplicate 1}] (kinds (assoc base 5 [1 :ok :timeline [1 [1 1]]]))))
  (is (= [false {:out-of-order 1}] (kinds (concat base [[0 :invoke :post [0 2]] [0 :ok :post [0 2]]
                                                         [1 :invoke :timeline [1 nil]] [1 :ok :timeline [1 [1 2]]]])))))

(deftest later-timelines-extend-earlier-ones
  (is (= [false {:not-extended 1 :lost 1}]
         (kinds (concat base [[3 :invoke :timeline [1 nil]] [3 :ok :timeline [1 []]]]))))
  ;; post 5 by 2 (not followed through a completed follow before it) seen, then gone
  (is (= [false {:not-extended 1}]
         (kinds [[0 :invoke :follow [1 2]] [0 :info :follow [1 2]]
                 [2 :invoke :post [2 5]] [2 :ok :post [2 5]]
                 [1 :invoke :timeline [1 nil]] [1 :ok :timeline [1 [5]]]
                 [1 :invoke :timeline [1 nil]] [1 :ok :timeline [1 []]]]))))

(deftest an-order-cycle-across-timelines-is-invalid
  (is (= [false {:out-of-order 1 :cyclic-order 1}]
         (kinds [[0 :invoke :post [0 1]] [0 :ok :post [0 1]] [0 :invoke :post [0 2]] [0 :ok :post [0 2]]
                 [1 :invoke :timeline [0 nil]] [1 :ok :timeline [0 [2 1]]]
                 [1 :invoke :timeline [0 nil]] [1 :ok :timeline [0 [1 2]]]]))))
