#!/usr/bin/env bash
# bench/insert.sh: bench_insert against a plain C program doing the same run
# (bench/ref_insert.c), in the same directory, REPEAT rounds per scenario.
# Each round runs three programs back to back, in an order that rotates from
# round to round (ref, default, statement; default, statement, ref; ...):
#   ref_insert   the C loop
#   default      bench_insert's built-in INSERT
#   statement    bench_insert with statement set to the same INSERT
#                ('Some title' as a literal, ?3 the content)
# Prints each run and, per scenario, the medians and
#   ratio        default / ref_insert, of the medians (target: >= 0.95)
#   pair_ratio   the median of the per-round default / ref_insert ratios
#                (each round ran back to back, so it is less exposed to the
#                machine's drift between rounds)
#   stmt_ratio   statement / ref_insert, of the medians
#   stmt_vs_def  the median of the per-round statement / default ratios
#                (1.0: the statement path costs what the built-in one does)
#
#   bash bench/insert.sh            (from the project root; `make bench`
#                                    saves the output as insert.txt)
#   BENCH_DIR=/some/dir REPEAT=5 bash bench/insert.sh
#
# All three use busy_timeout=10000 (bench_insert's default is 1000): with 4
# writers on a busy 2-core machine a writer can wait longer than 1 s for the
# write lock, and a run that gives up measures nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
make --no-print-directory -s dist/acorn.so build/ref_insert

REPEAT=${REPEAT:-5}
BUSY=10000
base=${BENCH_DIR:-${TMPDIR:-/tmp}}
dir=$(mktemp -d "$base/acorn-insert-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN{print a/b}'; }

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "machine: $(nproc) cpus, $(uname -sr); dir $dir on $(df -T "$dir" | awk 'NR==2{print $2}'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sqlite3 $(sqlite3 --version | cut -d' ' -f1); synchronous=normal journal=wal id=integer busy_timeout=$BUSY"
hdr() {
  printf '%-24s %10s %10s %10s %7s %10s %10s %11s\n' scenario ref_insert default statement \
    ratio pair_ratio stmt_ratio stmt_vs_def
}
hdr

STATEMENT="INSERT INTO posts(title,content) VALUES(''Some title'',?3)"

run_scenario() {  # name threads batch rows
  local name=$1 threads=$2 batch=$3 rows=$4 i k p v
  run_ref() {
    ./build/ref_insert "$dir" threads="$threads" batch="$batch" rows="$rows" \
      synchronous=normal journal=wal busy_timeout="$BUSY" | sed -n 's/^writes_per_sec=\([0-9]*\).*/\1/p'
  }
  run_bench() {  # [statement]
    local qdir=${dir//\'/\'\'} extra=""   # the dir as an SQL string: ' doubled
    [ -z "${1:-}" ] || extra=" AND statement='$1'"
    printf '.load ./dist/acorn\nSELECT writes_per_sec FROM bench_insert WHERE threads=%d AND batch=%d AND rows=%d AND synchronous=%s AND journal=%s AND busy_timeout=%d AND dir=%s%s;\n' \
      "$threads" "$batch" "$rows" "'normal'" "'wal'" "$BUSY" "'$qdir'" "$extra" | sqlite3 -batch -bail :memory:
  }
  local refs=() defs=() stmts=() pairs=() svd=()
  local progs=(ref default statement)
  for ((i = 1; i <= REPEAT; i++)); do
    local r="" d="" s=""
    for ((k = 0; k < 3; k++)); do
      p=${progs[$(( (i - 1 + k) % 3 ))]}
      case $p in
        ref)       r=$(run_ref) ;;
        default)   d=$(run_bench) ;;
        statement) s=$(run_bench "$STATEMENT") ;;
      esac
    done
    echo "  $name run $i: ref_insert $r  default $d  statement $s"
    refs+=("$r"); defs+=("$d"); stmts+=("$s")
    pairs+=("$(div "$d" "$r")"); svd+=("$(div "$s" "$d")")
  done
  local mr md ms mp mv
  mr=$(printf '%s\n' "${refs[@]}" | median)
  md=$(printf '%s\n' "${defs[@]}" | median)
  ms=$(printf '%s\n' "${stmts[@]}" | median)
  mp=$(printf '%s\n' "${pairs[@]}" | median)
  mv=$(printf '%s\n' "${svd[@]}" | median)
  printf '%-24s %10s %10s %10s %7.3f %10.3f %10.3f %11.3f\n' "$name" "$mr" "$md" "$ms" \
    "$(div "$md" "$mr")" "$mp" "$(div "$ms" "$mr")" "$mv" | tee -a "$dir/summary"
}

echo "step 1/3: 1 thread, autocommit, 50000 rows, $REPEAT runs of each program"
run_scenario "1 thread, autocommit" 1 1 50000
echo "step 2/3: 4 threads, autocommit, 50000 rows, $REPEAT runs of each program"
run_scenario "4 threads, autocommit" 4 1 50000
echo "step 3/3: 1 thread, batch 1000, 500000 rows, $REPEAT runs of each program"
run_scenario "1 thread, batch 1000" 1 1000 500000
echo "== summary (medians of $REPEAT, writes/s)"
hdr
cat "$dir/summary"
if ls "$dir" | grep -v '^summary$' | grep -q .; then
  echo "scratch files left behind in $dir:"; ls -la "$dir"; exit 1
fi
