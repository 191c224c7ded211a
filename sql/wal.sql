-- BUSY and WAL growth, the two questions a server's SQLite meets first.
--
-- 1. Deferred or immediate?  Each transaction reads a recent row, then
--    writes (read_first = 1), as a request handler that checks before it
--    inserts.  A deferred transaction that has read and then wants to write
--    while another writer holds the lock (or has committed since its read)
--    is refused with SQLITE_BUSY at once: SQLite cannot wait there, so
--    busy_timeout = 5000 does not help.  The writer rolls back and retries
--    from BEGIN (busy_errors counts those); BEGIN IMMEDIATE takes the write
--    lock first, where the busy handler does wait (busy counts its calls).
-- 2. WAL growth.  A checkpoint cannot pass a frame that an open read
--    transaction may still need: readers that keep their snapshot open
--    (reader_hold_ms) let the -wal file grow; with wal_autocheckpoint = 0
--    nothing is checkpointed while the clock runs at all.
-- 3. What journal_size_limit does to the file afterwards: a log starts again
--    from the start of the file once a checkpoint has copied all of it, and
--    only then is the file cut to the limit; without a limit it keeps the
--    largest size it reached.
--   sqlite3 < sql/wal.sql              (from the project root; ~1 min)
.load ./dist/acorn
.mode box
SELECT begin, threads, busy_errors, busy, writes_per_sec, p50_us, p99_us,
       max_us, rows_written
  FROM bench_insert
 WHERE begin IN ('deferred', 'immediate') AND read_first = 1
   AND threads IN (1, 2, 4, 8) AND busy_timeout = 5000 AND rows = 4000
   AND seconds = 5;
SELECT readers, reader_hold_ms, wal_autocheckpoint, checkpoints,
       checkpoints_blocked, wal_bytes_max, wal_bytes_end, writes_per_sec,
       p99_us, rows_written
  FROM bench_insert
 WHERE readers IN (0, 1, 2, 3, 4) AND reader_hold_ms IN (0, 10, 100)
   AND wal_autocheckpoint IN (1000, 0) AND rows = 10000 AND seconds = 5;
SELECT readers, journal_size_limit, checkpoints,
       checkpoints_blocked, wal_bytes_max, wal_bytes_end, writes_per_sec
  FROM bench_insert
 WHERE readers IN (0, 1) AND journal_size_limit IN (-1, 0, 2097152)
   AND rows = 10000 AND seconds = 5;
