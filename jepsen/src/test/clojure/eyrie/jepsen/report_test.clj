(ns eyrie.jepsen.report-test
  (:require [clojure.java.io :as io]
            [clojure.test :refer [deftest is]]
            [eyrie.jepsen.report :as report])
  (:import (javax.imageio ImageIO)))

(def history
  (vec (map-indexed (fn [i o] (assoc o :index i))
                    [{:process 0 :type :invoke :f :read :value [1 nil] :time 100000000}
                     {:process :nemesis :type :info :f :start-kill :value :one :time 200000000}
                     {:process :nemesis :type :info :f :start-kill :value {:killed ["n1"]} :time 300000000}
                     {:process 0 :type :ok :f :read :value [1 nil] :time 400000000}
                     {:process 1 :type :invoke :f :write :value [1 2] :time 500000000}
                     {:process 1 :type :info :f :write :value [1 2] :error :timeout :time 1500000000}
                     {:process :nemesis :type :info :f :stop-kill :time 1600000000}
                     {:process :nemesis :type :info :f :stop-kill :value {:restarted ["n1"]} :time 1700000000}
                     {:process 3 :type :invoke :f :cas :value [1 [2 3]] :time 1800000000}
                     {:process 3 :type :fail :f :cas :value [1 [2 3]] :time 1900000000}])))

(deftest nemesis-periods-run-from-start-to-stop
  (is (= [{:fault "kill" :from 0.3 :to 1.7}] (report/nemesis-periods history))))

(defn- legend [chart]
  (map #(.getLabel %) (iterator-seq (.iterator (.getFixedLegendItems (.getXYPlot chart))))))

(deftest the-charts-shade-the-fault-and-carry-every-op
  (let [lat (report/latency-chart {:name "t"} history)
        plot (.getXYPlot lat)
        [marker :as markers] (vec (.getDomainMarkers plot org.jfree.chart.ui.Layer/BACKGROUND))]
    (is (= 1 (count markers)) "one shaded period, the kill")
    (is (= [0.3 1.7] [(.getStartValue marker) (.getEndValue marker)]))
    (is (= ["ok" "fail" "info" "kill"] (legend lat)))
    (is (= [1 1 1] (map #(.getItemCount ^org.jfree.data.xy.XYDataset (.getDataset plot) (int %)) (range 3)))
        "one point per completed op, by outcome")
    (is (instance? org.jfree.chart.axis.LogAxis (.getRangeAxis plot))))
  (let [rate (report/rate-chart {:name "t"} history)
        data (.getDataset (.getXYPlot rate))]
    (is (= ["cas" "read" "write" "kill"] (legend rate)))
    (is (== 3 (reduce + (for [s (range (.getSeriesCount data)) i (range (.getItemCount data (int s)))]
                         (.getYValue data (int s) (int i)))))
        "the completions per second add up to the completed ops")))

(deftest files-are-written
  (let [dir (io/file "target" "report-test")]
    (report/write! dir {:name "t"} history)
    (doseq [f ["latency-raw.png" "rate.png"]]
      (let [img (ImageIO/read (io/file dir f))]
        (is (= [1000 520] [(.getWidth img) (.getHeight img)]) f)))
    (let [html (slurp (io/file dir "timeline.html"))]
      (is (= 3 (count (re-seq #"class=\"op (ok|fail|info)\"" html))) "one box per client op")
      (is (= 2 (count (re-seq #"class=\"op nemesis\"" html))))
      (is (re-find #"write \[1 2\] -&gt; info" html)))))
