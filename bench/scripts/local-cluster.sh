# Sourced by failover.sh and upgrade.sh: a 3-node cluster file on this machine's loopback.
# local_cluster NAME FILE picks a free block of ports between 10000 and 32000 (below Linux's
# ephemeral range, 32768-60999, so no outgoing connection can hold one): Raft base+1..3, client
# base+11..13, metrics base+21..23; sets `base` and writes FILE (the oracle and four partitions,
# each on nodes 1-3). Exits 3 if no block is free, naming NAME.
# await_ready ID waits until node ID's /ready answers 200; it reads the caller's `out` (where
# node ID logs to node$ID.log and the summary goes) and `pids` (the node processes by id), and
# fails the run (exit 3) if the process ended or 120 s passed.
# await_load PID LOG waits until a `chirper load` (process PID, output LOG) has finished its setup
# and begun to load (a line starting "load:"), or fails the run after 300 s or if it ended.

# A port is free if nothing listens on it and nothing is connected from or to it.
port_free() { ! ss -Htan "( sport = :$1 or dport = :$1 )" 2> /dev/null | grep -q .; }

block_free() {
  local o
  for o in 1 2 3 11 12 13 21 22 23; do port_free $(( $1 + o )) || return 1; done
}

local_cluster() {
  local file=$2 n p
  cluster_name=$1
  base=
  for _ in $(seq 1 50); do
    base=$(( 10000 + (RANDOM % 2200) * 10 ))
    block_free "$base" && break
    base=
  done
  if [[ -z "$base" ]]; then
    echo "$cluster_name: found no free block of ports between 10000 and 32000" >&2
    exit 3
  fi
  {
    for n in 1 2 3; do echo "node $n 127.0.0.1 raft=$((base + n)) client=$((base + 10 + n))"; done
    echo "group oracle oracle 1,2,3"
    for p in 0 1 2 3; do echo "group p$p partition 1,2,3"; done
  } > "$file"
}

await_ready() {
  local deadline=$(( SECONDS + 120 ))
  until curl -fsS -o /dev/null "http://127.0.0.1:$(( base + 20 + $1 ))/ready" 2> /dev/null; do
    if ! kill -0 "${pids[$1]}" 2> /dev/null || (( SECONDS > deadline )); then
      echo "$cluster_name: node $1 never became ready (see $out/node$1.log)" | tee -a "$out/summary.txt"
      tail -5 "$out/node$1.log" >&2 || true
      exit 3
    fi
    sleep 0.2
  done
}

await_load() {
  local deadline=$(( SECONDS + 300 ))
  until grep -q '^load:' "$2"; do
    if ! kill -0 "$1" 2> /dev/null || (( SECONDS > deadline )); then
      echo "$cluster_name: the load did not start" | tee -a "$out/summary.txt"
      cat "$2"
      exit 3
    fi
    sleep 0.2
  done
}
