#!/usr/bin/env bash
# bench/uuid.sh: net cost per row of acorn's id functions, as ratios to
# randomblob(16) measured in the same sqlite3 process.
#
#   bash bench/uuid.sh [ROWS] [ROUNDS]      (defaults 1000000 and 5)
#
# Each expression E is timed as SELECT count(E) over ROWS rows; the same
# loop with no function (count(value), or count(x) over the stored inputs of
# the converters) is subtracted.  CPU time (user+sys) of each statement comes
# from the shell's .timer; every round times every expression once, in turn,
# and the median of ROUNDS rounds is kept.  The targets are acorn's own
# (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
ROUNDS=${2:-5}
[ -f dist/acorn.so ] || make -s dist/acorn.so
mkdir -p build
cc -O2 -o build/clock_cost bench/clock_cost.c
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
echo "step: $ROUNDS rounds of 15 expressions over $ROWS rows each, in one sqlite3 (about a minute at the defaults)"

# name|expression|loop|target; loop: gen = generate_series, conv = a table of
# canonical uuid7 text, convb = a table of uuid7 blobs
CASES='randomblob(16)|randomblob(16)|gen|1.00
lower(hex(randomblob(16)))|lower(hex(randomblob(16)))|gen|-
uuid4_blob()|uuid4_blob()|gen|0.30
uuid4()|uuid4()|gen|0.40
uuid7()|uuid7()|gen|0.40
uuid7_blob()|uuid7_blob()|gen|0.40
uuid8()|uuid8()|gen|0.40
uuid8_blob()|uuid8_blob()|gen|0.40
uuid7(ms) (no clock read)|uuid7(1700000000000)|gen|-
uuid7_blob(ms) (no clock read)|uuid7_blob(1700000000000)|gen|-
uuid_blob(text)|uuid_blob(x)|conv|0.40
uuid_str(text)|uuid_str(x)|conv|0.40
uuid_str(blob)|uuid_str(b)|convb|-
uuid_version(text)|uuid_version(x)|conv|-
uuid_timestamp(text)|uuid_timestamp(x)|conv|-'

{
  echo ".load ./dist/acorn"
  # One narrow table per input kind keeps the converters' bare loop cheap.
  echo "CREATE TEMP TABLE c AS SELECT uuid7() AS x FROM generate_series(1,$ROWS);"
  echo "CREATE TEMP TABLE cb AS SELECT uuid7_blob() AS b FROM generate_series(1,$ROWS);"
  echo ".timer on"
  for r in $(seq "$ROUNDS"); do
    echo ".print T|loop:gen"
    echo "SELECT count(value) FROM generate_series(1,$ROWS);"
    echo ".print T|loop:conv"
    echo "SELECT count(x) FROM c;"
    echo ".print T|loop:convb"
    echo "SELECT count(b) FROM cb;"
    while IFS='|' read -r name expr loop target; do
      echo ".print T|$name"
      case $loop in
        gen)   echo "SELECT count($expr) FROM generate_series(1,$ROWS);" ;;
        conv)  echo "SELECT count($expr) FROM c;" ;;
        convb) echo "SELECT count($expr) FROM cb;" ;;
      esac
    done <<< "$CASES"
  done
} | sqlite3 -batch :memory: > "$OUT"
CLOCK_NS=$(build/clock_cost)
awk -v rows="$ROWS" -v cases="$CASES" -v clock_ns="$CLOCK_NS" '
  # The shell prints the label, the count, then the timer line of the statement.
  /^T[|]/ { name = substr($0, 3); next }
  /^Run Time:/ { v[name SUBSEP (++cnt[name])] = $6 + $8 }
  function median(name,   n, i, j, a, tmp) {
    n = cnt[name]
    for (i = 1; i <= n; i++) a[i] = v[name SUBSEP i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { tmp = a[i]; a[i] = a[j]; a[j] = tmp }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    ncase = split(cases, lines, "\n")
    for (i = 1; i <= ncase; i++) {
      split(lines[i], f, "|"); order[i] = f[1]; loop[f[1]] = "loop:" f[3]; target[f[1]] = f[4]
    }
    base = median("randomblob(16)") - median("loop:gen")
    printf "rows per statement: %d, median of %d rounds, CPU time net of the bare loop\n", rows, cnt["loop:gen"]
    printf "bare loops: generate_series %.1f ns/row, stored text %.1f ns/row, stored blobs %.1f ns/row\n\n", \
           median("loop:gen") * 1e9 / rows, median("loop:conv") * 1e9 / rows, median("loop:convb") * 1e9 / rows
    printf "| %-30s | %9s | %12s | %6s | %s\n", "expression", "ns/row", "x randomblob", "target", ""
    printf "|%s|%s|%s|%s|%s\n", "--------------------------------", "-----------", "--------------", "--------", "----"
    met = 0; missed = 0
    for (i = 1; i <= ncase; i++) {
      n = order[i]; net = median(n) - median(loop[n])
      ratio = net / base
      verdict = ""
      if (target[n] != "-" && target[n] != "1.00") { verdict = (ratio <= target[n]) ? "ok" : "MISSED"; if (verdict == "MISSED") missed++; else met++ }
      printf "| %-30s | %9.1f | %12.2f | %6s | %s\n", n, net * 1e9 / rows, ratio, target[n], verdict
    }
    printf "\ntargets: %d met, %d missed\n", met, missed
    printf "one clock_gettime(CLOCK_REALTIME), which uuid7() and uuid8() make per id: %.1f ns = %.2f x randomblob(16)\n", \
           clock_ns, clock_ns * 1e-9 * rows / base
  }' "$OUT"
