(ns eyrie.jepsen.client
  "Jepsen's client protocol. The runner opens one client per worker thread (`open!` returns a
  fresh client bound to that worker), calls `setup!` once on one of them before the run and
  `teardown!` once after it, and `close!` on every client it opened. `invoke!` takes an
  invocation op and returns its completion: the same map with `:type` `:ok` (it happened),
  `:fail` (it certainly did not happen) or `:info` (unknown). An exception thrown by `invoke!`
  is recorded as `:info` and the worker continues under a new process id, with a new client.")

(defprotocol Client
  (open! [client test node] "A client for one worker, connected (or connectable) to `node`.")
  (setup! [client test] "Creates what the workload needs (objects, initial values); once per test.")
  (invoke! [client test op] "Performs `op`; returns the completion op.")
  (teardown! [client test] "Undoes `setup!` if needed; once per test.")
  (close! [client test] "Releases this client's resources."))

(def noop
  "A client that does nothing (for nemesis-only tests)."
  (reify Client
    (open! [this _ _] this)
    (setup! [_ _])
    (invoke! [_ _ op] (assoc op :type :ok))
    (teardown! [_ _])
    (close! [_ _])))
