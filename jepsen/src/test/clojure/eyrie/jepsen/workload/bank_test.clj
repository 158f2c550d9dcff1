(ns eyrie.jepsen.workload.bank-test
  (:require [clojure.test :refer [deftest is]]
            [eyrie.jepsen.workload.bank :as bank]))

(def t {:accounts 3 :total 30})

(defn- o [i type f v & [p]] {:index i :type type :f f :value v :process (or p 0)})

(def good [(o 0 :invoke :transfer {:from 0 :to 1 :amount 5}) (o 1 :ok :transfer {:from 0 :to 1 :amount 5})
           (o 2 :invoke :transfer {:from 1 :to 2 :amount 3} 1) (o 3 :info :transfer {:from 1 :to 2 :amount 3} 1)
           (o 4 :invoke :transfer {:from 2 :to 0 :amount 9} 2) (o 5 :fail :transfer {:from 2 :to 0 :amount 9} 2)
           (o 6 :invoke :read nil) (o 7 :ok :read {0 5 1 12 2 13})])

(deftest an-indeterminate-transfer-may-or-may-not-have-happened
  (is (true? (:valid? (bank/checker t good {}))))
  (is (true? (:valid? (bank/checker t (assoc-in good [7 :value] {0 5 1 15 2 10}) {})))))

(deftest a-read-that-does-not-conserve-the-total-is-invalid
  (let [r (bank/checker t (assoc-in good [7 :value] {0 5 1 16 2 10}) {})]
    (is (false? (:valid? r)))
    (is (= [:wrong-total] (:problems (first (:bad-reads r)))))))

(deftest negative-balances-and-missing-accounts-are-invalid
  (is (= [:negative] (:problems (first (:bad-reads (bank/checker t (assoc-in good [7 :value] {0 -1 1 18 2 13}) {}))))))
  (is (= [:wrong-accounts :wrong-total] (:problems (first (:bad-reads (bank/checker t (assoc-in good [7 :value] {0 5 1 12}) {})))))))

(deftest final-balances-must-be-explained-by-the-transfers
  ;; conserves the total, but no subset of the transfers gives it; a failed one did not happen
  (is (false? (:valid? (bank/checker t (assoc-in good [7 :value] {0 6 1 14 2 10}) {}))))
  (is (false? (:valid? (bank/checker t (assoc-in good [7 :value] {0 14 1 12 2 4}) {})))))

(deftest the-search-gives-up-with-unknown
  (is (= :unknown (:explained? (bank/explain-final [3 -3] (repeat 40 [2 -2]) 10))) "odd: needs a search")
  (is (false? (:explained? (bank/explain-final [3 -3] (repeat 40 [2 -2]) 100000))) "with budget: impossible")
  (is (false? (:explained? (bank/explain-final [100 -100] (repeat 40 [1 -1]) 10))) "out of reach at once")
  (is (true? (:explained? (bank/explain-final [3 -3] (repeat 40 [1 -1]) 1000)))))
