-- Rows per transaction (1 is autocommit) times how each insert reaches
-- SQLite: prepared once and re-bound, prepared again for every insert, or
-- SQL text with literal values through sqlite3_exec: what a statement costs
-- next to a commit (the kind of per-statement cost that two proposed changes
-- to the Go driver mattn/go-sqlite3 remove).  Runs capped at 5 seconds.
--   sqlite3 < sql/batching.sql         (from the project root; ~20 s)
.load ./dist/acorn
.mode box
SELECT batch, prepare, writes_per_sec, ns_per_write, p50_us, p99_us,
       rows_written
  FROM bench_insert
 WHERE batch IN (1, 10, 100, 1000, 10000)
   AND prepare IN ('once', 'each', 'exec')
   AND rows = 100000 AND seconds = 5;
