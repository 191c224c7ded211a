#!/usr/bin/env bats
# The Makefile's surface: make help, make install and uninstall with the
# public header, and the checks of the benchmark runner behind make bench
# (tests/long/make.bats: how make bench-record records).

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
  [ -f "$ROOT/dist/acorn.so" ] && [ -f "$ROOT/dist/acorn-auto.so" ] || fail "dist/ not built: run make test"
  # -o: install the libraries as built.  This suite runs beside the others,
  # which load them: a build here (make test's flags are not make's) would
  # replace them mid-run and leave flags that make the next make test
  # rebuild everything.
  run make --no-print-directory -C "$ROOT" install DESTDIR="$d" PREFIX=/opt/acorn \
    -o dist/acorn.so -o dist/acorn-auto.so
  assert_success
  [ -x "$d/opt/acorn/lib/acorn.so" ]
  [ -f "$d/opt/acorn/include/sqlite-acorn.h" ]
  cmp "$ROOT/ext/sqlite-acorn.h" "$d/opt/acorn/include/sqlite-acorn.h"
  run make --no-print-directory -C "$ROOT" uninstall DESTDIR="$d" PREFIX=/opt/acorn
  assert_success
  [ ! -e "$d/opt/acorn/lib/acorn.so" ]
  [ ! -e "$d/opt/acorn/include/sqlite-acorn.h" ]
}

# A compiler that writes an empty output file and logs its command line:
# what is checked is make's choice of what to build, not gcc's work.
fake_cc() {
  cat >"$1" <<'SH'
#!/bin/sh
out=
prev=
for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
echo "$out" >>"${0%/*}/cc.log"
[ -z "$out" ] || : >"$out"
SH
  chmod +x "$1"
}

@test "the test build follows the flags: again with the same flags it compiles nothing, with others everything" {
  local w="$BATS_TEST_TMPDIR/tree" targets objs t before
  mkdir -p "$w/tests"
  cp -R "$ROOT/Makefile" "$ROOT/VERSION" "$ROOT/ext" "$w/"
  cp -R "$ROOT/tests/c" "$w/tests/"
  fake_cc "$w/cc"
  # this make's own settings, not those of a make test above this run
  mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$w" CC="$w/cc" "$@"; }
  targets="dist/acorn.so dist/acorn-auto.so dist/libacorn.a $(mk -s --eval 'print-bins: ; @echo $(TEST_BINS)' print-bins)"
  objs=$(cd "$w" && ls ext/*.c ext/*/*.c | grep -v '^ext/auto\.c$' | sed 's|^ext/\(.*\)\.c$|build/static/\1.o|')
  [ "$(wc -w <<<"$targets")" -gt 10 ]
  # as make test builds
  run mk $targets EXTRA_CFLAGS="-Werror -UNDEBUG"
  assert_success
  # (dist/libacorn.a is ar's: its objects are checked)
  for t in ${targets/dist\/libacorn.a/} $objs; do
    grep -qx "$t" "$w/cc.log" || fail "$t not compiled: $(cat "$w/cc.log")"
  done
  # a second time: nothing, not even with make -n; make help writes nothing
  : >"$w/cc.log"
  before=$(stat -c %y "$w/build/cflags")
  run mk $targets EXTRA_CFLAGS="-Werror -UNDEBUG"
  assert_success
  [ ! -s "$w/cc.log" ] || fail "compiled again: $(cat "$w/cc.log")"
  run mk -n $targets EXTRA_CFLAGS="-Werror -UNDEBUG"
  assert_success
  for t in "${lines[@]}"; do
    [[ "$t" != "$w/cc "* ]] || fail "make -n would compile: $t"
  done
  run mk help
  assert_success
  [ "$(stat -c %y "$w/build/cflags")" = "$before" ]
  # other flags (a plain make): every part is built again
  run mk $targets
  assert_success
  for t in ${targets/dist\/libacorn.a/} $objs; do
    grep -qx "$t" "$w/cc.log" || fail "$t not built again with other flags: $(cat "$w/cc.log")"
  done
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

@test "no function in ext/ is over 90 lines and no C file over 1,800 (tests/ext-shape)" {
  run "$ROOT/tests/ext-shape"
  [ "$status" -eq 0 ] || fail "$output"
}

@test "tests/ext-shape names each use of a function up the layers of a folder, and each file its list lacks" {
  local d="$BATS_TEST_TMPDIR/ext/x"
  mkdir -p "$d"
  printf '/*\n** THE FILES, in layers, lowest first:\n**\n**   x_low.c   the lower\n**   x_high.c  the higher\n*/\n' >"$d/xInt.h"
  printf 'int xHigh(int a);\nstatic int xOwn(int a){ return a; }\nint xLow(int a){ return a ? xHigh(a-1) : xOwn(a); }\n' >"$d/x_low.c"
  printf 'int xLow(int a);\nint xHigh(int a){ return xLow(a); }\n' >"$d/x_high.c"
  run "$ROOT/tests/ext-shape" "$d/x_low.c" "$d/x_high.c"
  assert_failure
  assert_output "$d/x_low.c:1: uses xHigh of x_high.c, a layer above it"
  printf 'int xOther(void){ return 1; }\n' >"$d/x_other.c"
  printf 'int xLow(int a){ return a; }\n' >"$d/x_low.c"
  run "$ROOT/tests/ext-shape" "$d/x_low.c"
  assert_failure
  assert_output "$d/x_other.c: not in the layers of $d/xInt.h"
}

@test "tests/ext-shape names a function over 90 lines and a file over 1,800, and exits 1" {
  local f="$BATS_TEST_TMPDIR/long.c"
  {
    echo "static const char *az[] = {"
    for i in $(seq 200); do echo "  \"x\","; done
    echo "};"
    echo "/* a comment with a { brace */"
    echo "static int shortOne(int a){"
    echo "  return a;"
    echo "}"
    echo "static int"
    echo "longOne(int a,"
    echo "        int b){"
    for i in $(seq 86); do echo "  a += b; /* } */"; done
    echo "  return a;"
    echo "}"
    for i in $(seq 1600); do echo ""; done
  } >"$f"
  run "$ROOT/tests/ext-shape" "$f"
  assert_failure
  assert_output "$f: 1897 lines (at most 1800)
$f:207: longOne: 91 lines (at most 90)"
}
