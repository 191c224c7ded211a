#!/usr/bin/env bash
# tests/data/make-cache-v0.2.0.sh: how tests/data/cache-v0.2.0.db was made,
# with acorn 0.2.0 (commit faa9675, "VERSION 0.2.0: ...") built from
# `git archive` in a temporary directory, and the system sqlite3 shell
# (3.40.1).  tests/cache.bats opens the file with the current build and
# expects exactly what this script prints at its end (the listing's times
# are those of the run that made the committed file; another run makes other
# times, so the tests' expected times come from the committed file).
#
#   bash tests/data/make-cache-v0.2.0.sh [OUT]    (default OUT:
#                                                  tests/data/cache-v0.2.0.db)
#
# The file covers the 0.2.0 storage format: page_size 512, so the recency
# records (28 bytes each) of the lru table fill several <t>_rec chunks;
# entries used since their set, some several times; evictions of entries
# never used and of used ones (head and low past 0); deletes and sets of
# stored keys that leave records behind (dead past 0); TEXT, BLOB and
# INTEGER keys, TEXT and BLOB values; entries expiring in 2100, and expired
# entries still stored (reads must miss them, the next write reclaims
# them): one per table expired since 2001-09-09 (expires 1000000000000),
# set by the table's last statement (each row a write makes first reclaims
# what has expired, so one such row is all a table can keep), and entries
# set to expire 3 s after their set, one of them used first, that expired
# after the last write (the script waits for that, and checks it); a fifo
# table.
set -euo pipefail
cd "$(dirname "$0")/../.."
REV=faa9675
out=${1:-tests/data/cache-v0.2.0.db}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/acorn-v0.2.0.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git archive "$REV" | tar -x -C "$tmp/src"
make --no-print-directory -s -C "$tmp/src" dist/acorn.so >/dev/null
so="$tmp/src/dist/acorn"
rm -f "$out" "$out-journal"

# Each statement on its own line, as it ran; the -bail shell stops at the
# first error.
sqlite3 -batch -bail "$out" ".load $so" "$(cat <<'SQL'
PRAGMA page_size = 512;
PRAGMA journal_mode = DELETE;
CREATE VIRTUAL TABLE thumbs USING cache(capacity = 3000, recency_buffer = 16);
INSERT INTO thumbs(key, value) WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM s WHERE x < 59) SELECT printf('k%03d', x), printf('text value %03d .................', x) FROM s;
INSERT INTO thumbs(key, value) WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 10) SELECT x, zeroblob(20) FROM s;
INSERT INTO thumbs(key, value) WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM s WHERE x < 9) SELECT CAST(printf('b%02d', x) AS BLOB), CAST(printf('blob value %02d.............', x) AS BLOB) FROM s;
INSERT INTO thumbs(key, value, expires) VALUES ('later1', 'expires in 2100', 4102444800000), ('later2', x'2100', 4102444800000);
INSERT INTO thumbs(key, value, expires) VALUES ('soon1', 'expires 3 s after its set', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 3000), ('soon2', x'5050', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 3000);
SELECT count(*) FROM thumbs WHERE key IN (SELECT printf('k%03d', x) FROM (WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM s WHERE x < 39) SELECT x FROM s)) AND length(value) > 0;
SELECT length(value) FROM thumbs WHERE key IN (1, 2, 3, 'k005', 'k010', 'k015', 'k020', 'k030', 'k035', 'later1', 'soon1');
SELECT length(value) FROM thumbs WHERE key IN (CAST('b01' AS BLOB), CAST('b02' AS BLOB), 'k005', 'k030', 3);
SELECT length(value) FROM thumbs WHERE key = 'k005';
INSERT INTO thumbs(key, value) WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM s WHERE x < 49) SELECT printf('n%03d', x), printf('new value %03d ..................', x) FROM s;
DELETE FROM thumbs WHERE key IN ('k020', 'k021', 'n003', CAST('b05' AS BLOB));
INSERT INTO thumbs(key, value) VALUES ('k030', 'set again'), (2, x'0202');
SELECT length(value) FROM thumbs WHERE key IN ('k035', 'n010', 'n011', 'k030', 3, 'later2');
SELECT length(value) FROM thumbs WHERE key IN ('n010', 'k035');
SELECT length(value) FROM thumbs WHERE key = 'missing';
INSERT INTO thumbs(key, value, expires) VALUES (99, x'99', 1000000000000);
CREATE VIRTUAL TABLE pages USING cache(capacity = 400, policy = fifo);
INSERT INTO pages(key, value) WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM s WHERE x < 11) SELECT printf('p%02d', x), printf('page %02d ........................', x) FROM s;
INSERT INTO pages(key, value, expires) VALUES (7, x'07070707', 4102444800000), (CAST('pb' AS BLOB), 'blob key', NULL), ('soon3', 'expires 3 s after its set', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 3000);
SELECT length(value) FROM pages WHERE key IN ('p05', 'p06', 7);
DELETE FROM pages WHERE key = 'p07';
INSERT INTO pages(key, value) VALUES ('p08', 'set again'), ('p12', 'page 12');
INSERT INTO pages(key, value, expires) VALUES (-5, x'05', 1000000000000);
SQL
)" >/dev/null

# Wait until the entries set to expire 3 s after their set have expired.
sleep 4
n=$(sqlite3 -batch -readonly "$out" "SELECT (SELECT count(*) FROM thumbs_expiry WHERE expires < 4102444800000)
  + (SELECT count(*) FROM pages_expiry WHERE expires < 4102444800000)")
[ "$n" -ge 4 ] || { echo "make-cache-v0.2.0.sh: only $n expired entries stored; the writes took too long?" >&2; exit 1; }

# What the file holds, read by the 0.2.0 build on a read-only connection
# (a listing that does not read value is not a use; nothing is written).
sqlite3 -batch -bail -readonly "$out" ".load $so" "
SELECT 'thumbs', * FROM cache_stats('thumbs');
SELECT 'pages', * FROM cache_stats('pages');
SELECT 'thumbs', quote(key), size, created, last_used, quote(hits), quote(expires) FROM thumbs;
SELECT 'pages', quote(key), size, created, last_used, quote(hits), quote(expires) FROM pages;"
# The storage counters this file is meant to cover (read from the shadow
# tables here only, to show the coverage; the tests go through SQL).
sqlite3 -batch -bail -readonly "$out" "
SELECT 'format', 'thumbs', head, low, dead, (SELECT count(*) FROM thumbs_rec), (SELECT count(*) FROM thumbs_expiry) FROM thumbs_config;
SELECT 'format', 'pages', head, low, dead, (SELECT count(*) FROM pages_rec), (SELECT count(*) FROM pages_expiry) FROM pages_config;
PRAGMA page_size; PRAGMA page_count;"
# The 0.2.0 build's own check, on a copy (the check is a write: it would
# reclaim the expired entries of the file itself).
cp "$out" "$tmp/check.db"
sqlite3 -batch -bail "$tmp/check.db" ".load $so" "
INSERT INTO thumbs(thumbs) VALUES ('integrity_check');
INSERT INTO pages(pages) VALUES ('integrity_check');"
echo "integrity_check: ok"
