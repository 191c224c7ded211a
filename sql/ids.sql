-- What does the primary key's type cost?  integer is a rowid table; the
-- others are TEXT or BLOB keys of WITHOUT ROWID tables, as the same Go
-- benchmark compares them (docs/bench_insert.md).  Run with its small rows
-- (content 12 bytes) and with 1000-byte rows, where the key's order matters
-- more.  Ids are made before the clock starts.
--   sqlite3 < sql/ids.sql              (from the project root; ~40 s)
.load ./dist/acorn
.mode box
SELECT id, content, writes_per_sec, p50_us, p99_us, max_us, db_bytes
  FROM bench_insert
 WHERE id IN ('integer', 'shortid', 'uuid4_text', 'uuid7_text', 'uuid8_text',
              'uuid4_blob', 'uuid7_blob', 'uuid8_blob')
   AND content IN (12, 1000) AND rows = 30000;
