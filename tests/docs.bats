#!/usr/bin/env bats
# The SQL examples of README.md and docs/*.md give the output the pages show,
# and the links between the pages hold.
#
# HOW TO WRITE AN EXAMPLE (every ```sql block of README.md and docs/*.md is
# run by this suite, in a fresh sqlite3 :memory: database with acorn loaded):
#
#   ```sql
#   SELECT uuid_version('0123abcd-ef45-7789-8abc-def012345678');
#   -- 7
#   SELECT uuid7();
#   --~ 01a22945-d426-7674-963b-7ced8a55032f
#   SELECT uuid7(-1);
#   -- error: uuid7: ms must be an integer in 0..281474976710655
#   ```
#
# - A statement ends at its ';' (it may span lines).  The lines right below
#   it that start with `-- ` are its output, one line each, exactly as the
#   sqlite3 shell prints it (list mode with '|' unless the block changes the
#   mode with a dot command such as `.mode box` or `.headers on`); `--` alone
#   is an empty line.  An error is shown as `-- error: <message>` (without
#   the " (CODE)" the shells of 3.38 and 3.40 add to codes other than
#   SQLITE_ERROR).
# - A statement with no `-- ` lines below it must print nothing.  So a
#   comment for the reader goes above a statement, after a blank line, never
#   right below one (it would be read as output).  A comment after the ';' on
#   the statement's own line is not checked.
# - `--~ ` instead of `-- ` marks a line whose values change from run to run
#   (ids, times, rates, sizes): it is compared by shape.  Every run of hex
#   digits that contains a digit stands for any such run (12, 0.041659,
#   8172a26 and 2026-11-30 all keep only their punctuation); a UUID stands for
#   any UUID of the same version; runs of spaces and of box-drawing '─' may
#   have any length; `...` stands for any text.  Everything else must match.
# - A block whose first line starts with `-- not run` (say why: it takes
#   long, it needs another connection ...) is not run: its SELECT statements
#   are only compiled (EXPLAIN), so a renamed function, column or parameter
#   still fails here, and it must show no output.
# - `.load` lines are skipped (the suite loads the build under test); other
#   dot commands run.  Each block starts from an empty database and runs in
#   a scratch directory, which is also $TMPDIR (bench_insert's default dir).
# - ```js blocks are Node scripts, each run alone with node in a scratch
#   directory, `require('sqlite-acorn')` giving the npm package as `make
#   dist-npm` lays it out (with the build under test as its acorn.so) and
#   better-sqlite3, keyv and the rest of tests/bindings/node's packages
#   beside it.  A block with a line starting with `import ` is run as an ES
#   module (top-level await works), any other as CommonJS.  Lines
#   `// -> text` are what the block prints, in order, exactly; `// ~> text`
#   a line compared by shape, as `--~`.  A block must exit 0 with nothing on
#   stderr, and print no more and no less than its `// ->` lines.  A block
#   whose first line starts with `// not run` (say why) is only parsed
#   (node --check) and must show no output.
# - ```python blocks run too, each in a fresh /usr/bin/python3 in an empty
#   directory of its own, with the package sqlite_acorn of the source tree
#   (ext/packages/python) and this build as its acorn.so.  Top-level
#   statements run one by one, as the Python REPL runs them: an expression's
#   value is printed with repr() unless it is None.  The lines right below a
#   statement that start with `#> ` are its output (`#~ ` by shape, as
#   `--~ `); an exception shows as its last traceback line
#   (`#> KeyError: 'nope'`), a warning as `#> CacheKeyWarning: message`.  A
#   block whose first line starts with `# not run` is only compiled.
# - ```c blocks are whole C programs, each compiled against the system's
#   libsqlite3 with -Wall -Wextra -Werror and run in a scratch directory
#   whose dist/acorn.so is the build under test; `// -> ` and `// ~> ` lines
#   as in JavaScript.  A block whose first line starts with `// not run` is
#   only compiled (-fsyntax-only).  ```go blocks are built and run the same
#   way by make test-bindings (tests/bindings/run), where Go is installed.
# - Blocks other than ```sql, ```js, ```python, ```ruby, ```c and ```go
#   (```sh, plain ```) are not run.  Nor is a ```sql block whose fence names
#   a build (```sql acorn: the build under test; ```sql acorn-0.2.0: that
#   release), an example of several versions on one file: tests/cache.bats
#   runs those of docs/cache.md in the page's order in one directory, each
#   with the build its fence names (older releases built from the git
#   history), and compares their output as this suite does.
# - Relative links between the pages ([text](uuid.md#converters)) must lead
#   to a file and a heading that exist.
# - ```ruby blocks are Ruby scripts, each run alone with ruby in a scratch
#   directory of its own, with `require "sqlite_acorn"` and ActiveSupport's
#   lookup_store(:acorn_store, ...) finding the gem's files as `make
#   dist-gem` lays them out (with the build under test as its acorn.so), and
#   Debian's sqlite3 and activesupport.  Lines `# -> text` are what the block
#   prints, in order, exactly; `# ~> text` a line compared by shape, as
#   `--~`.  A block must exit 0 with nothing on stderr, and print no more and
#   no less than its `# ->` lines.  A block whose first line starts with
#   `# not run` (say why) is only parsed (ruby -c) and must show no output.

load test_helper

# Under valgrind (make memcheck) every sqlite3 start costs seconds and threads
# run one at a time, so bench_insert's examples with several writers outlast
# their busy_timeout; what this suite guards (the pages against the code) does
# not depend on the build, and make test and make test-asan run it.
setup() {
  [ -z "${ACORN_VALGRIND:-}" ] || skip "the examples are checked by make test and make test-asan"
}

DOCS=("$ROOT/README.md" "$ROOT"/docs/*.md)

# check_docs DIR FILE...: run every example of the FILEs, compare, print the
# differences; fails if there is any.
check_docs() {
  local dir=$1 s
  shift
  mkdir -p "$dir/ex" "$dir/run"
  "$PYTHON" "$TESTS/doc_examples.py" extract "$dir/ex" "$ACORN" "$@" || return 1
  for s in "$dir"/ex/*.sql; do
    [ -e "$s" ] || continue
    (cd "$dir/run" && TMPDIR="$dir/run" wrap "$SQLITE3" -batch :memory: \
       <"$s" >"${s%.sql}.out" 2>"${s%.sql}.err") || true
  done
  python_pkg "$dir/pkg"
  for s in "$dir"/ex/*.json; do
    [ -e "${s%.json}.sql" ] && continue
    mkdir -p "$dir/py/${s##*/}"
    (cd "$dir/py/${s##*/}" && PYTHONPATH="$dir/pkg" python_run "$TESTS/doc_examples.py" runpy "$s" \
       >"${s%.json}.out" 2>"${s%.json}.err") || true
  done
  "$PYTHON" "$TESTS/doc_examples.py" compare "$dir/ex"
}

@test "every SQL example in README.md and docs/ gives the output the page shows" {
  run check_docs "$BATS_TEST_TMPDIR" "${DOCS[@]}"
  echo "$output"
  assert_success
  # the count, for the log: "N blocks, M statements: ..."
  [[ "${lines[0]}" =~ ^[0-9]+\ blocks ]]
  echo "# ${lines[0]}" >&3
  # bench_insert's examples leave no scratch database behind
  [ -z "$(ls -A "$BATS_TEST_TMPDIR/run")" ]
}

# check_js DIR FILE...: run every ```js example of the FILEs with node, with
# DIR/node_modules holding the npm package (this build's acorn.so) and
# tests/bindings/node's packages; print the differences, fail if any.
NODE_MODULES="$ROOT/tests/bindings/node/node_modules"
check_js() {
  local dir=$1 s b pkg=$1/node_modules/sqlite-acorn e
  shift
  mkdir -p "$dir/ex" "$dir/run" "$pkg/lib/linux-x64"
  cp "$ROOT"/ext/packages/npm/*.js "$ROOT"/ext/packages/npm/*.d.ts "$pkg/"
  sed "s/@VERSION@/$(cat "$ROOT/VERSION")/g" "$ROOT/ext/packages/npm/package.json" >"$pkg/package.json"
  ln -s "$ACORN.so" "$pkg/lib/linux-x64/acorn.so"
  for e in "$NODE_MODULES"/* "$NODE_MODULES"/.bin; do
    [ -e "$dir/node_modules/${e##*/}" ] || ln -s "$e" "$dir/node_modules/${e##*/}"
  done
  "$PYTHON" "$TESTS/doc_examples.py" extract-js "$dir/ex" "$@" || return 1
  for s in "$dir"/ex/*.cjs "$dir"/ex/*.mjs; do
    [ -e "$s" ] || continue
    b=${s%.*}
    if [ -e "$b.checkonly" ]; then
      node --check "$s" >"$b.out" 2>"$b.err"; echo $? >"$b.rc"
    else
      (cd "$dir/run" && TMPDIR="$dir/run" timeout 120 node "$s" >"$b.out" 2>"$b.err"; echo $? >"$b.rc")
    fi
  done
  "$PYTHON" "$TESTS/doc_examples.py" compare-js "$dir/ex"
}

need_node_examples() {
  [ -z "${ACORN_PRELOAD:-}" ] || skip "node cannot load the sanitized build; make test checks the JavaScript examples"
  command -v node >/dev/null || skip "no node here (apt-get install nodejs npm)"
  [ -f "$NODE_MODULES/better-sqlite3/build/Release/better_sqlite3.node" ] && [ -d "$NODE_MODULES/keyv" ] ||
    skip "tests/bindings/node has no node_modules: run npm ci there (make test-dist does, so does .ci/run)"
}

@test "every JavaScript example in README.md and docs/ gives the output the page shows" {
  need_node_examples
  run check_js "$BATS_TEST_TMPDIR" "${DOCS[@]}"
  echo "$output"
  assert_success
  [[ "${lines[0]}" =~ ^[0-9]+\ blocks ]]
  echo "# ${lines[0]}" >&3
}

@test "a JavaScript example that prints another line, more lines, or throws fails the check" {
  need_node_examples
  local page="$BATS_TEST_TMPDIR/page.md"
  printf '%s\n' '```js' "const { Cache } = require('sqlite-acorn');" \
    "const c = new Cache(new (require('better-sqlite3'))(':memory:'), 't');" \
    "console.log(c.set('k', 'v').get('k'));" '// -> v' '```' >"$page"
  run check_js "$BATS_TEST_TMPDIR/a" "$page"
  assert_success
  sed -i 's|^// -> v$|// -> w|' "$page"
  run check_js "$BATS_TEST_TMPDIR/b" "$page"
  assert_failure "$page:5: the output differs from the page"
  printf '%s\n' '```js' 'console.log(1); console.log(2);' '// -> 1' '```' >"$page"
  run check_js "$BATS_TEST_TMPDIR/c" "$page"
  assert_failure "$page:1: the output differs from the page"
  printf '%s\n' '```js' "import { Cache } from 'sqlite-acorn';" "new Cache(null, 't');" '```' >"$page"
  run check_js "$BATS_TEST_TMPDIR/d" "$page"
  assert_failure "$page:1: the block failed (exit 1)"
  assert_output_contains "Cache: db must be a better-sqlite3 Database or a node:sqlite DatabaseSync; got null"
}

# check_c DIR FILE...: compile every ```c example of the FILEs against the
# system's libsqlite3 and run it in a scratch directory whose dist/acorn.so
# is this build; print the differences, fail if any.  A block marked
# `// not run` is only compiled (-fsyntax-only, with ext/ for acorn's header).
check_c() {
  local dir=$1 s b
  shift
  mkdir -p "$dir/ex"
  "$PYTHON" "$TESTS/doc_examples.py" extract-c "$dir/ex" "$@" || return 1
  for s in "$dir"/ex/*.c; do
    [ -e "$s" ] || continue
    b=${s%.c}
    if [ -e "$b.checkonly" ]; then
      cc -fsyntax-only -I "$ROOT/ext" "$s" >"$b.out" 2>"$b.err"; echo $? >"$b.rc"
    elif ! cc -std=c99 -Wall -Wextra -Werror -o "$b.bin" "$s" -lsqlite3 >"$b.out" 2>"$b.err"; then
      echo 1 >"$b.rc"
    else
      mkdir -p "$dir/run/${b##*/}/dist"
      ln -sf "$ACORN.so" "$dir/run/${b##*/}/dist/acorn.so"
      (cd "$dir/run/${b##*/}" && timeout 120 "$b.bin" >"$b.out" 2>"$b.err"; echo $? >"$b.rc")
    fi
  done
  "$PYTHON" "$TESTS/doc_examples.py" compare-c "$dir/ex"
}

@test "every C example in README.md and docs/ compiles without a warning and prints what the page shows" {
  [ -z "${ACORN_PRELOAD:-}" ] || skip "a program linking the system libsqlite3 cannot load the sanitized build; make test checks the C examples"
  run check_c "$BATS_TEST_TMPDIR" "${DOCS[@]}"
  echo "$output"
  assert_success
  [[ "${lines[0]}" =~ ^[1-9][0-9]*\ blocks ]]
  echo "# ${lines[0]}" >&3
  # and the check catches a changed line and a warning
  local page="$BATS_TEST_TMPDIR/page.md"
  printf '%s\n' '```c' '#include <stdio.h>' 'int main(void){ puts("a"); return 0; }' '// -> b' '```' >"$page"
  run check_c "$BATS_TEST_TMPDIR/a" "$page"
  assert_failure "$page:4: the output differs from the page"
  printf '%s\n' '```c' 'int main(void){ int x; return 0; }' '```' >"$page"
  run check_c "$BATS_TEST_TMPDIR/b" "$page"
  assert_failure "$page:1: the block failed (exit 1)"
  assert_output_contains "unused variable"
}

@test "every link between README.md, CHANGELOG.md and docs/ leads to a file and heading that exist" {
  run "$PYTHON" "$TESTS/doc_examples.py" links "${DOCS[@]}" "$ROOT/CHANGELOG.md"
  assert_success
  # and the check catches a broken one
  cp "$ROOT/docs/uuid.md" "$BATS_TEST_TMPDIR/uuid.md"
  printf '%s\n' '[a](uuid.md#converters) [b](uuid.md#no-such-heading) [c](nope.md)' \
    >"$BATS_TEST_TMPDIR/page.md"
  run "$PYTHON" "$TESTS/doc_examples.py" links "$BATS_TEST_TMPDIR/page.md"
  assert_failure "link to a missing heading: uuid.md#no-such-heading"
  assert_output_contains "link to a missing file: nope.md"
  [[ "$output" != *"#converters"* ]]
}

@test "the README's examples for each language are among the examples checked" {
  run "$PYTHON" "$TESTS/doc_examples.py" extract "$BATS_TEST_TMPDIR/ex" "$ACORN" "$ROOT/README.md"
  assert_success
  # the shell's: ids, the cache with a ttl, bench_insert, in one block
  grep -l 'uuid7()' "$BATS_TEST_TMPDIR"/ex/*.sql | xargs grep -l 'USING cache' |
    xargs grep -l 'ttl' | xargs grep -q 'bench_insert'
  grep -l 'RETURNING id' "$BATS_TEST_TMPDIR"/ex/*.json | xargs grep -q 'ttl'    # Python
  local lang
  for lang in js ruby c go; do
    run "$PYTHON" "$TESTS/doc_examples.py" extract-$lang "$BATS_TEST_TMPDIR/$lang" "$ROOT/README.md"
    assert_success
    grep -l 'cache_get' "$BATS_TEST_TMPDIR/$lang"/* | xargs grep -q 'ttl' ||
      fail "no $lang example of the cache with a ttl in README.md"
  done
}

# The check itself must fail when a page and the code disagree.  Each case
# copies a page, changes one thing, and expects the check to name the line.

@test "a changed output line on a page fails the check, naming file and line" {
  local page="$BATS_TEST_TMPDIR/page.md"
  printf '%s\n' '```sql' "SELECT uuid_version('0123abcd-ef45-7789-8abc-def012345678');" \
    '-- 7' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/a" "$page"
  assert_success
  sed -i 's/^-- 7$/-- 4/' "$page"
  run check_docs "$BATS_TEST_TMPDIR/b" "$page"
  assert_failure "$page:2: the output differs from the page"
  assert_output_contains "    7"
}

@test "a changed line of a real page fails the check" {
  mkdir -p "$BATS_TEST_TMPDIR/d"
  cp "$ROOT/docs/uuid.md" "$BATS_TEST_TMPDIR/d/uuid.md"
  # the first exact output line of the page, with its last character changed
  local n
  n=$(grep -n -m1 '^-- [0-9a-z]' "$BATS_TEST_TMPDIR/d/uuid.md" | cut -d: -f1)
  [ -n "$n" ]
  sed -i "${n}s/.\$/#/" "$BATS_TEST_TMPDIR/d/uuid.md"
  run check_docs "$BATS_TEST_TMPDIR/x" "$BATS_TEST_TMPDIR/d/uuid.md"
  assert_failure "the output differs from the page"
}

@test "a missing output, an extra output and a changed error text all fail" {
  local page="$BATS_TEST_TMPDIR/page.md"
  printf '%s\n' '```sql' 'SELECT 1;' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/a" "$page"
  assert_failure "$page:2: the output differs from the page"
  printf '%s\n' '```sql' 'CREATE TABLE t(x);' '-- 1' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/b" "$page"
  assert_failure "$page:2: the output differs from the page"
  printf '%s\n' '```sql' 'SELECT uuid7(-1);' '-- error: uuid7: ms must be an integer' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/c" "$page"
  assert_failure "$page:2: the output differs from the page"
  assert_output_contains "error: uuid7: ms must be an integer in 0..281474976710655"
}

@test "shape lines mask values but not the version of a uuid, the columns or the words" {
  local page="$BATS_TEST_TMPDIR/page.md"
  printf '%s\n' '```sql' 'SELECT uuid7(), 12.5, '"'wal'"';' \
    '--~ 01a22945-d426-7674-963b-7ced8a55032f|0.041659|wal' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/a" "$page"
  assert_success
  sed -i 's/-7674-/-4674-/' "$page"
  run check_docs "$BATS_TEST_TMPDIR/b" "$page"
  assert_failure "the output differs from the page"
  printf '%s\n' '```sql' 'SELECT uuid7(), 12.5, '"'wal'"';' \
    '--~ 01a22945-d426-7674-963b-7ced8a55032f|0.041659|delete' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/c" "$page"
  assert_failure "the output differs from the page"
  printf '%s\n' '```sql' 'SELECT uuid7(), 12.5;' \
    '--~ 01a22945-d426-7674-963b-7ced8a55032f|0.041659|7' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/d" "$page"
  assert_failure "the output differs from the page"
}

@test "a python example's changed output, exception or warning fails the check, naming file and line" {
  local page="$BATS_TEST_TMPDIR/page.md"
  printf '%s\n' '```python' 'import sqlite_acorn' "c = sqlite_acorn.Cache('c.db')" \
    "c.set('k', 'v')" '#> True' "c['k']" "#> 'v'" "c['nope']" "#> KeyError: 'nope'" \
    "print('a'); print('b')" '#> a' '#> b' 'import warnings' "warnings.warn('w')" '#> UserWarning: w' \
    'c.stats().capacity' '#~ 1073741824' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/a" "$page"
  echo "$output"
  assert_success
  sed -i "s/^#> 'v'\$/#> 'w'/" "$page"
  run check_docs "$BATS_TEST_TMPDIR/b" "$page"
  assert_failure "$page:6: the output differs from the page"
  assert_output_contains "    'v'"
  sed -i "s/^#> 'w'\$/#> 'v'/; s/^#> KeyError: 'nope'\$/#> KeyError: 'other'/" "$page"
  run check_docs "$BATS_TEST_TMPDIR/c" "$page"
  assert_failure "$page:8: the output differs from the page"
  sed -i "s/^#> KeyError: 'other'\$/#> KeyError: 'nope'/; s/^#> b\$//" "$page"
  run check_docs "$BATS_TEST_TMPDIR/d" "$page"
  assert_failure "$page:10: the output differs from the page"
  printf '%s\n' '```python' '1 + 1' '' '#> 2' '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/e" "$page"
  assert_failure "line 4: an output line that is not right below a statement"
}

@test "a block marked not run is compiled: a query that no longer compiles fails" {
  local page="$BATS_TEST_TMPDIR/page.md"
  printf '%s\n' '```sql' '-- not run: long' \
    "SELECT writes_per_sec FROM bench_insert WHERE rows = 100000000;" '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/a" "$page"
  assert_success
  printf '%s\n' '```sql' '-- not run: long' \
    "SELECT writes_per_sec FROM bench_insert WHERE nonesuch = 1;" '```' >"$page"
  run check_docs "$BATS_TEST_TMPDIR/b" "$page"
  assert_failure "$page:3: does not compile: no such column: nonesuch"
}

# check_ruby DIR FILE...: run every ```ruby example of the FILEs with ruby,
# the gem's lib/ laid out in DIR/lib with this build's acorn.so; print the
# differences, fail if any.
check_ruby() {
  local dir=$1 s b lib=$1/lib
  shift
  mkdir -p "$dir/ex" "$dir/run" "$lib/sqlite_acorn" "$lib/active_support/cache"
  sed "s/@VERSION@/$(cat "$ROOT/VERSION")/g" "$ROOT/ext/packages/ruby/lib/sqlite_acorn.rb" >"$lib/sqlite_acorn.rb"
  cp "$ROOT/ext/packages/ruby/lib/active_support/cache/acorn_store.rb" "$lib/active_support/cache/"
  ln -sf "$ACORN.so" "$lib/sqlite_acorn/acorn.so"
  "$PYTHON" "$TESTS/doc_examples.py" extract-ruby "$dir/ex" "$@" || return 1
  for s in "$dir"/ex/*.rb; do
    [ -e "$s" ] || continue
    b=${s%.rb}
    if [ -e "$b.checkonly" ]; then
      ruby -c "$s" >/dev/null 2>"$b.err"; echo $? >"$b.rc"
    else
      mkdir -p "$dir/run/${b##*/}"
      (cd "$dir/run/${b##*/}" && TMPDIR=$PWD timeout 120 ruby -I "$lib" "$s" >"$b.out" 2>"$b.err"; echo $? >"$b.rc")
    fi
  done
  "$PYTHON" "$TESTS/doc_examples.py" compare-ruby "$dir/ex"
}

need_ruby_examples() {
  [ -z "${ACORN_PRELOAD:-}" ] || skip "ruby cannot load the sanitized build; make test checks the Ruby examples"
  command -v ruby >/dev/null && ruby -rsqlite3 -ractive_support -e '' 2>/dev/null ||
    skip "no ruby with sqlite3 and activesupport here (tests/install-deps dist: ruby ruby-sqlite3 ruby-activesupport)"
}

@test "every Ruby example in README.md and docs/ gives the output the page shows" {
  need_ruby_examples
  run check_ruby "$BATS_TEST_TMPDIR" "${DOCS[@]}"
  echo "$output"
  assert_success
  [[ "${lines[0]}" =~ ^[0-9]+\ blocks ]]
  echo "# ${lines[0]}" >&3
}

@test "a Ruby example that prints another line, more lines, or raises fails the check" {
  need_ruby_examples
  local page="$BATS_TEST_TMPDIR/page.md"
  printf '%s\n' '```ruby' 'require "active_support"' \
    's = ActiveSupport::Cache.lookup_store(:acorn_store, ":memory:")' \
    's.write("k", "v")' 'puts s.read("k")' '# -> v' '```' >"$page"
  run check_ruby "$BATS_TEST_TMPDIR/a" "$page"
  assert_success
  sed -i 's|^# -> v$|# -> w|' "$page"
  run check_ruby "$BATS_TEST_TMPDIR/b" "$page"
  assert_failure "$page:6: the output differs from the page"
  printf '%s\n' '```ruby' 'puts 1; puts 2' '# -> 1' '```' >"$page"
  run check_ruby "$BATS_TEST_TMPDIR/c" "$page"
  assert_failure "$page:1: the output differs from the page"
  printf '%s\n' '```ruby' 'require "sqlite_acorn"' 'SqliteAcorn.load(nil)' '```' >"$page"
  run check_ruby "$BATS_TEST_TMPDIR/d" "$page"
  assert_failure "$page:1: the block failed (exit 1)"
  assert_output_contains "SqliteAcorn.load: db must be a SQLite3::Database; got NilClass"
  printf '%s\n' '```ruby' '# not run: it needs a Rails application' 'config.cache_store = :acorn_store, (' '```' >"$page"
  run check_ruby "$BATS_TEST_TMPDIR/e" "$page"
  assert_failure "$page:1: the block failed (exit 1)"
}
