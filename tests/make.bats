#!/usr/bin/env bats
# The Makefile's surface: make help, make install and uninstall with the
# public header, and the benchmark runner behind make bench and
# make bench-record (its checks and how it records, with stand-in scripts:
# the real benchmarks take minutes).

load test_helper

# Every target declared .PHONY in the Makefile.
phony_targets() {
  sed -n '/^\.PHONY:/,/[^\\]$/p' "$ROOT/Makefile" | sed 's/^\.PHONY://; s/\\//' | tr -s ' \t' '\n' | sed '/^$/d'
}

@test "make help names every target of the Makefile" {
  run make --no-print-directory -C "$ROOT" help
  assert_success
  local t missing=()
  for t in $(phony_targets); do
    grep -Eq "(^|[ (,])$t([ :),]|$)" <<<"$output" || missing+=("$t")
  done
  [ "$(phony_targets | wc -l)" -gt 15 ]
  [ ${#missing[@]} -eq 0 ] || fail "make help does not name: ${missing[*]}"
}

@test "make install puts the library and the public header under PREFIX; uninstall removes both" {
  local d="$BATS_TEST_TMPDIR/dest"
  run make --no-print-directory -C "$ROOT" install DESTDIR="$d" PREFIX=/opt/acorn
  assert_success
  [ -x "$d/opt/acorn/lib/acorn.so" ]
  [ -f "$d/opt/acorn/include/sqlite-acorn.h" ]
  cmp "$ROOT/ext/sqlite-acorn.h" "$d/opt/acorn/include/sqlite-acorn.h"
  run make --no-print-directory -C "$ROOT" uninstall DESTDIR="$d" PREFIX=/opt/acorn
  assert_success
  [ ! -e "$d/opt/acorn/lib/acorn.so" ]
  [ ! -e "$d/opt/acorn/include/sqlite-acorn.h" ]
}

@test "the public header declares sqlite3_acorn_init for C and C++ programs linking the static library" {
  [ -f "$ROOT/dist/libacorn.a" ] || fail "dist/libacorn.a missing: make static builds it"
  cat >"$BATS_TEST_TMPDIR/app.c" <<'C'
#include <sqlite3.h>
#include <stdio.h>
#include "sqlite-acorn.h"
int main(void){
  sqlite3 *db;
  sqlite3_stmt *p;
  int v = 0;
  sqlite3_auto_extension((void(*)(void))sqlite3_acorn_init);
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ) return 1;
  if( sqlite3_prepare_v2(db, "SELECT uuid_version(uuid7())", -1, &p, 0)==SQLITE_OK
   && sqlite3_step(p)==SQLITE_ROW ) v = sqlite3_column_int(p, 0);
  sqlite3_finalize(p);
  sqlite3_close(db);
  printf("%d\n", v);
  return v==7 ? 0 : 1;
}
C
  # the link line the README shows
  run cc -I"$ROOT/ext" -o "$BATS_TEST_TMPDIR/app" "$BATS_TEST_TMPDIR/app.c" \
        "$ROOT/dist/libacorn.a" -lsqlite3 -lpthread -lm
  assert_success
  run "$BATS_TEST_TMPDIR/app"
  assert_success
  assert_output "7"
  if ! command -v g++ >/dev/null; then
    skip "g++ is not installed (tests/install-deps bindings installs it): C++ not checked"
  fi
  cp "$BATS_TEST_TMPDIR/app.c" "$BATS_TEST_TMPDIR/app.cc"
  run g++ -I"$ROOT/ext" -o "$BATS_TEST_TMPDIR/appxx" "$BATS_TEST_TMPDIR/app.cc" \
        "$ROOT/dist/libacorn.a" -lsqlite3 -lpthread -lm
  assert_success
  run "$BATS_TEST_TMPDIR/appxx"
  assert_output "7"
}

@test "bench/run checks its tools before any benchmark and names what is missing" {
  run env GNUPLOT=/nonexistent/gnuplot "$ROOT/bench/run" --check
  assert_failure "/nonexistent/gnuplot (Debian: gnuplot-nox)"
  assert_output_contains "tests/install-deps bench installs them"
  run env ACORN_PYTHON=/bin/false "$ROOT/bench/run" --check
  assert_failure "Python's diskcache for /bin/false (Debian: python3-diskcache)"
  run env GNUPLOT=/nonexistent/gnuplot "$ROOT/bench/run" uuid
  assert_failure "missing tools"
  [[ "$output" != *"[1/"* ]]
}

@test "bench/run refuses a benchmark that does not exist, and a subset with --record" {
  run "$ROOT/bench/run" nosuch
  assert_failure "bench: no bench/nosuch.sh (have: "
  run "$ROOT/bench/run" --record uuid
  assert_failure "bench: --record runs every benchmark, not a subset"
}

# A copy of the tree whose bench/*.sh are quick stand-ins that write what
# the real ones write, each line saying which run made it.
fake_tree() {
  local r="$BATS_TEST_TMPDIR/repo"
  mkdir -p "$r"
  cp -a "$ROOT/Makefile" "$ROOT/VERSION" "$ROOT/ext" "$ROOT/dist" "$r/"
  mkdir -p "$r/bench/results"
  cp "$ROOT/bench/run" "$r/bench/run"
  cat >"$r/bench/experiments.sh" <<'SH'
set -e
echo "step 1/1: experiments of run $RUN"
for e in writers ids journals batching readers; do
  echo "$e csv of run $RUN" >"$BENCH_OUT/$e.csv"
  [ "${FAIL_AT:-}" != "$e" ] || exit 3
  [ "${SKIP:-}" = "$e.png" ] || echo "$e png of run $RUN" >"$BENCH_OUT/$e.png"
done
echo "machine of run $RUN" >"$BENCH_OUT/machine.txt"
SH
  printf '%s\n' 'echo "uuid table of run $RUN"' >"$r/bench/uuid.sh"
  echo "$r"
}

# results_of DIR: every file of DIR with its contents, one line each.
results_of() {
  (cd "$1" && for f in *; do printf '%s: %s\n' "$f" "$(cat "$f")"; done)
}

@test "bench-record replaces bench/results/ with one complete run, and nothing else does" {
  local r
  r=$(fake_tree)
  echo "from an older run" >"$r/bench/results/stale.txt"
  export GNUPLOT=true ACORN_PYTHON=/bin/true
  # make bench: into its own directory, bench/results/ untouched
  RUN=1 BENCH_OUT="$BATS_TEST_TMPDIR/out" run "$r/bench/run"
  assert_success
  assert_output_contains "[2/2] bench/uuid.sh: done in"
  assert_output_contains "[uuid    0s] uuid table of run 1"
  [ -f "$BATS_TEST_TMPDIR/out/readers.png" ]
  [ "$(results_of "$r/bench/results")" = "stale.txt: from an older run" ]
  # make bench-record: every file from the same run, the stale one gone
  RUN=2 run "$r/bench/run" --record
  assert_success
  run results_of "$r/bench/results"
  assert_output "batching.csv: batching csv of run 2
batching.png: batching png of run 2
experiments.txt: step 1/1: experiments of run 2
ids.csv: ids csv of run 2
ids.png: ids png of run 2
journals.csv: journals csv of run 2
journals.png: journals png of run 2
machine.txt: machine of run 2
readers.csv: readers csv of run 2
readers.png: readers png of run 2
uuid.txt: uuid table of run 2
writers.csv: writers csv of run 2
writers.png: writers png of run 2"
}

@test "bench-record leaves bench/results/ as it was when a benchmark fails or a file is missing" {
  local r before
  r=$(fake_tree)
  export GNUPLOT=true ACORN_PYTHON=/bin/true
  RUN=1 run "$r/bench/run" --record
  assert_success
  before=$(results_of "$r/bench/results")
  RUN=2 FAIL_AT=ids run "$r/bench/run" --record
  assert_failure "bench: FAILED: bench/experiments.sh"
  assert_output_contains "bench/results/ left as it was"
  [ "$(results_of "$r/bench/results")" = "$before" ]
  RUN=3 SKIP=readers.png run "$r/bench/run" --record
  assert_failure "bench: the run did not write readers.png; bench/results/ left as it was"
  [ "$(results_of "$r/bench/results")" = "$before" ]
}
