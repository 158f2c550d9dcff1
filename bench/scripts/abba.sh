#!/usr/bin/env bash
# Compares two builds on the same benchmark in ABBA order (A, B, B, A, ...), one JVM per run,
# so that a slow drift of the machine weighs on both alike. Each build is a folder holding
# eyrie-bench.jar and chirper.jar (copy them from bench/target and chirper/target of each build).
#   bench/scripts/abba.sh DIR_A DIR_B OUT ROUNDS table1|demo|multicast [benchmark options...]
# Writes OUT/<label>-<n>.log for every run and prints the runs' summary lines.
set -euo pipefail
a=$1 b=$2 out=$3 rounds=$4 kind=$5
shift 5
extra=("$@")
mkdir -p "$out"
run() {
  local dir=$1 label=$2 n=$3
  local log="$out/$label-$n.log"
  case "$kind" in
    table1) java -Xmx6g -XX:+UseParallelGC -Djava.awt.headless=true -cp "$dir/eyrie-bench.jar" io.eyrie.bench.BenchMain \
        table1 --out "$out/$label-$n" "${extra[@]}" > "$log" 2>&1 ;;
    multicast) java -Xmx4g -Djava.awt.headless=true -cp "$dir/eyrie-bench.jar" io.eyrie.bench.BenchMain \
        multicast --out "$out/$label-$n" "${extra[@]}" > "$log" 2>&1 ;;
    demo) (cd "$out" && java -Xms2g -Xmx6g -XX:+UseG1GC -XX:+AlwaysPreTouch -Djava.awt.headless=true \
        -jar "$dir/chirper.jar" demo "${extra[@]}") > "$log" 2>&1 ;;
  esac
  echo "== $label run $n"
  if [ "$kind" = multicast ]; then grep -E "^\|" "$out/$label-$n/multicast.md" | head -12; return; fi
  grep -E "RESULT|DS-SMR|dssmr|cmd/s|p99|throughput" "$log" | tail -8
}
for ((i = 1; i <= rounds; i++)); do
  if (( i % 2 == 1 )); then run "$a" A "$i"; run "$b" B "$i"; else run "$b" B "$i"; run "$a" A "$i"; fi
done
