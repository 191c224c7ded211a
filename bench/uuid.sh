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
# (docs/performance.md).  After the table, pairs measured in the same rounds:
# each alias against the function it names, ulid() against uuid7() (target:
# at most 1.10), and uuid5() against the shell's sha3() of the same names.
# uuidv7(shift) asks SQLite for the time on every call, so it runs over
# ROWS/100 rows (loop gen100) and is reported per call like the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
ROUNDS=${2:-5}
[ -f dist/acorn.so ] || make -s dist/acorn.so
mkdir -p build
cc -O2 -o build/clock_cost bench/clock_cost.c
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
# name|expression|loop|target; loop: gen = generate_series, gen100 = the
# same over ROWS/100 rows, conv = a table of canonical uuid7 text, convb = a
# table of uuid7 blobs, convu = a table of ULID text
CASES=$(cat <<'END'
randomblob(16)|randomblob(16)|gen|1.00
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
uuid_timestamp(text)|uuid_timestamp(x)|conv|-
uuid() (SQLite name)|uuid()|gen|-
gen_random_uuid()|gen_random_uuid()|gen|-
uuidv7() (PostgreSQL name)|uuidv7()|gen|-
ulid()|ulid()|gen|-
ulid_blob()|ulid_blob()|gen|-
uuidv7(shift) -1 hour|uuidv7('-1 hour')|gen100|-
uuid_nil()|uuid_nil()|gen|-
uuid5(ns, text)|uuid5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', x)|conv|-
sha3(text) (sqlite3 shell)|sha3(x)|conv|-
uuid_extract_timestamp(text)|uuid_extract_timestamp(x)|conv|-
uuid7_timestamp_ms(text)|uuid7_timestamp_ms(x)|conv|-
uuid_to_ulid(text)|uuid_to_ulid(x)|conv|-
ulid_to_uuid(ulid text)|ulid_to_uuid(u)|convu|-
ulid_timestamp(ulid text)|ulid_timestamp(u)|convu|-
END
)
NCASES=$(echo "$CASES" | wc -l)
echo "step: $ROUNDS rounds of $NCASES expressions over $ROWS rows each, in one sqlite3 (under a minute at the defaults)"

{
  echo ".load ./dist/acorn"
  # One narrow table per input kind keeps the converters' bare loop cheap.
  echo "CREATE TEMP TABLE c AS SELECT uuid7() AS x FROM generate_series(1,$ROWS);"
  echo "CREATE TEMP TABLE cb AS SELECT uuid7_blob() AS b FROM generate_series(1,$ROWS);"
  echo "CREATE TEMP TABLE cu AS SELECT ulid() AS u FROM generate_series(1,$ROWS);"
  echo ".timer on"
  for r in $(seq "$ROUNDS"); do
    echo ".print T|loop:gen"
    echo "SELECT count(value) FROM generate_series(1,$ROWS);"
    echo ".print T|loop:conv"
    echo "SELECT count(x) FROM c;"
    echo ".print T|loop:convb"
    echo "SELECT count(b) FROM cb;"
    echo ".print T|loop:convu"
    echo "SELECT count(u) FROM cu;"
    echo ".print T|loop:gen100"
    echo "SELECT count(value) FROM generate_series(1,$((ROWS / 100)));"
    while IFS='|' read -r name expr loop target; do
      echo ".print T|$name"
      case $loop in
        gen)   echo "SELECT count($expr) FROM generate_series(1,$ROWS);" ;;
        gen100) echo "SELECT count($expr) FROM generate_series(1,$((ROWS / 100)));" ;;
        convu) echo "SELECT count($expr) FROM cu;" ;;
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
  function pair(a, b, target,   q) {
    q = nsrow[a] / nsrow[b]
    printf "  %-30s / %-26s %8.1f / %6.1f ns = %5.2f%s\n", a, b, nsrow[a], nsrow[b], q, \
           (target == "-") ? "" : sprintf("  (target %s: %s)", target, (q <= target) ? "ok" : "MISSED")
  }
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
    nrows["loop:gen100"] = int(rows / 100)
    printf "rows per statement: %d, median of %d rounds, CPU time net of the bare loop\n", rows, cnt["loop:gen"]
    printf "bare loops: generate_series %.1f ns/row, stored text %.1f ns/row, stored blobs %.1f ns/row\n\n", \
           median("loop:gen") * 1e9 / rows, median("loop:conv") * 1e9 / rows, median("loop:convb") * 1e9 / rows
    printf "| %-30s | %9s | %12s | %6s | %s\n", "expression", "ns/row", "x randomblob", "target", ""
    printf "|%s|%s|%s|%s|%s\n", "--------------------------------", "-----------", "--------------", "--------", "----"
    met = 0; missed = 0
    for (i = 1; i <= ncase; i++) {
      n = order[i]; r = (loop[n] in nrows) ? nrows[loop[n]] : rows
      net = (median(n) - median(loop[n])) * rows / r
      nsrow[n] = net * 1e9 / rows
      ratio = net / base
      verdict = ""
      if (target[n] != "-" && target[n] != "1.00") { verdict = (ratio <= target[n]) ? "ok" : "MISSED"; if (verdict == "MISSED") missed++; else met++ }
      printf "| %-30s | %9.1f | %12.2f | %6s | %s\n", n, net * 1e9 / rows, ratio, target[n], verdict
    }
    printf "\ntargets: %d met, %d missed\n", met, missed
    printf "\npairs, net ns per call in the same rounds:\n"
    pair("uuid() (SQLite name)", "uuid4()", "-")
    pair("gen_random_uuid()", "uuid4()", "-")
    pair("uuidv7() (PostgreSQL name)", "uuid7()", "-")
    pair("ulid()", "uuid7()", "1.10")
    pair("ulid_blob()", "uuid7_blob()", "-")
    pair("uuid5(ns, text)", "sha3(text) (sqlite3 shell)", "-")
    pair("uuidv7(shift) -1 hour", "uuid7()", "-")
    printf "one clock_gettime(CLOCK_REALTIME), which uuid7() and uuid8() make per id: %.1f ns = %.2f x randomblob(16)\n", \
           clock_ns, clock_ns * 1e-9 * rows / base
  }' "$OUT"
