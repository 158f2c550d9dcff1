(ns eyrie.jepsen.report
  "What a test run leaves for people: `timeline.html` (every op as a box in its process's
  column, placed by time, coloured by outcome, with its details on hover), `latency-raw.png`
  (each op's latency against the time it started, log scale) and `rate.png` (completions per
  second by function), both drawn with JFreeChart, with the nemesis's fault periods shaded."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [eyrie.jepsen.history :as h])
  (:import (java.awt BasicStroke Color Font)
           (java.text DecimalFormat)
           (java.awt.geom Ellipse2D$Double)
           (org.jfree.chart ChartUtils JFreeChart LegendItem LegendItemCollection)
           (org.jfree.chart.axis LogAxis NumberAxis NumberTickUnit)
           (org.jfree.chart.plot IntervalMarker XYPlot)
           (org.jfree.chart.renderer.xy XYLineAndShapeRenderer)
           (org.jfree.chart.ui Layer)
           (org.jfree.data.xy XYSeries XYSeriesCollection)))

(def fault-colors
  {"kill" (Color. 214 39 40 50) "pause" (Color. 255 127 14 50)
   "partition" (Color. 31 119 180 45) "move-storm" (Color. 148 103 189 50)
   "upgrade" (Color. 44 160 44 50)})

(def type-colors {:ok (Color. 44 160 44) :fail (Color. 255 127 14) :info (Color. 214 39 40)})

(def f-colors [(Color. 31 119 180) (Color. 44 160 44) (Color. 214 39 40) (Color. 148 103 189)
               (Color. 140 86 75) (Color. 227 119 194) (Color. 127 127 127) (Color. 188 189 34)])

(defn- secs [ns] (/ (double ns) 1e9))

(defn nemesis-periods
  "[{:fault \"kill\" :from s :to s}] from each :start-X completion to the next :stop-X
  completion (or the end of the history), and {:fault \"upgrade\"} from each :upgrade op's
  invocation to its completion (a node restarted on the new build). Nemesis ops come in
  invoke/completion pairs."
  [history]
  (let [end (secs (or (:time (last history)) 0))
        pairs (partition 2 (filter #(= :nemesis (:process %)) history))
        completions (map second pairs)
        upgrades (for [[i c] pairs :when (and c (= :upgrade (:f i)))]
                   {:fault "upgrade" :from (secs (:time i)) :to (secs (:time c))})]
    (loop [ops completions, open {}, out []]
      (if-let [o (first ops)]
        (let [[_ verb fault] (re-find #"^(start|stop)-(.+)$" (name (:f o)))]
          (cond (= verb "start") (recur (rest ops) (if (open fault) open (assoc open fault (secs (:time o)))) out)
                (and (= verb "stop") (open fault)) (recur (rest ops) (dissoc open fault)
                                                          (conj out {:fault fault :from (open fault) :to (secs (:time o))}))
                :else (recur (rest ops) open out)))
        (-> out
            (into (map (fn [[f from]] {:fault f :from from :to end}) open))
            (into upgrades))))))

(defn- completed-pairs [history]
  (filter second (h/pairs (filter h/client-op? history))))

;; ---------------------------------------------------------------------------
;; PNG plots (JFreeChart, headless)

(def ^:private W 1000)
(def ^:private H 520)

(defn- plot-input
  "What a plot reads from a history: the completed [invocation completion] :pairs, the nemesis
  :periods and the run's length in seconds, :t-max."
  [history]
  {:pairs (completed-pairs history)
   :periods (nemesis-periods history)
   :t-max (secs (or (:time (last history)) 1))})

(defn- series
  "An XYSeries of [x y] points, in the order given (a scatter keeps duplicates)."
  ^XYSeries [label points]
  (let [s (XYSeries. ^Comparable label false true)]
    (doseq [[x y] points] (.add s (double x) (double y) false))
    s))

(defn- chart
  "A chart of series [[label color points]] over time, drawn as dots (`dots?`) or lines, with
  the nemesis's fault periods shaded and named in the legend."
  ^JFreeChart [title y-axis series-list periods t-max dots?]
  (let [data (XYSeriesCollection.)
        renderer (XYLineAndShapeRenderer. (not dots?) (boolean dots?))
        x-axis (doto (NumberAxis. "time (s)") (.setRange 0.0 (max (double t-max) 1e-3)))
        plot (XYPlot. data x-axis y-axis renderer)
        legend (LegendItemCollection.)]
    (doseq [[i [label ^Color c points]] (map-indexed vector series-list)]
      (.addSeries data (series label points))
      (.setSeriesPaint renderer (int i) c)
      (if dots?
        (.setSeriesShape renderer (int i) (Ellipse2D$Double. -1.5 -1.5 3.0 3.0))
        (.setSeriesStroke renderer (int i) (BasicStroke. 1.8)))
      (.add legend (LegendItem. ^String label ^Color c)))
    (doseq [{:keys [fault from to]} periods]
      (.addDomainMarker plot (IntervalMarker. (double from) (double to) (get fault-colors fault (Color. 0 0 0 30)))
                        Layer/BACKGROUND))
    (doseq [[f c] fault-colors :when (some #(= f (:fault %)) periods)]
      (.add legend (LegendItem. ^String f ^Color c)))
    (.setFixedLegendItems plot legend)
    (.setBackgroundPaint plot Color/WHITE)
    (.setRangeGridlinePaint plot (Color. 215 215 215))
    (.setDomainGridlinePaint plot (Color. 215 215 215))
    (doto (JFreeChart. ^String title (Font. Font/SANS_SERIF Font/BOLD 15) plot true)
      (.setBackgroundPaint Color/WHITE))))

(defn- save!
  "Writes a chart as a PNG of W x H."
  [file ^JFreeChart chart]
  (io/make-parents (io/file file))
  (ChartUtils/saveChartAsPNG (io/file file) chart (int W) (int H)))

(defn latency-chart
  "Each op's latency against the time it started, by outcome, log scale."
  ^JFreeChart [test history]
  (let [{:keys [pairs periods t-max]} (plot-input history)
        point (fn [[i c]] [(secs (:time i)) (max 0.1 (/ (- (:time c) (:time i)) 1e6))])
        by-type (group-by (comp :type second) pairs)
        y-max (reduce max 10.0 (map (comp second point) pairs))
        y-axis (doto (LogAxis. "latency (ms)") (.setBase 10.0) (.setSmallestValue 0.1) (.setRange 0.1 (* 1.2 y-max))
                 ;; a tick per decade, labelled 0.1, 1, 10, ... rather than 10^k
                 (.setTickUnit (NumberTickUnit. 1.0)) (.setNumberFormatOverride (DecimalFormat. "0.#")))]
    (chart (str (:name test) ": latency of each op (ms, log scale)") y-axis
           (for [t [:ok :fail :info]] [(name t) (type-colors t) (map point (by-type t))])
           periods t-max true)))

(defn latency-plot!
  "Writes latency-raw.png."
  [file test history]
  (save! file (latency-chart test history)))

(defn rate-chart
  "Completions per second by :f (all outcomes)."
  ^JFreeChart [test history]
  (let [{:keys [pairs periods t-max]} (plot-input history)
        n (max 1 (int (Math/ceil t-max)))
        fs (sort (distinct (map (comp :f first) pairs)))
        per-f (for [f fs]
                (let [counts (frequencies (map #(int (secs (:time (second %))))
                                               (filter #(= f (:f (first %))) pairs)))]
                  [(name f) (mapv (fn [sec] [(+ sec 0.5) (get counts sec 0)]) (range n))]))]
    (chart (str (:name test) ": completions per second") (NumberAxis. "ops/s")
           (map (fn [[label points] c] [label c points]) per-f (cycle f-colors))
           periods t-max false)))

(defn rate-plot!
  "Writes rate.png."
  [file test history]
  (save! file (rate-chart test history)))

;; ---------------------------------------------------------------------------
;; timeline.html

(defn- esc [s] (-> (str s) (str/replace "&" "&amp;") (str/replace "<" "&lt;") (str/replace ">" "&gt;")
                   (str/replace "\"" "&quot;")))

(defn timeline-html
  "The HTML text: one column per process (the nemesis first), one box per op."
  [test history]
  (let [pairs (h/pairs (filter h/client-op? history))
        nem (->> (filter #(= :nemesis (:process %)) history) (partition 2) (map vec))
        end (or (:time (last history)) 1)
        px-per-s 60.0
        top (fn [ns] (* px-per-s (secs ns)))
        procs (sort (distinct (map (comp :process first) pairs)))
        col (into {:nemesis 0} (map-indexed (fn [i p] [p (inc i)]) procs))
        colw 70
        box (fn [inv c]
              (let [t (or (:type c) :info)
                    y (top (:time inv))
                    h (double (max 2 (- (top (or (:time c) end)) y)))]
                (str "<div class=\"op " (name t) "\" style=\"left:" (* colw (col (:process inv))) "px;top:" (format "%.1f" y)
                     "px;height:" (format "%.1f" h) "px\" title=\""
                     (esc (str (:process inv) " " (name (:f inv)) " " (pr-str (:value inv)) " -> " (name t) " "
                               (pr-str (:value c)) (when (:error c) (str " " (pr-str (:error c))))
                               (format " (%.1f ms)" (/ (- (or (:time c) end) (:time inv)) 1e6))))
                     "\">" (esc (name (:f inv))) "</div>")))]
    (str "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" (esc (:name test)) " timeline</title>\n"
         "<style>body{font:12px sans-serif} .ops{position:relative;margin-top:30px}"
         " .op{position:absolute;width:" (- colw 4) "px;overflow:hidden;border-radius:2px;font-size:10px;color:#222}"
         " .ok{background:#9be39b} .fail{background:#f7c28b} .info{background:#f49a9a} .nemesis{background:#c9b3e6}"
         " .head{position:absolute;top:-20px;width:" (- colw 4) "px;font-weight:bold}</style></head><body>\n"
         "<h2>" (esc (:name test)) "</h2><p>Each box is one op, from invocation to completion (60 px per second); "
         "green ok, orange fail, red info (unknown), purple the nemesis. Hover for details.</p>\n<div class=\"ops\">\n"
         (str/join (for [[p c] (sort-by val col)]
                     (str "<div class=\"head\" style=\"left:" (* colw c) "px\">" (esc (if (= p :nemesis) "nemesis" p)) "</div>\n")))
         (str/join "\n" (map (fn [[inv c]] (box inv c)) pairs))
         "\n"
         (str/join "\n" (for [[inv c] nem]
                          (let [y (top (:time inv)) h (double (max 2 (- (top (:time (or c inv))) y)))]
                            (str "<div class=\"op nemesis\" style=\"left:0px;top:" (format "%.1f" y) "px;height:"
                                 (format "%.1f" h) "px\" title=\"" (esc (str (name (:f inv)) " " (pr-str (:value c))))
                                 "\">" (esc (name (:f inv))) "</div>"))))
         "\n</div></body></html>\n")))

(defn write!
  "Writes timeline.html, latency-raw.png and rate.png into `dir`."
  [dir test history]
  (System/setProperty "java.awt.headless" "true")
  (io/make-parents (io/file dir "timeline.html"))
  (spit (io/file dir "timeline.html") (timeline-html test history))
  (latency-plot! (io/file dir "latency-raw.png") test history)
  (rate-plot! (io/file dir "rate.png") test history))
