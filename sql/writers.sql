-- Does more than one writer help?  1, 2, 4 and 16 writer threads, each with
-- its own connection, with and without an application mutex around every
-- insert, as a Go benchmark of SQLite drivers asks with 1, 2, 4 and 16
-- goroutines and a sync.Mutex (docs/bench_insert.md).  WAL,
-- synchronous=NORMAL, busy_timeout=1000.
--   sqlite3 < sql/writers.sql          (from the project root; ~10 s)
.load ./dist/acorn
.mode box
SELECT threads, mutex, writes_per_sec, ns_per_write, p50_us, p99_us, max_us,
       busy, rows_written, fsync_us
  FROM bench_insert
 WHERE threads IN (1, 2, 4, 16) AND mutex IN (0, 1) AND rows = 20000;
