-- Your own table: how fast will it take writes with these settings?
-- An example to edit.  The table: events with two secondary indexes, already
-- holding 100,000 rows (the schema fills it; a template of your database
-- would do the same with your real data), keyed either by an integer rowid
-- or by a uuid7 BLOB (WITHOUT ROWID, as bench_insert keys its blob tables).
-- Each run writes 10,000 more rows with the statement below, in a WAL and
-- in a rollback (delete) journal, one row per transaction and 100, at
-- synchronous=normal; a run stops after 5 s (a rollback journal at batch 1
-- waits for fsyncs) and reports what it wrote in that time.
--   sqlite3 < sql/own.sql              (from the project root; ~30 s)
--
-- To make it yours:
--   schema     your CREATE TABLE, CREATE INDEX and CREATE TRIGGER statements
--              (and, to start from a size, an INSERT that fills the table);
--   statement  your write, with ?1 the row number, ?2 the id that id= makes
--              (NULL for id='integer', so an INTEGER PRIMARY KEY takes the
--              next rowid), ?3 a text of content= bytes; anything else from
--              SQL (random(), randomblob(n), uuid7_blob(), unixepoch()).
--   template   instead of filling the table in the schema, copy your own
--              database, which is opened read-only and never written:
--                AND template = '/path/to/app.db'   (schema then only adds
--              to it, e.g. the index you are wondering about).
.load ./dist/acorn
.mode box
SELECT id, journal, batch, rows_written, writes_per_sec, p50_us, p99_us,
       db_bytes
  FROM bench_insert
 WHERE id = 'integer'
   AND schema = '
     CREATE TABLE events(
       id      INTEGER PRIMARY KEY,
       user_id INTEGER NOT NULL,
       kind    INTEGER NOT NULL,
       created INTEGER NOT NULL,
       body    TEXT NOT NULL);
     CREATE INDEX events_user ON events(user_id, created);
     CREATE INDEX events_kind ON events(kind, created);
     WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM s WHERE n<100000)
     INSERT INTO events(user_id, kind, created, body)
       SELECT abs(random()) % 10000, n % 16, 1700000000 + n, hex(randomblob(100)) FROM s;'
   AND statement = '
     INSERT INTO events(id, user_id, kind, created, body)
     VALUES (?2, abs(random()) % 10000, ?1 % 16, unixepoch(), ?3)'
   AND journal IN ('wal', 'delete') AND batch IN (1, 100)
   AND content = 200 AND rows = 10000 AND seconds = 5
UNION ALL
SELECT id, journal, batch, rows_written, writes_per_sec, p50_us, p99_us,
       db_bytes
  FROM bench_insert
 WHERE id = 'uuid7_blob'
   AND schema = '
     CREATE TABLE events(
       id      BLOB PRIMARY KEY,
       user_id INTEGER NOT NULL,
       kind    INTEGER NOT NULL,
       created INTEGER NOT NULL,
       body    TEXT NOT NULL) WITHOUT ROWID;
     CREATE INDEX events_user ON events(user_id, created);
     CREATE INDEX events_kind ON events(kind, created);
     WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM s WHERE n<100000)
     INSERT INTO events(id, user_id, kind, created, body)
       SELECT uuid7_blob(), abs(random()) % 10000, n % 16, 1700000000 + n,
              hex(randomblob(100)) FROM s;'
   AND statement = '
     INSERT INTO events(id, user_id, kind, created, body)
     VALUES (?2, abs(random()) % 10000, ?1 % 16, unixepoch(), ?3)'
   AND journal IN ('wal', 'delete') AND batch IN (1, 100)
   AND content = 200 AND rows = 10000 AND seconds = 5;
