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

# The rows of docs/cache.md's "Values across languages" as Python writes
# them: (key, value, pickle needed).  Both processes of the next test read it.
values_rows() {
  cat >"$BATS_TEST_TMPDIR/rows.py" <<'PY'
import math
ROWS = [
    ("a-str", "h\u00e9llo", False),
    ("b-bytes", b"\x00\xff", False),
    ("c-bytes-ff", b"\xffj[]", False),
    ("d-int", 42, False),
    ("e-int-min", -2**63, False),
    ("f-int-max", 2**63 - 1, False),
    ("g-int-big", 2**63, False),
    ("h-int-small", -2**64, False),
    ("i-float", 0.5, False),
    ("j-float-inf", -math.inf, False),
    ("k-float-nan", math.nan, False),
    ("l-true", True, False),
    ("m-none", None, False),
    ("n-dict", {"a": [1, 2.5, None, False, "\u00e9"], "b": {}}, False),
    ("o-list", [2**53 - 1, -(2**53 - 1)], False),
    ("p-tuple", (1, "x"), True),
    ("q-int-dict", {1: "x"}, True),
    ("r-bytearray", bytearray(b"ab"), False),
]
def same(a, b):
    if type(a) is float and type(b) is float and math.isnan(a):
        return math.isnan(b)
    if type(a) is bytearray:
        a = bytes(a)
    return a == b and type(a) is type(b)
PY
}

@test "values across languages: each row of docs/cache.md's table stored as it says and read back by another process, in WAL and in a rollback journal" {
  values_rows
  local mode db
  for mode in wal delete; do
    db="$BATS_TEST_TMPDIR/values-$mode.db"
    run python_run - "$db" "$mode" "$BATS_TEST_TMPDIR/rows.py" <<'PY'
import sys
from sqlite_acorn import Cache
path, mode, rows = sys.argv[1:]
exec(open(rows).read())
plain, pickling = Cache(path, journal_mode=mode), Cache(path, journal_mode=mode, pickle=True)
for key, value, needs_pickle in ROWS:
    if needs_pickle:
        try:
            plain.set(key, value)
            print(key, "stored without pickle=True")
        except TypeError:
            pass
    (pickling if needs_pickle else plain).set(key, value)
print("written")
PY
    assert_success
    assert_output "written"
    # numbers as SQL quotes them (infinities by name: shells of SQLite
    # 3.38-3.51 and 3.52 print them differently), BLOBs and plain TEXT in hex, a marked
    # TEXT as the hex of its 0xFF and letter, then the rest as text (the
    # start of a pickle in hex)
    run acorn_sql "SELECT key, typeof(value), CASE
  WHEN value = 9e999 THEN 'inf' WHEN value = -9e999 THEN '-inf'
  WHEN typeof(value) IN ('integer', 'real') THEN quote(value)
  WHEN typeof(value) = 'blob' OR substr(CAST(value AS BLOB), 1, 1) <> x'ff' THEN hex(CAST(value AS BLOB))
  WHEN substr(CAST(value AS BLOB), 2, 1) = x'70' THEN 'FF70 ' || hex(substr(CAST(value AS BLOB), 3, 2)) || '...'
  ELSE hex(substr(CAST(value AS BLOB), 1, 2)) || ' ' || CAST(substr(CAST(value AS BLOB), 3) AS TEXT) END
FROM cache ORDER BY key;" "$db"
    assert_success
    assert_output "a-str|text|68C3A96C6C6F
b-bytes|blob|00FF
c-bytes-ff|blob|FF6A5B5D
d-int|integer|42
e-int-min|integer|-9223372036854775808
f-int-max|integer|9223372036854775807
g-int-big|text|FF69 9223372036854775808
h-int-small|text|FF69 -18446744073709551616
i-float|real|0.5
j-float-inf|real|-inf
k-float-nan|text|FF66 nan
l-true|text|FF6A true
m-none|text|FF6A null
n-dict|text|FF6A {\"a\":[1,2.5,null,false,\"é\"],\"b\":{}}
o-list|text|FF6A [9007199254740991,-9007199254740991]
p-tuple|text|FF70 8005...
q-int-dict|text|FF70 8005...
r-bytearray|blob|6162"
    run python_run - "$db" "$mode" "$BATS_TEST_TMPDIR/rows.py" <<'PY'
import sys
from sqlite_acorn import Cache
path, mode, rows = sys.argv[1:]
exec(open(rows).read())
c = Cache(path, journal_mode=mode)
for key, value, _ in ROWS:
    got = c.get(key)
    if not same(value, got):
        print(key, "read back as", repr(got))
print("read")
PY
    assert_success
    assert_output "read"
  done
}

@test "values across languages: each marked form written by hand in SQL reads back, acorn 0.2's forms too; Marshal, Keyv and unknown marks raise ForeignValueError" {
  local db="$BATS_TEST_TMPDIR/marked.db"
  # (0x80 0x04 ... is what acorn 0.2's Cache stored for the tuple (1, 'x'))
  run acorn_sql "CREATE VIRTUAL TABLE cache USING cache;
INSERT INTO cache(key, value) VALUES
  ('int', 7), ('real', 2.0), ('text', 'x'), ('blob', x'ff6d'),
  ('i', CAST(x'ff69' || CAST('123456789012345678901234567890' AS BLOB) AS TEXT)),
  ('i-0.2', CAST(x'ff69' || CAST('41' AS BLOB) AS TEXT)),
  ('f-0.2', CAST(x'ff66' || CAST('1.5' AS BLOB) AS TEXT)),
  ('f-nan', CAST(x'ff66' || CAST('nan' AS BLOB) AS TEXT)),
  ('j', CAST(x'ff6a' || CAST('{\"a\":[1,true,null],\"b\":\"é\"}' AS BLOB) AS TEXT)),
  ('p-0.2', CAST(x'ff70' || x'80049509000000000000004b018c01789486942e' AS TEXT)),
  ('m', CAST(x'ff6d' || x'0408' AS TEXT)),
  ('k', CAST(x'ff6b' || CAST('s:hi' AS BLOB) AS TEXT)),
  ('z', CAST(x'ff7a' AS TEXT)),
  ('ff', CAST(x'ff' AS TEXT)),
  ('j-bad', CAST(x'ff6a' || CAST('{' AS BLOB) AS TEXT));" "$db"
  assert_success
  run python_run - "$db" <<'PY'
import sys
import sqlite_acorn
from sqlite_acorn import Cache, ForeignValueError
c = Cache(sys.argv[1])
for k in ("int", "real", "text", "blob", "i", "i-0.2", "f-0.2", "f-nan", "j", "p-0.2"):
    print(k, repr(c.get(k)))
for k in ("m", "k", "z", "ff", "j-bad"):
    try:
        c.get(k)
    except ValueError as e:
        print(type(e).__name__, e)
        if isinstance(e, ForeignValueError):
            print("   ", e.key, e.mark, e.language, e.format)
# a foreign value is never a miss: each form of read says so
for f in (lambda: c["k"], lambda: c.pop("k"), lambda: c.get("k", expire_time=True),
          lambda: c.incr("m")):
    try:
        f()
    except ForeignValueError as e:
        print(e)
print("k" in c, "m" in c)
# incr of acorn 0.2's 'i' value stores an INTEGER
print(c.incr("i-0.2"), c.decr("i", 123456789012345678901234567890 - 5))
PY
  assert_success
  assert_output "int 7
real 2.0
text 'x'
blob b'\\xffm'
i 123456789012345678901234567890
i-0.2 41
f-0.2 1.5
f-nan nan
j {'a': [1, True, None], 'b': 'é'}
p-0.2 (1, 'x')
ForeignValueError sqlite_acorn.Cache.get: the value of 'm' was written by Ruby (Marshal); Python cannot read it
    m m Ruby Marshal
ForeignValueError sqlite_acorn.Cache.get: the value of 'k' was written by Node (Keyv); Python cannot read it
    k k Node Keyv
ForeignValueError sqlite_acorn.Cache.get: the value of 'z' starts with the byte 0xFF and then 'z', a mark this version of sqlite_acorn does not know (a newer acorn wrote it?); Python cannot read it
    z z None None
ForeignValueError sqlite_acorn.Cache.get: the value of 'ff' starts with the byte 0xFF and then nothing, a mark this version of sqlite_acorn does not know (a newer acorn wrote it?); Python cannot read it
    ff  None None
ValueError sqlite_acorn.Cache.get: the value of 'j-bad' is marked 'j' but cannot be read as such: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)
sqlite_acorn.Cache.get: the value of 'k' was written by Node (Keyv); Python cannot read it
sqlite_acorn.Cache.pop: the value of 'k' was written by Node (Keyv); Python cannot read it
sqlite_acorn.Cache.get: the value of 'k' was written by Node (Keyv); Python cannot read it
sqlite_acorn.Cache.incr: the value of 'm' was written by Ruby (Marshal); Python cannot read it
True True
42 5"
  run acorn_sql "SELECT key, typeof(value), value FROM cache WHERE key IN ('i-0.2', 'i');" "$db"
  assert_output "i|integer|5
i-0.2|integer|42"
}
