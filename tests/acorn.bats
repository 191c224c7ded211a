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

# release_versions DIR ACORN_VERSION: every place that names acorn's version
# in the tree DIR against DIR/VERSION, as a release needs them to agree
# (docs/development.md#releasing): ACORN_VERSION, what acorn_version() of the
# build says, is 'v' and VERSION; each package template's version is VERSION
# once make dist has filled @VERSION@ (make -n shows it filling the template
# from VERSION, and naming the packages' files by it), and so is the Go
# package's Version; the Debian changelog's first entry is VERSION's;
# CHANGELOG.md's first section is [Unreleased] and the next, its newest
# release, is VERSION's, dated.
# Prints one line per disagreement; fails if there is any.
release_versions() {
  local d=$1 av=$2 v mk f n field bad=0
  v=$(cat "$d/VERSION")
  [[ "$v" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "VERSION: '$v' is not X.Y.Z"; bad=1; }
  [ "$av" = "v$v" ] || { echo "acorn_version(): '$av', VERSION $v"; bad=1; }
  # what make dist would run, each recipe line whole (continuations joined)
  mk=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -n -C "$d" \
         dist-npm dist-python dist-gem dist-deb 2>&1 | sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
  for f in npm/package.json python/METADATA python/sqlite_acorn/__init__.py \
           ruby/sqlite_acorn.gemspec ruby/lib/sqlite_acorn.rb debian/control go/driver.go; do
    case $f in
      */package.json)  field=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$d/ext/packages/$f") ;;
      */METADATA|*/control) field=$(sed -n 's/^Version: *//p' "$d/ext/packages/$f") ;;
      */__init__.py)   field=$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' "$d/ext/packages/$f") ;;
      */*.gemspec)     field=$(sed -n 's/^ *s\.version *= *"\([^"]*\)".*/\1/p' "$d/ext/packages/$f") ;;
      */sqlite_acorn.rb) field=$(sed -n 's/^ *VERSION = "\([^"]*\)".*/\1/p' "$d/ext/packages/$f") ;;
      go/driver.go)    field=$(sed -n 's/^const Version = "\([^"]*\)".*/\1/p' "$d/ext/packages/$f") ;;
    esac
    if [[ "$field" == *@VERSION@* ]]; then
      grep -F "${f#*/}" <<<"$mk" | grep -qF "s/@VERSION@/$v/" ||
        { echo "ext/packages/$f: its version is @VERSION@, which make dist does not fill from VERSION"; bad=1; }
      field=${field//@VERSION@/$v}
    fi
    [ "$field" = "$v" ] || { echo "ext/packages/$f: version '$field', VERSION $v"; bad=1; }
  done
  for n in "dist/sqlite-acorn-$v.tgz" "dist/sqlite_acorn-$v-*.whl" \
           "dist/sqlite_acorn-$v-x86_64-linux.gem" "dist/acorn_${v}_amd64.deb"; do
    grep -qF "$n" <<<"$mk" || { echo "make dist: does not make $n"; bad=1; }
  done
  n=$(sed -n '1s/^acorn (\([^)]*\)).*/\1/p' "$d/ext/packages/debian/changelog")
  [ "$n" = "$v" ] ||
    { echo "ext/packages/debian/changelog: the first entry is for '$n', VERSION $v"; bad=1; }
  n=$(grep -m 1 '^## ' "$d/CHANGELOG.md")
  [ "$n" = "## [Unreleased]" ] ||
    { echo "CHANGELOG.md: the first section is '$n', not '## [Unreleased]'"; bad=1; }
  n=$(grep '^## ' "$d/CHANGELOG.md" | sed -n 2p)
  [[ "$n" =~ ^"## [$v] - "[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] ||
    { echo "CHANGELOG.md: the newest release is '$n', VERSION $v"; bad=1; }
  return $bad
}

@test "VERSION, acorn_version(), the package templates, the Debian changelog and CHANGELOG.md name one version" {
  run acorn_sql "SELECT acorn_version();"
  assert_success
  run release_versions "$ROOT" "$output"
  assert_success
  assert_output ""
}

@test "the version check fails when any one of them disagrees, or CHANGELOG.md does not open with Unreleased" {
  local w="$BATS_TEST_TMPDIR/tree" v av
  v=$(cat "$ROOT/VERSION")
  av="v$v"
  # tree: a fresh copy of what the check reads
  tree() {
    rm -rf "$w" && mkdir -p "$w"
    cp -R "$ROOT/Makefile" "$ROOT/VERSION" "$ROOT/ext" "$ROOT/CHANGELOG.md" "$w/"
  }
  tree
  run release_versions "$w" "$av"
  assert_success
  run release_versions "$w" "v0.0.1"
  assert_failure "acorn_version(): 'v0.0.1', VERSION $v"
  echo 9.9.9 >"$w/VERSION"
  run release_versions "$w" "$av"
  assert_failure
  assert_output_contains "acorn_version(): '$av', VERSION 9.9.9"
  assert_output_contains "ext/packages/debian/changelog: the first entry is for '$v', VERSION 9.9.9"
  assert_output_contains "CHANGELOG.md: the newest release is '## [$v] - "
  tree
  sed -i 's/"@VERSION@"/"0.0.1"/' "$w/ext/packages/npm/package.json"
  run release_versions "$w" "$av"
  assert_failure "ext/packages/npm/package.json: version '0.0.1', VERSION $v"
  tree
  sed -i 's/^Version: @VERSION@$/Version: 0.0.1/' "$w/ext/packages/python/METADATA"
  run release_versions "$w" "$av"
  assert_failure "ext/packages/python/METADATA: version '0.0.1', VERSION $v"
  tree
  sed -i 's/"@VERSION@"/"0.0.1"/' "$w/ext/packages/ruby/sqlite_acorn.gemspec"
  run release_versions "$w" "$av"
  assert_failure "ext/packages/ruby/sqlite_acorn.gemspec: version '0.0.1', VERSION $v"
  tree
  sed -i 's/^const Version = ".*"/const Version = "0.0.1"/' "$w/ext/packages/go/driver.go"
  run release_versions "$w" "$av"
  assert_failure "ext/packages/go/driver.go: version '0.0.1', VERSION $v"
  tree
  sed -i "s|sed 's/@VERSION@/\$(VERSION)/g' ext/packages/npm/package.json|cat ext/packages/npm/package.json|" \
    "$w/Makefile"
  run release_versions "$w" "$av"
  assert_failure "ext/packages/npm/package.json: its version is @VERSION@, which make dist does not fill from VERSION"
  tree
  sed -i 's|dist/acorn_$(VERSION)_$(DEB_ARCH).deb|dist/acorn_$(DEB_ARCH).deb|' "$w/Makefile"
  run release_versions "$w" "$av"
  assert_failure "make dist: does not make dist/acorn_${v}_amd64.deb"
  tree
  awk 'NR > 1 && /^acorn \(/ { p = 1 } p' "$ROOT/ext/packages/debian/changelog" \
    >"$w/ext/packages/debian/changelog"
  run release_versions "$w" "$av"
  assert_failure
  assert_output_contains "ext/packages/debian/changelog: the first entry is for '"
  [[ "$output" != *"for '$v'"* ]] || fail "the changelog's first entry was not removed: $output"
  tree
  sed -i "s/^## \[$v\]/## [0.0.1]/" "$w/CHANGELOG.md"
  run release_versions "$w" "$av"
  assert_failure
  assert_output_contains "CHANGELOG.md: the newest release is '## [0.0.1] - "
  tree
  sed -i '/^## \[Unreleased\]$/d' "$w/CHANGELOG.md"
  run release_versions "$w" "$av"
  assert_failure
  assert_output_contains "CHANGELOG.md: the first section is '## [$v] - "
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
