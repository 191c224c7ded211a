#!/usr/bin/env bats
# dist/acorn-auto.so: preloaded, it adds acorn to every connection of a
# program linked against libsqlite3, registering at the first open.

load test_helper

# The preload library next to this build's acorn.so (dist/ or dist/asan/).
AUTO="$(dirname "$ACORN")/acorn-auto.so"

# auto CMD...: run CMD with acorn-auto.so preloaded, the way this build
# runs programs (after the sanitizer runtimes, or under valgrind).
auto() {
  if [ -n "${ACORN_VALGRIND:-}" ]; then
    LD_PRELOAD="$AUTO" wrap "$@"
  else
    ACORN_PRELOAD="${ACORN_PRELOAD:+$ACORN_PRELOAD }$AUTO" wrap "$@"
  fi
}

setup() {
  [ -f "$AUTO" ] || fail "$AUTO missing: run make auto"
  [ -x "$BUILD/auto_test" ] || fail "build/auto_test missing: run make test"
}

@test "the sqlite3 shell gets every acorn function and the cache module with no .load" {
  run auto sqlite3 -batch -bail :memory: \
    "SELECT uuid_version(uuid7()), uuid_version(uuid4_blob()), acorn_version() = 'v' || '$(cat "$ROOT/VERSION")';" \
    "CREATE VIRTUAL TABLE c USING cache(capacity = 100);" \
    "INSERT INTO c(key, value) VALUES ('a', zeroblob(60)), ('b', zeroblob(60));" \
    "SELECT key FROM c; SELECT entries, bytes, evictions FROM cache_stats('c');"
  assert_success
  assert_output "7|4|1
b
1|61|1"
}

@test "without the preload library the same shell has no acorn" {
  run plain_sql "SELECT uuid7();"
  assert_failure "no such function: uuid7"
}

@test "a connection the shell opens later (.open) gets acorn too" {
  run auto sqlite3 -batch -bail "$BATS_TEST_TMPDIR/a.db" \
    "CREATE TABLE t(id BLOB PRIMARY KEY) WITHOUT ROWID; INSERT INTO t VALUES (uuid7_blob());" \
    ".open $BATS_TEST_TMPDIR/b.db" \
    "SELECT uuid_version(uuid8());"
  assert_success
  assert_output "8"
}

@test "/usr/bin/python3 gets acorn on every connection with no load_extension" {
  run env LD_PRELOAD="$ROOT/dist/acorn-auto.so" /usr/bin/python3 -c '
import sqlite3
for _ in range(3):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE c USING cache(capacity = 1000)")
    print(db.execute("SELECT uuid_version(uuid7()), capacity FROM cache_stats(?)", ("c",)).fetchone())
'
  assert_success
  assert_output "(7, 1000)
(7, 1000)
(7, 1000)"
}

@test "a relative LD_PRELOAD path still finds acorn.so after the program changes directory" {
  cd "$ROOT"
  run env LD_PRELOAD="dist/acorn-auto.so" /usr/bin/python3 -c '
import os, sqlite3
os.chdir("/")
print(sqlite3.connect(":memory:").execute("SELECT uuid_version(uuid7())").fetchone()[0])
'
  assert_success
  assert_output "7"
}

@test "a program that calls sqlite3_config before its first open keeps working" {
  run auto "$BUILD/auto_test" config
  assert_success
  assert_output "config: 1 connections with acorn, 1 registrations"
}

@test "the first open may be sqlite3_open, sqlite3_open16 or sqlite3_open_v2" {
  local m
  for m in open open16 open_v2; do
    run auto "$BUILD/auto_test" "$m"
    assert_success
    assert_output "$m: 1 connections with acorn, 1 registrations"
  done
}

@test "connections opened at once from 16 threads all get acorn, registered once" {
  run auto "$BUILD/auto_test" threads 16 "$(big 40)"
  assert_success
  assert_output "threads: $(( 16 * $(big 40) )) connections with acorn, 1 registrations"
}

@test "the test program has no acorn unless the library is preloaded" {
  run wrap "$BUILD/auto_test" open
  assert_failure "no acorn on this connection: no such function: uuid7"
}

@test "acorn-auto.so loads the acorn.so that sits next to it, through symbolic links" {
  mkdir "$BATS_TEST_TMPDIR/lib"
  ln -s "$AUTO" "$BATS_TEST_TMPDIR/lib/acorn-auto.so"
  AUTO="$BATS_TEST_TMPDIR/lib/acorn-auto.so"
  run auto sqlite3 -batch :memory: "SELECT uuid_version(uuid7());"
  assert_success
  assert_output "7"
}

@test "without acorn.so next to it every open fails and says why" {
  mkdir "$BATS_TEST_TMPDIR/lib"
  cp "$AUTO" "$BATS_TEST_TMPDIR/lib/"
  AUTO="$BATS_TEST_TMPDIR/lib/acorn-auto.so"
  run auto sqlite3 -batch :memory: "SELECT 1;"
  assert_failure "automatic extension loading failed: acorn-auto: cannot load acorn: $BATS_TEST_TMPDIR/lib/acorn.so: cannot open shared object file: No such file or directory"
}

@test ".load of the same acorn.so on top of the preload library works" {
  cd "$ROOT"
  run auto sqlite3 -batch -bail :memory: ".load ${ACORN#"$ROOT"/}" \
    "SELECT uuid7() < uuid7(), uuid_version(uuid8());"
  assert_success
  assert_output "1|8"
}

@test "a program that does not use SQLite runs unchanged with the library preloaded" {
  run auto bash -c 'echo ok'
  assert_success
  assert_output "ok"
}

@test "acorn-auto.so exports only the three open functions" {
  run bash -c "nm -D --defined-only '$AUTO' | awk '{print \$3}'"
  assert_success
  assert_output "sqlite3_open
sqlite3_open16
sqlite3_open_v2"
}

@test "without the preload library: sqlite3_auto_extension with dist/libacorn.a" {
  [ -x "$BUILD/auto_static" ] || fail "build/auto_static missing: run make static"
  run wrap "$BUILD/auto_static"
  assert_success
  assert_output "auto_static: 3 connections with acorn"
}
