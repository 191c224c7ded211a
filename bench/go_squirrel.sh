#!/usr/bin/env bash
# bench/go_squirrel.sh: squirrel's workloads through acorn's Go package
# (ext/packages/go, bench_test.go; go test -bench through tests/go/run):
#   puts     squirrel's small put ("hello" = "world" again and again):
#            Cache.Put against squirrel's design through database/sql
#            (sql) and by hand on SQLite's blob API through cgo (raw), in
#            WAL and delete journals, synchronous off and normal, a file
#            and memory
#   pieces   2 MiB pieces written in 16 KiB blocks at their offsets, read
#            back through a pinned blob, hashed and compared (8 keys in
#            turn), unbounded and evicting: acorn against raw
#   writers  the Go writer experiment (posts inserted through database/sql
#            from 1, 2, 4 goroutines, with and without a sync.Mutex)
#            against bench_insert doing the same inside SQLite
# in ROUNDS rounds.  In a round each workload is one go test process in
# which the sides of a configuration run back to back, the side going
# first rotating from round to round (ACORN_BENCH_ROUND).  Prints each
# round's lines as go test gives them, then per workload the median of the
# rounds for each side and the median of the per-round ratios, with their
# lowest and highest.
#
#   GO_SQUIRREL_ROUNDS       rounds, default 5
#   GO_SQUIRREL_PUT_TIME     -benchtime of each put configuration and side,
#                            default 0.4s
#   GO_SQUIRREL_PIECE_TIME   -benchtime of each pieces case and side,
#                            default 1s
#   GO_SQUIRREL_WRITER_ROWS  rows a writers configuration inserts on each
#                            side, default 20000
# About 2 minutes with the defaults.  Databases go to go test's temporary
# directories under $TMPDIR (default /tmp), removed as each benchmark ends;
# go test's output is kept in $BENCH_OUT/go_squirrel.out (build/bench/).
# Needs Debian's golang-go and golang-github-mattn-go-sqlite3-dev
# (tests/install-deps bench).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.bash
export LC_ALL=C
make -s dist/acorn.so
rounds=${GO_SQUIRREL_ROUNDS:-5}
put_time=${GO_SQUIRREL_PUT_TIME:-0.4s}
piece_time=${GO_SQUIRREL_PIECE_TIME:-1s}
writer_rows=${GO_SQUIRREL_WRITER_ROWS:-20000}
outdir=${BENCH_OUT:-build/bench}
mkdir -p "$outdir"
out=$outdir/go_squirrel.out
: > "$out"
recs=$(mktemp "${TMPDIR:-/tmp}/acorn-go-squirrel.XXXXXX")

mattn=$(dpkg-query -W -f '${Version}' golang-github-mattn-go-sqlite3-dev 2>/dev/null || echo unknown)
bench_start bench/go_squirrel.sh "${TMPDIR:-/tmp}" \
  ", acorn $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(go version | cut -d' ' -f3), mattn/go-sqlite3 $mattn, SQLite $(sqlite3 --version | cut -d' ' -f1)"
echo "$rounds rounds; puts $put_time, pieces $piece_time a side and configuration; writers $writer_rows rows a side"

tmp=$(mktemp "${TMPDIR:-/tmp}/acorn-go-squirrel.XXXXXX")
trap 'rm -f "$recs" "$tmp"' EXIT
for r in $(seq 1 "$rounds"); do
  for w in "PutSmallItem $put_time" "TorrentStorage $piece_time" "Writers ${writer_rows}x"; do
    set -- $w
    echo
    echo "Round $r of $rounds, $1 ($(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1 /proc/loadavg)):"
    if ! ACORN_BENCH_ROUND=$r tests/go/run bench "^Benchmark$1\$" "$2" > "$tmp" 2>&1; then
      cat "$tmp"
      echo "go_squirrel.sh: go test failed in round $r ($1)"
      exit 1
    fi
    echo "round $r" >> "$out"
    cat "$tmp" >> "$out"
    grep '^Benchmark' "$tmp"
  done
done
awk '
  /^round / { r = $2 }
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
    for (i = 3; i < NF; i += 2) print r, name, $(i + 1), $i
  }' "$out" > "$recs"

# The tables: medians over the rounds of each side, and the median of the
# per-round ratios (lowest-highest).
awk '
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function lo(s,   a, n, i, m) { n = split(s, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
  function hi(s,   a, n, i, m) { n = split(s, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
  # the values of key k over the rounds, as one string
  function vals(k) { return (k in v) ? v[k] : "" }
  # med(name, unit): the median of a side over the rounds
  function med(name, unit) { return median(vals(name SUBSEP unit)) }
  # one(s): ratios s as "median (low-high)", "-" for none
  function one(s) { return (s == "") ? "-" : sprintf("%.2f (%.2f-%.2f)", median(s), lo(s), hi(s)) }
  # ratio(a, b, unit): the per-round ratios a/b
  function ratio(a, b, unit,   r, s) {
    s = ""
    for (r in rounds) {
      if (!((r, a, unit) in at) || !((r, b, unit) in at) || at[r, b, unit] == 0) continue
      s = s " " at[r, a, unit] / at[r, b, unit]
    }
    return one(s)
  }
  # table(title, header, align): the title and head of a table; column i
  # aligned left where letter i of align is l, else right
  function table(title, header, align,   n, i, rule) {
    printf "\n%s\n\n%s\n", title, header
    n = split(header, cols, "|") - 2
    rule = "|"
    for (i = 1; i <= n; i++) rule = rule ((substr(align, i, 1) == "l") ? "---|" : "--:|")
    print rule
  }
  {
    rounds[$1] = 1; v[$2, $3] = v[$2, $3] " " $4; at[$1, $2, $3] = $4
    # the configurations of each workload, in the order first seen
    split($2, p, "/")
    if (!((p[1], p[2]) in seen)) { seen[p[1], p[2]] = 1; order[p[1], ++count[p[1]]] = p[2] }
  }
  END {
    n = 0; for (r in rounds) n++
    printf "\nMedians of %d rounds; ratios: the median of the per-round ratios (lowest-highest).\n", n
    if (count["PutSmallItem"]) {
      table("Small puts (puts a second):", "| configuration | acorn | sql | raw | acorn / sql | acorn / raw |", "l")
      for (i = 1; i <= count["PutSmallItem"]; i++) {
        k = order["PutSmallItem", i]; c = "PutSmallItem/" k
        printf "| %s | %.0f | %.0f | %.0f | %s | %s |\n", k, med(c "/acorn", "puts/s"), med(c "/sql", "puts/s"),
          med(c "/raw", "puts/s"), ratio(c "/acorn", c "/sql", "puts/s"), ratio(c "/acorn", c "/raw", "puts/s")
      }
    }
    if (count["TorrentStorage"]) {
      table("Torrent pieces (MB/s of 10^6 bytes: a piece written and read back; written; read):",
        "| case | side | MB/s | write MB/s | read MB/s | chunks/s |", "ll")
      for (i = 1; i <= count["TorrentStorage"]; i++) {
        k = order["TorrentStorage", i]; c = "TorrentStorage/" k
        for (s = 1; s <= 2; s++) {
          side = (s == 1) ? "acorn" : "raw"
          printf "| %s | %s | %.0f | %.0f | %.0f | %.0f |\n", k, side, med(c "/" side, "MB/s"),
            med(c "/" side, "write-MB/s"), med(c "/" side, "read-MB/s"), med(c "/" side, "chunks/s")
        }
        printf "| %s | acorn / raw | %s | %s | %s | |\n", k, ratio(c "/acorn", c "/raw", "MB/s"),
          ratio(c "/acorn", c "/raw", "write-MB/s"), ratio(c "/acorn", c "/raw", "read-MB/s")
      }
    }
    if (count["Writers"]) {
      table("Writers (rows a second; go / bench_insert: computed in each round):",
        "| writers | go | bench_insert | go / bench_insert |", "l")
      for (i = 1; i <= count["Writers"]; i++) {
        k = order["Writers", i]; c = "Writers/" k
        printf "| %s | %.0f | %.0f | %s |\n", k, med(c, "go-writes/s"), med(c, "bench_insert-writes/s"),
          one(vals(c SUBSEP "go/bench_insert"))
      }
    }
  }' "$recs"

echo
echo "bench/go_squirrel.sh: done, $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
