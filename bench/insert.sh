#!/usr/bin/env bash
# bench/insert.sh: bench_insert against a plain C program doing the same run
# (bench/ref_insert.c), alternately (ABBA order), five times each, in the same
# directory.
# Prints each run and, per scenario, the medians and their ratio
# bench_insert/ref_insert (target: at least 0.95 in every scenario), and the
# median of the five per-pair ratios (pair_ratio: each pair ran back to back,
# so it is less exposed to the machine's drift between pairs).
#
#   bash bench/insert.sh            (from the project root; `make bench`
#                                    saves the output as insert.txt)
#   BENCH_DIR=/some/dir REPEAT=5 bash bench/insert.sh
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory -s dist/acorn.so build/ref_insert

REPEAT=${REPEAT:-5}
base=${BENCH_DIR:-${TMPDIR:-/tmp}}
dir=$(mktemp -d "$base/acorn-insert-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "machine: $(nproc) cpus, $(uname -sr); dir $dir on $(df -T "$dir" | awk 'NR==2{print $2}')"
echo "sqlite3 $(sqlite3 --version | cut -d' ' -f1); synchronous=normal journal=wal id=integer"
printf '%-26s %10s %10s %7s %11s\n' scenario ref_insert bench_ins ratio pair_ratio

run_scenario() {  # name threads batch rows
  local name=$1 threads=$2 batch=$3 rows=$4 i r b
  run_ref() {
    ./build/ref_insert "$dir" threads="$threads" batch="$batch" rows="$rows" \
      synchronous=normal journal=wal | sed -n 's/^writes_per_sec=\([0-9]*\).*/\1/p'
  }
  run_bench() {
    local qdir=${dir//\'/\'\'}   # the dir as an SQL string: ' doubled
    printf '.load ./dist/acorn\nSELECT writes_per_sec FROM bench_insert WHERE threads=%d AND batch=%d AND rows=%d AND synchronous=%s AND journal=%s AND dir=%s;\n' \
      "$threads" "$batch" "$rows" "'normal'" "'wal'" "'$qdir'" | sqlite3 -batch -bail :memory:
  }
  local refs=() bis=() pairs=()
  for ((i = 1; i <= REPEAT; i++)); do
    # ABBA order: odd runs start with ref_insert, even runs with bench_insert,
    # so that neither always runs right after the other's file was removed
    if ((i % 2)); then r=$(run_ref); b=$(run_bench); else b=$(run_bench); r=$(run_ref); fi
    echo "  $name run $i: ref_insert $r  bench_insert $b"
    refs+=("$r"); bis+=("$b")
    pairs+=("$(awk -v a="$b" -v b="$r" 'BEGIN{print a/b}')")
  done
  local mr mb mp
  mr=$(printf '%s\n' "${refs[@]}" | median)
  mb=$(printf '%s\n' "${bis[@]}" | median)
  mp=$(printf '%s\n' "${pairs[@]}" | median)
  printf '%-26s %10s %10s %7.3f %11.3f\n' "$name" "$mr" "$mb" \
    "$(awk -v a="$mb" -v b="$mr" 'BEGIN{print a/b}')" "$mp" | tee -a "$dir/summary"
}

echo "step 1/3: 1 thread, autocommit, 50000 rows, $REPEAT runs of each program"
run_scenario "1 thread, autocommit" 1 1 50000
echo "step 2/3: 4 threads, autocommit, 50000 rows, $REPEAT runs of each program"
run_scenario "4 threads, autocommit" 4 1 50000
echo "step 3/3: 1 thread, batch 1000, 500000 rows, $REPEAT runs of each program"
run_scenario "1 thread, batch 1000" 1 1000 500000
echo "== summary (medians of $REPEAT, writes/s)"
printf '%-26s %10s %10s %7s %11s\n' scenario ref_insert bench_ins ratio pair_ratio
cat "$dir/summary"
if ls "$dir" | grep -v '^summary$' | grep -q .; then
  echo "scratch files left behind in $dir:"; ls -la "$dir"; exit 1
fi
