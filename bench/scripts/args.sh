# Sourced first by failover.sh and upgrade.sh, with `name` (failover, upgrade) set: sets `root`
# (the repository's root) and `out` (the optional OUT_DIR, the first argument unless it is an
# option, shifted off; default bench/results/NAME), or with --help prints the script's header
# comment (from its second line to the first that is not a comment) and exits 0. The script
# parses its options next.
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ "${1:-}" == --help ]]; then
  sed -n '2,/^[^#]/p' "$0" | sed -n 's/^# \{0,1\}//p'
  exit 0
fi
out=bench/results/$name
if [[ $# -gt 0 && "$1" != --* ]]; then out=$1; shift; fi
