(ns eyrie.jepsen.report
  "What a test run leaves for people: `timeline.html` (every op as a box in its process's
  column, placed by time, coloured by outcome, with its details on hover), `latency-raw.png`
  (each op's latency against the time it started, log scale) and `rate.png` (completions per
  second by function), both with the nemesis's fault periods shaded."
  (:require [clojure.java.io :as io]
            [clojure.string :as str]
            [eyrie.jepsen.history :as h])
  (:import (java.awt BasicStroke Color Font Graphics2D RenderingHints)
           (java.awt.geom Ellipse2D$Double Path2D$Double)
           (java.awt.image BufferedImage)
           (javax.imageio ImageIO)))

(def fault-colors
  {"kill" (Color. 214 39 40 50) "pause" (Color. 255 127 14 50)
   "partition" (Color. 31 119 180 45) "move-storm" (Color. 148 103 189 50)})

(def type-colors {:ok (Color. 44 160 44) :fail (Color. 255 127 14) :info (Color. 214 39 40)})

(def f-colors [(Color. 31 119 180) (Color. 44 160 44) (Color. 214 39 40) (Color. 148 103 189)
               (Color. 140 86 75) (Color. 227 119 194) (Color. 127 127 127) (Color. 188 189 34)])

(defn- secs [ns] (/ (double ns) 1e9))

(defn nemesis-periods
  "[{:fault \"kill\" :from s :to s}] from each :start-X completion to the next :stop-X
  completion (or the end of the history). Nemesis ops come in invoke/completion pairs."
  [history]
  (let [end (secs (or (:time (last history)) 0))
        completions (->> (filter #(= :nemesis (:process %)) history)
                         (partition 2)
                         (map second))]
    (loop [ops completions, open {}, out []]
      (if-let [o (first ops)]
        (let [[_ verb fault] (re-find #"^(start|stop)-(.+)$" (name (:f o)))]
          (cond (= verb "start") (recur (rest ops) (if (open fault) open (assoc open fault (secs (:time o)))) out)
                (and (= verb "stop") (open fault)) (recur (rest ops) (dissoc open fault)
                                                          (conj out {:fault fault :from (open fault) :to (secs (:time o))}))
                :else (recur (rest ops) open out)))
        (into out (map (fn [[f from]] {:fault f :from from :to end}) open))))))

(defn- completed-pairs [history]
  (filter second (h/pairs (filter h/client-op? history))))

;; ---------------------------------------------------------------------------
;; PNG plots

(def ^:private W 1000)
(def ^:private H 520)
(def ^:private L 80)
(def ^:private R 170)
(def ^:private T 50)
(def ^:private B 50)

(defn- canvas [title]
  (let [img (BufferedImage. W H BufferedImage/TYPE_INT_RGB)
        g (.createGraphics img)]
    (.setRenderingHint g RenderingHints/KEY_ANTIALIASING RenderingHints/VALUE_ANTIALIAS_ON)
    (.setColor g Color/WHITE)
    (.fillRect g 0 0 W H)
    (.setColor g Color/BLACK)
    (.setFont g (Font. Font/SANS_SERIF Font/BOLD 15))
    (.drawString g ^String title (int L) 30)
    [img g]))

(defn- plot-area [^Graphics2D g t-max periods x-label y-label]
  (let [pw (- W L R) ph (- H T B)
        x (fn [t] (+ L (* pw (/ t (max t-max 1e-9)))))]
    (doseq [{:keys [fault from to]} periods]
      (.setColor g ^Color (get fault-colors fault (Color. 0 0 0 30)))
      (.fillRect g (int (x from)) T (int (max 1 (- (x to) (x from)))) ph))
    (.setColor g Color/BLACK)
    (.drawRect g L T pw ph)
    (.setFont g (Font. Font/SANS_SERIF Font/PLAIN 12))
    (doseq [i (range 0 11)
            :let [t (* i (/ t-max 10)) px (int (x t))]]
      (.drawLine g px (+ T ph) px (+ T ph 4))
      (.drawString g (format "%.0f" (double t)) (- px 6) (+ T ph 18)))
    (.drawString g ^String x-label (int (+ L (/ pw 2) -60)) (- H 12))
    (.drawString g ^String y-label 8 (- T 10))
    x))

(defn- legend [^Graphics2D g entries]
  ;; entries: [[label color]]
  (.setFont g (Font. Font/SANS_SERIF Font/PLAIN 12))
  (doseq [[i [label ^Color c]] (map-indexed vector entries)
          :let [y (+ T 10 (* i 18))]]
    (.setColor g c)
    (.fillRect g (- W R -12) (- y 9) 12 12)
    (.setColor g Color/BLACK)
    (.drawString g (str label) (- W R -30) (+ y 2))))

(defn- save! [^BufferedImage img file]
  (io/make-parents file)
  (ImageIO/write img "png" (io/file file)))

(defn- gridline!
  "Draws a light horizontal line across the plot area at `py`, labelled `label` on the left."
  [^Graphics2D g py ^String label]
  (.setColor g (Color. 225 225 225))
  (.drawLine g L py (- W R) py)
  (.setColor g Color/DARK_GRAY)
  (.drawString g label 30 (+ py 4)))

(defn- fault-legend
  "The legend entries ([name color]) of the faults that have a period in the plot."
  [periods]
  (map (fn [[f c]] [f c]) (filter #(some (fn [p] (= (key %) (:fault p))) periods) fault-colors)))

;; The two plots: both read the same from a history and end the same way.
(defn- plot-input
  "What a plot reads from a history: the completed [invocation completion] :pairs, the nemesis
  :periods and the run's length in seconds, :t-max."
  [history]
  {:pairs (completed-pairs history)
   :periods (nemesis-periods history)
   :t-max (secs (or (:time (last history)) 1))})

(defn- finish!
  "Draws the legend (the entries, then the faults that have a period in the plot) and writes
  the image."
  [^Graphics2D g img file entries periods]
  (legend g (concat entries (fault-legend periods)))
  (.dispose g)
  (save! img file))

(defn latency-plot!
  "Writes latency-raw.png."
  [file test history]
  (let [{:keys [pairs periods t-max]} (plot-input history)
        lats (map (fn [[i c]] (max 0.1 (/ (- (:time c) (:time i)) 1e6))) pairs)
        y-max (max 10.0 (reduce max 1.0 lats))
        [img ^Graphics2D g] (canvas (str (:name test) ": latency of each op (ms, log scale)"))
        x (plot-area g t-max periods "time (s)" "latency (ms)")
        ph (- H T B)
        lo (Math/log10 0.1) hi (Math/log10 y-max)
        y (fn [ms] (- (+ T ph) (* ph (/ (- (Math/log10 ms) lo) (- hi lo)))))]
    (.setFont g (Font. Font/SANS_SERIF Font/PLAIN 11))
    (doseq [d (range -1 (inc (long (Math/ceil hi))))
            :let [ms (Math/pow 10 d) py (int (y ms))]
            :when (<= ms y-max)]
      (gridline! g py (if (< ms 1) (str ms) (str (long ms)))))
    (doseq [[[i c] ms] (map vector pairs lats)]
      (.setColor g ^Color (type-colors (:type c) Color/GRAY))
      (.fill g (Ellipse2D$Double. (- (x (secs (:time i))) 1.5) (- (y ms) 1.5) 3 3)))
    (finish! g img file (map (fn [t] [(name t) (type-colors t)]) [:ok :fail :info]) periods)))

(defn rate-plot!
  "Writes rate.png: completions per second by :f (all outcomes), and ok ones in total."
  [file test history]
  (let [{:keys [pairs periods t-max]} (plot-input history)
        n (int (Math/ceil t-max))
        fs (sort (distinct (map (comp :f first) pairs)))
        series (into (sorted-map)
                     (for [f fs]
                       [(name f) (let [counts (frequencies (map #(int (secs (:time (second %))))
                                                               (filter #(= f (:f (first %))) pairs)))]
                                   (mapv #(get counts % 0) (range (max n 1))))]))
        y-max (max 1 (reduce max 0 (mapcat val series)))
        [img ^Graphics2D g] (canvas (str (:name test) ": completions per second"))
        x (plot-area g t-max periods "time (s)" "ops/s")
        ph (- H T B)
        y (fn [v] (- (+ T ph) (* ph (/ v (* 1.1 y-max)))))]
    (.setFont g (Font. Font/SANS_SERIF Font/PLAIN 11))
    (doseq [i (range 0 6) :let [v (* i (/ (* 1.1 y-max) 5)) py (int (y v))]]
      (gridline! g py (format "%.0f" (double v))))
    (.setStroke g (BasicStroke. 1.8))
    (doseq [[[f vals] c] (map vector series (cycle f-colors))]
      (let [p (Path2D$Double.)]
        (doseq [[i v] (map-indexed vector vals)]
          (if (zero? i) (.moveTo p (x (+ i 0.5)) (y v)) (.lineTo p (x (+ i 0.5)) (y v))))
        (.setColor g ^Color c)
        (.draw g p)))
    (finish! g img file (map vector (keys series) (cycle f-colors)) periods)))

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
