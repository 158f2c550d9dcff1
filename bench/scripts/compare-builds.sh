#!/usr/bin/env bash
# Measures builds of the benchmark jar side by side in one run: the DS-SMR oracle phases
# (creates and deletes decided by the oracle, transfers that move accounts; DssmrOpsBenchmark)
# on every build, then one Table 1 cell on every build, back to back.
#
#   bench/scripts/compare-builds.sh OUT_DIR LABEL=JAR LABEL=JAR... [-- TABLE1_ARGS...]
#
# Build a jar of another commit with:
#   git worktree add --detach /tmp/old COMMIT && (cd /tmp/old && ./mvnw -q -DskipTests -pl bench -am package)
# (an older commit may lack io.eyrie.bench.DssmrOpsBenchmark: copy its source into that tree
# first; it uses only the public client API). Default Table 1 cell: 2 partitions, Post.
set -euo pipefail
if [[ $# -lt 2 || "$1" == --help ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  [[ "${1:-}" == --help ]] && exit 0 || exit 2
fi
out=$1
shift
builds=()
while [[ $# -gt 0 && "$1" != -- ]]; do builds+=("$1"); shift; done
[[ "${1:-}" == -- ]] && shift
cell=("$@")
[[ ${#cell[@]} -gt 0 ]] || cell=(--partitions 2 --workloads post --no-baseline --duration 15)
mkdir -p "$out"
run() { # label jar class args...
  local label=$1 jar=$2 cls=$3
  shift 3
  echo "== $label: $cls $*" | tee -a "$out/log.txt"
  java -Xmx6g -XX:+UseParallelGC -Djava.awt.headless=true -cp "$jar" "$cls" "$@" 2>/dev/null > "$out/$label.txt" || true
  grep -E 'RESULT|=>|cmd/s, p50' "$out/$label.txt" | tee -a "$out/log.txt" || true
}
for b in "${builds[@]}"; do
  run "${b%%=*}-dssmr" "${b#*=}" io.eyrie.bench.DssmrOpsBenchmark --warmup 5 --duration 15
done
for b in "${builds[@]}"; do
  jar=${b#*=}
  table1=io.eyrie.bench.Table1 # io.eyrie.chirper.Table1 in builds before the package move
  unzip -l "$jar" | grep -q 'io/eyrie/bench/Table1.class' || table1=io.eyrie.chirper.Table1
  run "${b%%=*}-table1" "$jar" "$table1" "${cell[@]}" --out "$out/table1-${b%%=*}"
done
