#!/usr/bin/env bats
# Values across languages (docs/cache.md#values-across-languages): Python's
# Cache, Node's Cache, Ruby's ActiveSupport store and Keyv on Node's store
# each write one value of every kind into one file, at once (four
# processes), and so does SQL (with acorn 0.2's marks among them); then each
# face reads every key.  The SQL
# storage of each value (tests/faces/cross_stored.txt) and what each face
# reads (tests/faces/cross_read.txt) must be exactly as listed: a value reads
# as the same value in every language, or as an error naming the one
# language that can read it (or, through Keyv, one saying Keyv's JSON cannot
# hold the number exactly); never as another value, never as a miss.

load test_helper

FACES="$TESTS/faces"
NODE_MODULES="$ROOT/tests/bindings/node/node_modules"

setup() {
  [ -z "${ACORN_PRELOAD:-}" ] || skip "node and ruby cannot load the sanitized build; make test runs this"
  [ -z "${ACORN_VALGRIND:-}" ] || skip "three interpreters under valgrind; make test runs this"
  command -v node >/dev/null && [ -f "$NODE_MODULES/better-sqlite3/build/Release/better_sqlite3.node" ] ||
    skip "no node with tests/bindings/node's packages (npm ci there; .ci/run does)"
  command -v ruby >/dev/null && ruby -rsqlite3 -ractive_support -e '' 2>/dev/null ||
    skip "no ruby with sqlite3 and activesupport (tests/install-deps dist)"
  local d=$BATS_TEST_TMPDIR e lib=$BATS_TEST_TMPDIR/rb pkg=$BATS_TEST_TMPDIR/js/node_modules/sqlite-acorn
  python_pkg "$d/py"
  mkdir -p "$pkg/lib/linux-x64" "$lib/sqlite_acorn" "$lib/active_support/cache"
  cp "$ROOT"/ext/packages/npm/*.js "$pkg/"
  sed "s/@VERSION@/$(cat "$ROOT/VERSION")/g" "$ROOT/ext/packages/npm/package.json" >"$pkg/package.json"
  ln -s "$ACORN.so" "$pkg/lib/linux-x64/acorn.so"
  for e in "$NODE_MODULES"/*; do
    [ -e "$d/js/node_modules/${e##*/}" ] || ln -s "$e" "$d/js/node_modules/${e##*/}"
  done
  cp "$FACES/cross.js" "$d/js/"
  sed "s/@VERSION@/$(cat "$ROOT/VERSION")/g" "$ROOT/ext/packages/ruby/lib/sqlite_acorn.rb" >"$lib/sqlite_acorn.rb"
  cp "$ROOT/ext/packages/ruby/lib/active_support/cache/acorn_store.rb" "$lib/active_support/cache/"
  ln -s "$ACORN.so" "$lib/sqlite_acorn/acorn.so"
}

# face LANG OP FILE: run LANG's side of the exchange.
face() {
  case $1 in
    py) PYTHONPATH="$BATS_TEST_TMPDIR/py" python_run "$FACES/cross.py" "$2" "$3" ;;
    js) node "$BATS_TEST_TMPDIR/js/cross.js" "$2" "$3" ;;
    keyv) node "$BATS_TEST_TMPDIR/js/cross.js" "$2-keyv" "$3" ;;
    rb) ruby -I "$BATS_TEST_TMPDIR/rb" "$FACES/cross.rb" "$2" "$3" ;;
  esac
}

@test "every kind of value written by Python, Node, Ruby, Keyv and SQL reads the same in each, or names its language" {
  local db=$BATS_TEST_TMPDIR/shared.db
  # the table first (Python's defaults: WAL), then three writers at once
  run face py read "$db"
  assert_success
  face py write "$db" >"$BATS_TEST_TMPDIR/py.w" 2>&1 &
  local p1=$!
  face js write "$db" >"$BATS_TEST_TMPDIR/js.w" 2>&1 &
  local p2=$!
  face rb write "$db" >"$BATS_TEST_TMPDIR/rb.w" 2>&1 &
  local p3=$!
  face keyv write "$db" >"$BATS_TEST_TMPDIR/keyv.w" 2>&1 &
  local p4=$!
  wait_pid $p1; [ "$status" -eq 0 ] || fail "python's writer: $(cat "$BATS_TEST_TMPDIR/py.w")"
  wait_pid $p2; [ "$status" -eq 0 ] || fail "node's writer: $(cat "$BATS_TEST_TMPDIR/js.w")"
  wait_pid $p3; [ "$status" -eq 0 ] || fail "ruby's writer: $(cat "$BATS_TEST_TMPDIR/rb.w")"
  wait_pid $p4; [ "$status" -eq 0 ] || fail "keyv's writer: $(cat "$BATS_TEST_TMPDIR/keyv.w")"
  run acorn_sql "INSERT INTO cache(key, value) VALUES ('sql/text', 'abc'), ('sql/blob', x'0102'), ('sql/int', 7),
  ('sql/float', 0.5), ('sql/v02_int', CAST(x'ff6934' AS TEXT)), ('sql/v02_float', CAST(x'ff66312e3235' AS TEXT)),
  ('sql/json', CAST(x'ff6a' || CAST('{\"k\":[1]}' AS BLOB) AS TEXT)), ('sql/mark_unknown', CAST(x'ff7a31' AS TEXT));
INSERT INTO cache(cache) VALUES ('integrity_check');
SELECT key, typeof(value), CASE WHEN typeof(value) IN ('text', 'blob')
       THEN hex(substr(CAST(value AS BLOB), 1, 2)) ELSE '' END FROM cache ORDER BY key;" "$db"
  assert_success
  assert_output "$(grep -v '^#' "$FACES/cross_stored.txt")"
  local l
  for l in py js rb keyv; do
    run face $l read "$db"
    assert_success
    printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/$l.r"
  done
  run paste "$BATS_TEST_TMPDIR/py.r" <(cut -f2 "$BATS_TEST_TMPDIR/js.r") <(cut -f2 "$BATS_TEST_TMPDIR/rb.r") \
    <(cut -f2 "$BATS_TEST_TMPDIR/keyv.r")
  assert_output "$(grep -v '^#' "$FACES/cross_read.txt")"
}
