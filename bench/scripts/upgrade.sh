#!/usr/bin/env bash
# A rolling upgrade under load (issue 29 item 3): three `chirper node` processes of an older
# commit's build on this machine, a `chirper load` (Mix) against them, then each node in turn
# stopped (SIGTERM) and started again on the same data with the current tree's build, waiting
# for it to answer /ready before the next. Prints the load's summary and writes it, with the
# nodes' logs, to OUT_DIR.
#
#   bench/scripts/upgrade.sh [OUT_DIR] [--from COMMIT] [--load old|new] [--duration S] [--settle S]
#
# --from: the commit (or tag) whose build the cluster starts on; default the newest tag
# reachable from HEAD (there must be one, or pass --from). Its chirper.jar is built once into
# ${EYRIE_UPGRADE_CACHE:-~/.cache/eyrie/upgrade}/SHA/ by bin/old-build (`git archive` of the
# commit, the jepsen module and what it needs packaged; the jepsen upgrade nemesis uses the
# same build). --load: which build the load
# runs on (default old: the clients are upgraded after the nodes). Defaults: OUT_DIR
# bench/results/upgrade, 120 s of load (a restart took 15-25 s on 2 cores), 8 s between
# restarts. The run fails (exit 3) if a node never becomes ready on either build or a log says
# a version was refused; otherwise the exit code is that of the load (1 if a command failed or
# timed out). It does not check linearizability: the jepsen upgrade nemesis does
# (`bin/jepsen test --workload register --nemesis upgrade`, jepsen/README.md). One try from
# d4a2d59 with --duration 60 --settle 5: exit 0, no error or timeout in 10,463 commands, but
# p99 10 s, max 18 s, and the load ended 4 s before the third node was ready (hence the longer
# default).
set -euo pipefail
name=upgrade
# shellcheck source=args.sh
source "$(dirname "$0")/args.sh"
from= load_build=old duration=120 settle=8
while [[ $# -gt 0 ]]; do
  case "$1" in
    --from) from=$2; shift 2 ;;
    --load) load_build=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --settle) settle=$2; shift 2 ;;
    *) echo "upgrade.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$load_build" == old || "$load_build" == new ]] || { echo "upgrade.sh: --load old|new" >&2; exit 2; }
for tool in curl ss git; do
  command -v "$tool" > /dev/null || { echo "upgrade: needs $tool" >&2; exit 3; }
done
cd "$root"
if [[ -z "$from" ]]; then
  from=$(git describe --tags --abbrev=0 HEAD 2> /dev/null) || {
    echo "upgrade: no tag reachable from HEAD; pass --from COMMIT" >&2
    exit 2
  }
fi
sha=$(git rev-parse --verify "$from^{commit}")
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The older build, cached by commit (bin/old-build fails with exit 3 and one line).
cache=$("$root/bin/old-build" "$sha") || exit 3
old_jar="$cache/chirper.jar"
# The current tree's build, copied so that a rebuild during the run cannot change it.
echo "upgrade: building the current tree" >&2
./mvnw -o -q -DskipTests -pl chirper -am package >&2
new_jar="$out/chirper-new.jar"
cp chirper/target/chirper.jar "$new_jar"
cp "$old_jar" "$out/chirper-old.jar"
old_jar="$out/chirper-old.jar"

data="$(mktemp -d /tmp/eyrie-upgrade.XXXXXX)"
# shellcheck source=local-cluster.sh
source "$root/bench/scripts/local-cluster.sh"
local_cluster upgrade "$out/cluster.conf"

pids=()
start_node() { # id jar
  echo "--- start on $(basename "$2") at $(date -u +%T)" >> "$out/node$1.log"
  java -Xms512m -Xmx2g -XX:+UseG1GC -Djava.awt.headless=true -jar "$2" node --cluster "$out/cluster.conf" \
    --id "$1" --data "$data/n$1" --metrics-port $(( base + 20 + $1 )) >> "$out/node$1.log" 2>&1 &
  pids[$1]=$!
}
stop_node() { # id: SIGTERM, then wait up to 60 s for the process to end
  kill "${pids[$1]}" 2> /dev/null || true
  local deadline=$(( SECONDS + 60 ))
  while kill -0 "${pids[$1]}" 2> /dev/null; do
    if (( SECONDS > deadline )); then
      echo "upgrade: node $1 did not stop within 60 s; killing it" | tee -a "$out/summary.txt"
      kill -9 "${pids[$1]}" 2> /dev/null || true
    fi
    sleep 0.2
  done
  wait "${pids[$1]}" 2> /dev/null || true
}
load=
cleanup() {
  [[ -n "$load" ]] && kill "$load" 2> /dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
: > "$out/node1.log"; : > "$out/node2.log"; : > "$out/node3.log"
for n in 1 2 3; do start_node "$n" "$old_jar"; done
for n in 1 2 3; do await_ready "$n"; done

load_jar=$old_jar
[[ "$load_build" == new ]] && load_jar=$new_jar
echo "upgrade: $from ($sha) -> $(git rev-parse HEAD)$(git diff --quiet HEAD -- . || echo ' + changes'); nodes up on ports from $base; load on the $load_build build, $duration s of Mix" | tee "$out/summary.txt"
load_log="$out/load.txt"
java -Xms512m -Xmx2g -XX:+UseG1GC -Djava.awt.headless=true -jar "$load_jar" load --cluster "$out/cluster.conf" \
  --workload mix --users 100 --follows 5 --duration "${duration}s" --out "$out/load" > "$load_log" 2>&1 &
load=$!
await_load "$load" "$load_log"
for n in 1 2 3; do
  sleep "$settle"
  echo "upgrade: stopping node $n at $(date -u +%T)" | tee -a "$out/summary.txt"
  stop_node "$n"
  start_node "$n" "$new_jar"
  await_ready "$n"
  echo "upgrade: node $n ready on the current build at $(date -u +%T)" | tee -a "$out/summary.txt"
done
if ! kill -0 "$load" 2> /dev/null; then
  echo "upgrade: warning: the load ended before the last node was upgraded (raise --duration)" | tee -a "$out/summary.txt"
fi
code=0
wait "$load" || code=$?
load=
sed -n '/Chirper summary/,$p' "$load_log" | tee -a "$out/summary.txt"
if grep -a -E -n 'unsupported (snapshot|frame) version|cannot read snapshot' "$out"/node?.log | tee -a "$out/summary.txt"; then
  echo "upgrade: a node refused a version (above)" | tee -a "$out/summary.txt"
  exit 3
fi
echo "upgrade: load exit code $code" | tee -a "$out/summary.txt"
exit "$code"
