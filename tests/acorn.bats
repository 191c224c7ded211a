#!/usr/bin/env bats
# Loading acorn: what it adds, its version and debug functions, its build.

load test_helper

# The exact surface loading adds: "name|narg" of each function, then
# "module:name" of each module.  Update this list with every new feature.
EXPECTED_SURFACE='acorn_debug|0
acorn_version|0
cache_get|2
cache_read|4
cache_set|3
cache_set|4
cache_set|5
cache_wal_limit|0
cache_wal_limit|1
cache_write|4
gen_random_uuid|0
module:bench_insert
module:cache
module:cache_evictions
module:cache_stats
ulid_blob|0
ulid_timestamp|1
ulid_to_uuid|1
ulid|0
uuid4_blob|0
uuid4_str|0
uuid4|0
uuid5_blob|2
uuid5|2
uuid7_blob|0
uuid7_blob|1
uuid7_str|0
uuid7_timestamp_ms|1
uuid7|0
uuid7|1
uuid8_blob|0
uuid8_blob|1
uuid8|0
uuid8|1
uuid_blob|1
uuid_extract_timestamp|1
uuid_extract_version|1
uuid_max_blob|0
uuid_max|0
uuid_nil_blob|0
uuid_nil|0
uuid_str|1
uuid_timestamp|1
uuid_to_ulid|1
uuid_version|1
uuid|0
uuidv4|0
uuidv7|0
uuidv7|1'

surface_sql="SELECT name || '|' || narg FROM pragma_function_list
             UNION ALL SELECT 'module:' || name FROM pragma_module_list ORDER BY 1;"

@test "loading adds exactly the documented functions and modules" {
  run plain_sql "$surface_sql"
  assert_success
  before=$output
  run acorn_sql "$surface_sql"
  assert_success
  added=$(comm -13 <(echo "$before") <(echo "$output"))
  removed=$(comm -23 <(echo "$before") <(echo "$output"))
  [ -z "$removed" ] || fail "loading removed: $removed"
  [ "$added" = "$(echo "$EXPECTED_SURFACE" | LC_ALL=C sort)" ] || fail "added:
$added"
}

@test "acorn_version() is 'v' followed by the VERSION file" {
  run acorn_sql "SELECT acorn_version();"
  assert_success
  assert_output "v$(cat "$ROOT/VERSION")"
}

@test "acorn_debug() reports version, commit, date, compiler, flags and both SQLite versions" {
  run acorn_sql "SELECT acorn_debug();"
  assert_success
  assert_output_contains "version: v$(cat "$ROOT/VERSION")"
  assert_output_contains "sqlite headers: 3."
  assert_output_contains "sqlite library: $("$SQLITE3" -batch :memory: 'select sqlite_version()')"
  for key in "commit: " "date: 20" "compiler: " "cflags: "; do
    assert_output_contains "$key"
  done
}

@test "the shell, Python and the C test programs all run on the same SQLite library" {
  local v
  v=$("$SQLITE3" -batch :memory: 'SELECT sqlite_version();')
  printf 'import sqlite3\nprint(sqlite3.sqlite_version)\n' >"$BATS_TEST_TMPDIR/v.py"
  run python_run "$BATS_TEST_TMPDIR/v.py"
  assert_success
  assert_output "$v"
  run wrap "$BUILD/static_test"
  assert_success
  assert_output_contains " sqlite $v"
}

load_by_sql() {
  printf "SELECT load_extension('%s') IS NULL;\nSELECT uuid_version(uuid7());\n" "$1" |
    wrap "$SQLITE3" -batch -bail :memory:
}

@test "SELECT load_extension('./dist/acorn') works as .load does" {
  cd "$ROOT"
  run load_by_sql "./${ACORN#"$ROOT"/}"
  assert_success
  assert_output "1
7"
}

# load_line HOW: a script line that loads acorn, by .load (dot) or by
# SELECT load_extension (sql, which prints 1).
load_line() {
  if [ "$1" = dot ]; then
    echo ".load $ACORN"
  else
    echo "SELECT load_extension('$ACORN') IS NULL;"
  fi
}

# twice_script FIRST [SECOND]: load acorn by FIRST, make and use a cache
# table, load it again by SECOND (if given), use the table again and list the
# functions and modules.
twice_script() {
  load_line "$1"
  echo "CREATE VIRTUAL TABLE t USING cache(capacity = 30);
INSERT INTO t(key, value) VALUES ('a', zeroblob(9)), ('b', zeroblob(9));
SELECT length(value) FROM t WHERE key = 'a';"
  [ -z "${2:-}" ] || load_line "$2"
  echo "INSERT INTO t(key, value) VALUES ('c', zeroblob(9)), ('d', zeroblob(9));
SELECT group_concat(key), (SELECT hits FROM cache_stats('t')), uuid_version(uuid7()) FROM t;
$surface_sql"
}

@test "loading acorn again on a connection, by .load or SQL in either order, succeeds and changes nothing" {
  local first second once
  # the same script with one load: the table keeps its recency ('b' is
  # evicted, not 'a'); the list is the reference for the functions and
  # modules (SQLite adds some of its own as they are used)
  run plain_sql "$(twice_script dot)"
  assert_success
  [ "${lines[0]}" = 9 ] && [ "${lines[1]}" = "a,c,d|1|7" ] || fail "one load: $(head -3 <<<"$output")"
  once=$output
  for first in dot sql; do
    for second in dot sql; do
      run plain_sql "$(twice_script $first $second)"
      assert_success
      # SELECT load_extension(...) IS NULL prints 1 where it loads
      [ "$(grep -c -x 1 <<<"$output")" -eq "$(grep -c -x sql <<<"$first"$'\n'"$second")" ] \
        || fail "first by $first, then by $second: $(head -4 <<<"$output")"
      [ "$(grep -v -x 1 <<<"$output")" = "$once" ] \
        || fail "first by $first, then by $second: not as after one load: $(diff <(echo "$once") <(grep -v -x 1 <<<"$output"))"
    done
  done
}

@test "a load on a new connection of the same process registers acorn there" {
  # .open closes the connection and opens another (often at the same
  # address): acorn must not take it for the one it was loaded on
  run plain_sql "$(load_line dot)
SELECT acorn_version() IS NOT NULL;
.open :memory:
SELECT count(*) FROM pragma_function_list WHERE name = 'acorn_version';
$(load_line sql)
SELECT acorn_version() IS NOT NULL, uuid_version(uuid7());
.open :memory:
$(load_line dot)
SELECT acorn_version() IS NOT NULL;"
  assert_success
  assert_output "1
0
1
1|7
1"
}

@test "dist/acorn.so exports only sqlite3_acorn_init" {
  run bash -c "nm -D --defined-only '$ACORN.so' | awk '{print \$3}'"
  assert_success
  assert_output "sqlite3_acorn_init"
}

@test "dist/libacorn.a links into a program that links SQLite itself" {
  [ -x "$BUILD/static_test" ] || fail "build/static_test missing: run make static"
  run wrap "$BUILD/static_test"
  assert_success
  assert_output_contains "static: ok "
}
