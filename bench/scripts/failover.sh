#!/usr/bin/env bash
# Failover under load (issue 15): three `bin/chirper node` processes on this machine, a
# `bin/chirper load` (Mix, 100 users) against them, one node killed with -9 mid-run and started
# again 12 s later on its data. Prints the load's summary (its max latency is the figure the
# issue asks about) and writes it, with the nodes' logs, to OUT_DIR.
#
#   bench/scripts/failover.sh [OUT_DIR] [--victim N] [--duration S] [--kill-at S] [--down S]
#
# Defaults: OUT_DIR bench/results/failover, victim node 2, 45 s of load, kill 15 s into the
# load, restart 12 s later. Ports: a free block between 10000 and 32000, below Linux's ephemeral
# range (32768-60999), so no outgoing connection can hold one (the cluster file is written to
# OUT_DIR/cluster.conf). The load starts only once every node answers /ready, and the restarted
# node must answer it again; a node that never does fails the run (exit 3). Otherwise the exit
# code is that of the load (1 if a command failed or timed out).
set -euo pipefail
name=failover
# shellcheck source=args.sh
source "$(dirname "$0")/args.sh"
victim=2 duration=45 kill_at=15 down=12
while [[ $# -gt 0 ]]; do
  case "$1" in
    --victim) victim=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --kill-at) kill_at=$2; shift 2 ;;
    --down) down=$2; shift 2 ;;
    *) echo "failover.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for tool in curl ss; do
  command -v "$tool" > /dev/null || { echo "failover: needs $tool (apt-get install curl iproute2)" >&2; exit 3; }
done
cd "$root"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
data="$(mktemp -d /tmp/eyrie-failover.XXXXXX)"
# shellcheck source=local-cluster.sh
source "$root/bench/scripts/local-cluster.sh"
local_cluster failover "$out/cluster.conf"
bin/chirper --help > /dev/null # builds the jar on first use

pids=()
start_node() { # id
  bin/chirper node --cluster "$out/cluster.conf" --id "$1" --data "$data/n$1" --metrics-port $(( base + 20 + $1 )) \
    >> "$out/node$1.log" 2>&1 &
  pids[$1]=$!
}
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
: > "$out/node1.log"; : > "$out/node2.log"; : > "$out/node3.log"
for n in 1 2 3; do start_node "$n"; done
for n in 1 2 3; do await_ready "$n"; done

echo "failover: nodes up on ports from $base; loading (setup first), $duration s of Mix" | tee "$out/summary.txt"
load_log="$out/load.txt"
bin/chirper load --cluster "$out/cluster.conf" --workload mix --users 100 --follows 5 --duration "${duration}s" --out "$out/load" \
  --resend-log "$out/resends.txt" \
  > "$load_log" 2>&1 &
load=$!
# The setup phase comes first: wait until the load phase has begun before counting.
await_load "$load" "$load_log"
sleep "$kill_at"
echo "failover: kill -9 node $victim at $(date -u +%T)" | tee -a "$out/summary.txt"
kill -9 "${pids[$victim]}"
wait "${pids[$victim]}" 2> /dev/null || true
sleep "$down"
echo "failover: restarting node $victim at $(date -u +%T)" | tee -a "$out/summary.txt"
start_node "$victim"
await_ready "$victim"
echo "failover: node $victim ready again at $(date -u +%T)" | tee -a "$out/summary.txt"
code=0
wait "$load" || code=$?
sed -n '/Chirper summary/,$p' "$load_log" | tee -a "$out/summary.txt"
echo "failover: load exit code $code" | tee -a "$out/summary.txt"
exit "$code"
