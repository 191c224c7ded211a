#!/usr/bin/env bats
# The Python package's cache (sqlite_acorn.Cache, memoize, the Django
# backend) from the source tree with this build's acorn.so: the same
# programs `make test-dist` runs against the installed wheel
# (tests/dist/python_cache_test.py says what each checks).

load test_helper

setup() {
  python_pkg "$BATS_TEST_TMPDIR/pkg"
  mkdir -p "$BATS_TEST_TMPDIR/scratch"
  export PYTHONPATH="$BATS_TEST_TMPDIR/pkg"
}

run_mode() {
  run python_run "$TESTS/dist/python_cache_test.py" "$1" "$BATS_TEST_TMPDIR/scratch"
  echo "$output"
  assert_success
  [[ "${lines[-1]}" == "PASS wheel-$1 "* ]]
}

@test "Cache: every method, each type of value stored as documented, options, threads and fork" {
  run_mode cache
}

@test "memoize: one computer while threads and processes wait, a killed computer's lock taken over" {
  run_mode memoize
}

@test "the Django backend through django.core.cache.caches: every method and timeout case" {
  /usr/bin/env "$PYTHON" -c 'import django' 2>/dev/null ||
    fail "Debian's python3-django is missing (tests/install-deps test installs it)"
  run_mode django
}

@test "Cache on a read-only file (as an unprivileged user): gets work with journal_mode=None, and what needs a write says so" {
  local ro py
  ro=$(mktemp -d "${TMPDIR:-/tmp}/acorn-pyro.XXXXXX")
  chmod 755 "$ro"
  python_pkg "$ro/pkg"
  chmod -R a+rX "$ro/pkg"
  run python_run - "$ro" <<'PY'
import sys
from sqlite_acorn import Cache
d = sys.argv[1]
c = Cache(d + "/rollback.db", journal_mode="delete", capacity=1000)
c.set("k", b"v")
c = Cache(d + "/wal.db", capacity=1000)
c.set("k", b"v")
PY
  assert_success
  chmod 444 "$ro/rollback.db"
  mkdir "$ro/w" && mv "$ro"/wal.db* "$ro/w/" && chmod 444 "$ro"/w/wal.db && chmod 555 "$ro/w"
  py=("$PYTHON" -)
  # (the ASan build of make test-asan needs its runtime first; Python's own
  # memory is no leak of acorn's: leaks are python_run's to check)
  [ -z "${ACORN_PRELOAD:-}" ] ||
    py=(env "LD_PRELOAD=$ACORN_PRELOAD" "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0" "${py[@]}")
  [ "$(id -u)" -ne 0 ] || py=(setpriv --reuid=nobody --regid=nogroup --clear-groups -- "${py[@]}")
  run env PYTHONPATH="$ro/pkg" "${py[@]}" "$ro" <<'PY'
import sqlite3, sys
from sqlite_acorn import Cache
d = sys.argv[1]
def show(f):
    try:
        print(repr(f()))
    except Exception as e:
        print(type(e).__name__ + ": " + str(e).replace(d, "D"))
show(lambda: Cache(d + "/rollback.db").get("k"))
c = Cache(d + "/rollback.db", journal_mode=None)
show(lambda: c.get("k"))
show(lambda: c.get("nope", 0))
show(lambda: c.set("k", b"w"))
show(lambda: Cache(d + "/rollback.db", journal_mode=None, capacity=5))
show(lambda: Cache(d + "/rollback.db", "other", journal_mode=None))
show(lambda: Cache(d + "/w/wal.db", journal_mode=None).get("k"))
PY
  chmod -R u+w "$ro"; rm -rf "$ro"
  assert_success
  assert_output "OperationalError: sqlite_acorn.Cache: D/rollback.db is read-only (attempt to write a readonly database), and setting journal_mode=wal needs a write; pass journal_mode=None to leave the file's journal mode and read it
b'v'
0
OperationalError: attempt to write a readonly database
ValueError: sqlite_acorn.Cache: D/rollback.db is read-only (attempt to write a readonly database): gets work, but capacity='5' needs a writable file
ValueError: sqlite_acorn.Cache: D/rollback.db is read-only (attempt to write a readonly database): gets work, but creating the table 'other' needs a writable file
OperationalError: sqlite_acorn.Cache: D/w/wal.db: attempt to write a readonly database"
}
