#!/usr/bin/env bash
# Measures two builds of the benchmark jar side by side in one run: the DS-SMR oracle phases
# (creates and deletes decided by the oracle, transfers that move accounts) and one Table 1
# cell, each on the "before" jar and then on the "after" jar, back to back.
#
#   bench/scripts/compare-builds.sh BEFORE.jar AFTER.jar OUT_DIR [TABLE1_ARGS...]
#
# Build a jar of another commit with:
#   git worktree add --detach /tmp/before COMMIT && (cd /tmp/before && ./mvnw -q -DskipTests -pl bench -am package)
# (an older commit may lack io.eyrie.bench.DssmrOpsBenchmark: copy its source into that tree
# first; it uses only the public client API). Default Table 1 cell: 2 partitions, Post.
set -euo pipefail
if [[ $# -lt 3 || "$1" == --help ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  [[ "${1:-}" == --help ]] && exit 0 || exit 2
fi
before=$1 after=$2 out=$3
shift 3
cell=("$@")
[[ ${#cell[@]} -gt 0 ]] || cell=(--partitions 2 --workloads post --no-baseline --duration 15)
mkdir -p "$out"
run() { # label jar class args...
  local label=$1 jar=$2 cls=$3
  shift 3
  echo "== $label: $cls $*" | tee -a "$out/log.txt"
  java -Xmx6g -XX:+UseParallelGC -Djava.awt.headless=true -cp "$jar" "$cls" "$@" 2>/dev/null | tee "$out/$label.txt" | grep -E 'RESULT|=>|^\|' | tee -a "$out/log.txt"
}
run before-dssmr "$before" io.eyrie.bench.DssmrOpsBenchmark --warmup 5 --duration 15
run after-dssmr "$after" io.eyrie.bench.DssmrOpsBenchmark --warmup 5 --duration 15
run before-table1 "$before" io.eyrie.chirper.Table1 "${cell[@]}" --out "$out/table1-before"
run after-table1 "$after" io.eyrie.chirper.Table1 "${cell[@]}" --out "$out/table1-after"
