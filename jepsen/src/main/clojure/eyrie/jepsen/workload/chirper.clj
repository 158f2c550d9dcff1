(ns eyrie.jepsen.workload.chirper
  "The chirper workload: follow, unfollow, post and timeline reads against `chirper node`
  processes, through `io.eyrie.chirper.ChirperClient`.

  Ops: `{:f :follow :value [u v]}` and `:unfollow` (u follows / stops following v);
  `{:f :post :value [author post-id]}`; `{:f :timeline :value [u nil]}` completing with
  `[u [post-ids newest first]]`. Post ids are unique in a test and a post's timestamp is its id,
  so a timeline's order (newest first by time, then id) is by descending id.

  Chirper's semantics (ChirperServer): a post goes to the author's timeline and every
  follower's; a follow copies the followee's recent own posts into the follower's timeline; an
  unfollow removes the followee's posts from it; a timeline keeps the newest 50.

  Checker rules (each sound for those semantics):
  - no phantom: every post in a timeline was posted (invoked) by its author, and is in the
    reader's timeline only if the reader is the author or invoked a follow of the author before
    the read completed;
  - no duplicate post in one timeline, at most 50 posts, newest first;
  - no lost post: a post acknowledged after a follow (u, author) completed is in every timeline
    of u read after the post completed, unless an unfollow (u, author) that could have happened
    was invoked before the read completed, or 50 newer posts could have been in the timeline
    (the bound dropped it); the author's own timelines too;
  - later timelines extend earlier ones: a post in a timeline of u is in the next timeline of u
    read after that one completed, with the same two exceptions;
  - the order of posts over all timelines is acyclic."
  (:require [eyrie.jepsen.client :as client]
            [eyrie.jepsen.history :as h]
            [eyrie.jepsen.tls :as tls]
            [eyrie.jepsen.util :as util]
            [eyrie.jepsen.workload.register :as reg])
  (:import (io.eyrie.chirper ChirperClient ChirperService Ops$SeedUser Post)
           (io.eyrie.core Client Command ObjId Reply)
           (java.util Random)
           (java.util.concurrent CompletableFuture ExecutionException TimeUnit TimeoutException)
           (java.util.concurrent.atomic AtomicLong)))

(def timeline-max 50)

(defn users [test] (vec (range (:users test 12))))

(def communities
  "Users are spread over this many communities; Chirper's oracle gives community c the home
  partition c mod P."
  4)

(defn- create-user!
  "Creates user u in community u mod 4, in its community's home, except users 4-7, 12-15, ...,
  bulk-loaded one partition away from it. So a community's first command that needs a stray
  moves it home, and a command across homes runs with S-SMR where its users are: single-partition
  commands, moves and S-SMR commands all happen in a test."
  ^Reply [^ChirperClient chirper u]
  (let [c (int (mod u communities))]
    (if (even? (quot u communities))
      (.get (.createUser chirper (long u) c) 10 TimeUnit/SECONDS)
      (.get (.sendCreate (.proxy chirper)
                         (Command/create (ObjId/valueOf (long u))
                                         (Ops$SeedUser. (long u) c (int (inc c)) (long-array 0) (long-array 0))))
            10 TimeUnit/SECONDS))))

(defn- wait! [^CompletableFuture f test]
  (try (.get f (long (:op-timeout-ms test 5000)) TimeUnit/MILLISECONDS)
       (catch ExecutionException e (throw (or (.getCause e) e)))))

(defrecord ChirperWorkloadClient [^ChirperClient chirper]
  client/Client
  (open! [_ test _node]
    (->ChirperWorkloadClient
      (ChirperClient. (-> (Client/newBuilder)
                          (.cluster (reg/cluster-config test))
                          (.service (.get (ChirperService.)))
                          (.mode (reg/client-mode test))
                          (.tls (tls/client test))
                          (.build)))))

  (setup! [_ test]
    (util/log "creating" (count (users test)) "users")
    (doseq [u (users test)]
      (util/await-fn (str "user " u " created")
                     (fn [] (let [^Reply r (create-user! chirper u)]
                              (or (.isOk r) (re-find #"(?i)exist" (str (.reason r)))
                                  (throw (ex-info (str "create " u ": " (.reason r)) {})))))
                     60)))

  (invoke! [_ test op]
    (try
      (let [[a b] (:value op)]
        (case (:f op)
          :follow (let [^Reply r (wait! (.follow chirper (long a) (long b)) test)]
                    (if (.isOk r) (assoc op :type :ok) (assoc op :type :fail :error (.reason r))))
          :unfollow (let [^Reply r (wait! (.unfollow chirper (long a) (long b)) test)]
                      (if (.isOk r) (assoc op :type :ok) (assoc op :type :fail :error (.reason r))))
          :post (let [^Reply r (wait! (.post chirper (Post. (long b) (long a) (long b) (str "post " b))) test)]
                  (if (.isOk r) (assoc op :type :ok) (assoc op :type :fail :error (.reason r))))
          :timeline (let [posts (wait! (.timeline chirper (long a)) test)]
                      (assoc op :type :ok :value [a (mapv #(.id ^Post %) posts)]))))
      (catch TimeoutException _ (assoc op :type :info :error :timeout))
      (catch IllegalStateException e (assoc op :type :fail :error (.getMessage e)))))

  (teardown! [_ _])
  (close! [_ _] (when chirper (reg/log-proxy! (.proxy chirper)) (.close chirper))))

(defn generator
  "20% posts, 15% follows, 10% unfollows, 55% timeline reads, over random users."
  [test]
  (let [rng (Random. (long (:seed test 1)))
        us (users test)
        ids (AtomicLong. 0)
        pick #(nth us (.nextInt rng (count us)))
        pair (fn [] (let [a (pick) b (pick)] (if (= a b) [a (nth us (mod (inc (.indexOf ^java.util.List us a)) (count us)))] [a b])))]
    (fn []
      (let [r (.nextDouble rng)]
        (cond (< r 0.20) {:f :post :value [(pick) (.incrementAndGet ids)]}
              (< r 0.35) {:f :follow :value (pair)}
              (< r 0.45) {:f :unfollow :value (pair)}
              :else {:f :timeline :value [(pick) nil]})))))

(defn final-generator
  "One timeline read per user."
  [test]
  (mapv (fn [u] {:f :timeline :value [u nil]}) (users test)))

;; ---------------------------------------------------------------------------
;; Checker

(defn- acyclic?
  "Is the graph {node #{successors}} free of cycles? (Kahn's algorithm.)"
  [graph]
  (let [nodes (set (concat (keys graph) (mapcat val graph)))
        indeg (reduce (fn [m [_ succs]] (reduce #(update %1 %2 (fnil inc 0)) m succs)) {} graph)]
    (loop [queue (filter #(zero? (get indeg % 0)) nodes), indeg indeg, seen 0]
      (if-let [n (first queue)]
        (let [[q indeg] (reduce (fn [[q d] s] (let [d (update d s dec)] [(if (zero? (get d s)) (conj q s) q) d]))
                                [(rest queue) indeg] (get graph n))]
          (recur q indeg (inc seen)))
        (= seen (count nodes))))))

(defn checker
  [_test history _opts]
  (let [pairs (h/pairs (filter h/client-op? history))
        posts (into {} (keep (fn [[inv c]] (when (= :post (:f inv))
                                             (let [[a id] (:value inv)]
                                               [id {:author a :invoked (:index inv)
                                                    :ok (when (h/ok? c) (:index c))}])))
                             pairs))
        follows (keep (fn [[inv c]] (when (= :follow (:f inv))
                                      {:pair (:value inv) :invoked (:index inv) :ok (when (h/ok? c) (:index c))}))
                      pairs)
        unfollows (keep (fn [[inv c]] (when (and (= :unfollow (:f inv)) (not (h/fail? c)))
                                        {:pair (:value inv) :invoked (:index inv)}))
                        pairs)
        reads (vec (keep (fn [[inv c]] (when (and (= :timeline (:f inv)) (h/ok? c))
                                         (let [[u ids] (:value c)]
                                           {:user u :ids ids :id-set (set ids) :invoked (:index inv)
                                            :done (:index c)})))
                         pairs))
        ;; The first invocation of each pair's follows and unfollows: "some op of the pair was
        ;; invoked before idx" is "the first one was" (indexed, so checking stays linear in the
        ;; posts times the reads, not cubic).
        first-invoked (fn [ops] (reduce (fn [m {:keys [pair invoked]}] (update m pair (fnil min invoked) invoked))
                                        {} ops))
        first-follow (first-invoked follows)
        first-unfollow (first-invoked unfollows)
        follow-invoked-before? (fn [u a idx] (when-let [i (first-follow [u a])] (< i idx)))
        ;; An unfollow (u, a) that may have taken effect before the read ended (conservative: any
        ;; unfollow of the pair that did not fail and was invoked before the read completed).
        unfollow-could-interfere? (fn [u a read-done] (when-let [i (first-unfollow [u a])] (< i read-done)))
        ;; A post may have left a timeline through the bound: at some point 50 newer posts could
        ;; have been in it (posts by the reader or by authors it invoked a follow of, invoked
        ;; before the read ended). Unfollows shrink timelines, so its length now says nothing.
        candidates (memoize (fn [u done]
                              (vec (sort > (keep (fn [[id p]]
                                                   (when (and (< (:invoked p) done)
                                                              (or (= u (:author p))
                                                                  (follow-invoked-before? u (:author p) done)))
                                                     id))
                                                 posts)))))
        may-drop? (fn [read id] (let [c (candidates (:user read) (:done read))]
                                  (and (>= (count c) timeline-max) (< id (nth c (dec timeline-max))))))
        errors (transient [])
        err! (fn [kind m] (conj! errors (assoc m :kind kind)))]
    ;; phantoms, duplicates, order, bound
    (doseq [r reads
            :let [{:keys [user ids]} r]]
      (when (not= (count ids) (count (distinct ids))) (err! :duplicate {:read r}))
      (when (> (count ids) timeline-max) (err! :too-long {:read r}))
      (when (not= ids (sort > ids)) (err! :out-of-order {:read r}))
      (doseq [id ids
              :let [p (posts id)]]
        (cond (nil? p) (err! :phantom {:read r :post id})
              (> (:invoked p) (:done r)) (err! :phantom-from-the-future {:read r :post id})
              (and (not= user (:author p)) (not (follow-invoked-before? user (:author p) (:done r))))
              (err! :phantom-not-followed {:read r :post id :author (:author p)}))))
    ;; lost posts: after a completed follow, or the author's own
    (doseq [[id p] posts
            :when (:ok p)
            :let [a (:author p)
                  audience (conj (set (keep (fn [f] (when (and (:ok f) (= a (second (:pair f))) (< (:ok f) (:invoked p)))
                                                      (first (:pair f))))
                                            follows))
                                 a)]
            r reads
            :when (and (contains? audience (:user r)) (> (:invoked r) (:ok p)))
            :when (not (contains? (:id-set r) id))
            :when (not (may-drop? r id))
            :when (or (= a (:user r)) (not (unfollow-could-interfere? (:user r) a (:done r))))]
      (err! :lost {:post id :author a :read r}))
    ;; later timelines of a user extend earlier ones
    (doseq [[u rs] (group-by :user reads)
            :let [rs (vec (sort-by :invoked rs))]
            r1 rs
            ;; the first read of u invoked after r1 completed (later ones follow by induction)
            :let [r2 (first (filter #(> (:invoked %) (:done r1)) rs))]
            :when r2
            id (:ids r1)
            :when (not (contains? (:id-set r2) id))
            :let [a (:author (posts id))]
            :when (not (may-drop? r2 id))
            :when (or (= a u) (not (unfollow-could-interfere? u a (:done r2))))]
      (err! :not-extended {:post id :earlier r1 :later r2}))
    ;; one order of posts over every timeline
    (let [graph (reduce (fn [g r] (reduce (fn [g [x y]] (if (= x y) g (update g x (fnil conj #{}) y))) g (partition 2 1 (:ids r))))
                        {} reads)]
      (when-not (acyclic? graph) (err! :cyclic-order {})))
    (let [errors (persistent! errors)]
      {:valid? (empty? errors)
       :posts (count posts)
       :acknowledged-posts (count (filter :ok (vals posts)))
       :timeline-reads (count reads)
       :error-count (count errors)
       :error-kinds (frequencies (map :kind errors))
       :errors (vec (take 20 errors))})))

(defn workload [test]
  {:client (->ChirperWorkloadClient nil)
   :generator (generator test)
   :final-generator (final-generator test)
   :checker checker})
