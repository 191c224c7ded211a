-- acorn in one minute: run from the project root with `make demo`
-- (or: sqlite3 :memory: < sql/demo.sql).
.load ./dist/acorn
.mode box
.print
.print acorn: ids, a cache and writer benchmarks inside SQLite
SELECT acorn_version() AS version, sqlite_version() AS sqlite;

.print
.print == ids: uuid4 (random), uuid7 (time-ordered, counter), uuid8 (time-ordered, sub-ms)
SELECT uuid4() AS uuid4, uuid7() AS uuid7, uuid8() AS uuid8;

.print
.print == uuid7 and uuid8 made in a row sort in the order they were made
WITH ids AS MATERIALIZED (SELECT value AS n, uuid7() AS u7, uuid8() AS u8
                          FROM generate_series(1, 5))
SELECT n, u7, u8 FROM ids ORDER BY u7;

.print
.print == the time inside: uuid_timestamp() gives back unix milliseconds
SELECT uuid7(1700000000000) AS "uuid7(1700000000000)",
       uuid_timestamp(uuid7(1700000000000)) AS ms,
       datetime(uuid_timestamp(uuid8(1700000000000))/1000, 'unixepoch') AS utc;

.print
.print == text and 16-byte blob forms convert both ways; junk gives NULL
SELECT hex(uuid_blob('{0123ABCD-EF45-7789-8ABC-DEF012345678}')) AS "hex(blob)",
       uuid_str(x'0123abcdef4577898abcdef012345678') AS str,
       uuid_version('0123abcd-ef45-7789-8abc-def012345678') AS version,
       quote(uuid_str('not-a-uuid')) AS junk;

.print
.print == blobs as keys: 16 bytes instead of 36, same order
CREATE TABLE posts(id BLOB PRIMARY KEY, title TEXT) WITHOUT ROWID;
INSERT INTO posts SELECT uuid7_blob(), 'post ' || value FROM generate_series(1, 1000);
SELECT count(*) AS posts, sum(length(id)) AS key_bytes,
       (SELECT title FROM posts ORDER BY id DESC LIMIT 1) AS newest FROM posts;

.print
.print == cache: a capacity-bounded LRU store of blobs in shadow tables (capacity 100 bytes here)
CREATE VIRTUAL TABLE thumbs USING cache(capacity = '100B');
-- 25-byte values that start like PNG files; size = key + value = 30 bytes
INSERT INTO thumbs(key, value) VALUES ('a.png', x'89504e470d0a1a0a' || zeroblob(17)),
                                      ('b.png', x'89504e470d0a1a0a' || zeroblob(17)),
                                      ('c.png', x'89504e470d0a1a0a' || zeroblob(17));
.print == a get is a use: a.png becomes the most recently used
SELECT length(value) AS got_a FROM thumbs WHERE key = 'a.png';
.print == a fourth 30-byte entry evicts b.png, the least recently used; a listing is not a use
INSERT INTO thumbs(key, value) VALUES ('d.png', x'89504e470d0a1a0a' || zeroblob(17));
SELECT key, size, hits FROM thumbs;
.print == part of a value, read with incremental blob I/O
SELECT hex(cache_read('thumbs', 'a.png', 0, 4)) AS first_4_bytes;
.print == lowering the capacity to 64 bytes evicts at once: c.png goes, a.png (used twice) stays
INSERT INTO thumbs(thumbs, value) VALUES ('capacity', '64B');
SELECT key, hits FROM thumbs;
SELECT * FROM cache_stats('thumbs');
DROP TABLE thumbs;

.print
.print == bench_insert: how fast does this SQLite take writes? (a scratch database in $TMPDIR, a few seconds)
.print == three primary key types, 5000 autocommit inserts each, WAL, synchronous=normal
SELECT id, writes_per_sec, p50_us, p99_us, rows_written
  FROM bench_insert
 WHERE id IN ('integer', 'uuid7_blob', 'uuid4_blob') AND rows = 5000;
.print
.print == the same 5000 rows, autocommit against 1000 per transaction
SELECT batch, writes_per_sec, ns_per_write
  FROM bench_insert WHERE batch IN (1, 1000) AND rows = 5000;
