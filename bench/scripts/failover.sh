#!/usr/bin/env bash
# Failover under load (issue 15): three `bin/chirper node` processes on this machine, a
# `bin/chirper load` (Mix, 100 users) against them, one node killed with -9 mid-run and started
# again 12 s later on its data. Prints the load's summary (its max latency is the figure the
# issue asks about) and writes it, with the nodes' logs, to OUT_DIR.
#
#   bench/scripts/failover.sh [OUT_DIR] [--victim N] [--duration S] [--kill-at S] [--down S]
#
# Defaults: OUT_DIR bench/results/failover, victim node 2, 45 s of load, kill 15 s into the
# load, restart 12 s later. Ports: a random block above 20000 (the cluster file is written to
# OUT_DIR/cluster.conf). Exit code: that of the load (1 if a command failed or timed out).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ "${1:-}" == --help ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
out=bench/results/failover
if [[ $# -gt 0 && "$1" != --* ]]; then out=$1; shift; fi
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
cd "$root"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
data="$(mktemp -d /tmp/eyrie-failover.XXXXXX)"
base=$(( 20000 + RANDOM % 20000 ))
{
  for n in 1 2 3; do echo "node $n 127.0.0.1 raft=$((base + n)) client=$((base + 10 + n))"; done
  echo "group oracle oracle 1,2,3"
  for p in 0 1 2 3; do echo "group p$p partition 1,2,3"; done
} > "$out/cluster.conf"
bin/chirper --help > /dev/null # builds the jar on first use

pids=()
start_node() { # id
  bin/chirper node --cluster "$out/cluster.conf" --id "$1" --data "$data/n$1" >> "$out/node$1.log" 2>&1 &
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

echo "failover: nodes up on ports from $base; loading (setup first), $duration s of Mix" | tee "$out/summary.txt"
load_log="$out/load.txt"
bin/chirper load --cluster "$out/cluster.conf" --workload mix --users 100 --follows 5 --duration "${duration}s" --out "$out/load" \
  > "$load_log" 2>&1 &
load=$!
# The setup phase comes first: wait until the load phase has begun before counting.
deadline=$(( SECONDS + 300 ))
until grep -q '^load:' "$load_log"; do
  if ! kill -0 "$load" 2> /dev/null || (( SECONDS > deadline )); then
    echo "failover: the load did not start" | tee -a "$out/summary.txt"
    cat "$load_log"
    exit 3
  fi
  sleep 0.2
done
sleep "$kill_at"
echo "failover: kill -9 node $victim at $(date -u +%T)" | tee -a "$out/summary.txt"
kill -9 "${pids[$victim]}"
wait "${pids[$victim]}" 2> /dev/null || true
sleep "$down"
echo "failover: restarting node $victim at $(date -u +%T)" | tee -a "$out/summary.txt"
start_node "$victim"
code=0
wait "$load" || code=$?
sed -n '/Chirper summary/,$p' "$load_log" | tee -a "$out/summary.txt"
echo "failover: load exit code $code" | tee -a "$out/summary.txt"
exit "$code"
