(ns eyrie.jepsen.models-test
  (:require [clojure.test :refer [deftest is testing]]
            [eyrie.jepsen.models :as m]))

(deftest cas-register-steps
  (let [r (m/cas-register)]
    (is (= (m/cas-register 3) (m/step r {:f :write, :value 3})))
    (is (= r (m/step r {:f :read, :value nil})))
    (is (= (m/cas-register 2) (m/step (m/cas-register 1) {:f :cas, :value [1 2]})))
    (testing "inconsistencies"
      (is (m/inconsistent? (m/step r {:f :read, :value 1})))
      (is (= "can't read 1 from register nil" (:msg (m/step r {:f :read, :value 1}))))
      (is (= "can't CAS 1 from 0 to 2"
             (:msg (m/step (m/cas-register 1) {:f :cas, :value [0 2]}))))
      (is (m/inconsistent? (m/step r {:f :cas, :value 7})))
      (is (m/inconsistent? (m/step r {:f :delete, :value nil}))))
    (testing "the model is a value"
      (is (= (hash (m/cas-register 1)) (hash (m/step r {:f :write, :value 1})))))))

(deftest cas-register-pure-ops
  (let [r (m/cas-register)]
    (is (m/pure-op? r {:f :read, :value 1}))
    (is (m/pure-op? r {:f :cas, :value [1 1]}))
    (is (not (m/pure-op? r {:f :cas, :value [1 2]})))
    (is (not (m/pure-op? r {:f :write, :value 1})))
    (testing "models that say nothing have no pure ops"
      (is (not (m/pure-op? (reify m/Model (step [this _] this)) {:f :read}))))))
