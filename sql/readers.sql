-- One writer and 0 to 4 reader threads, each with its own connection,
-- running point SELECTs by id on the same table while the writer runs: what
-- do reads beside the writer cost it?  WAL lets readers and the writer
-- overlap.
--   sqlite3 < sql/readers.sql          (from the project root; ~15 s)
.load ./dist/acorn
.mode box
SELECT threads, readers, writes_per_sec, reads_per_sec, p50_us, p99_us,
       busy, rows_written
  FROM bench_insert
 WHERE readers IN (0, 1, 2, 3, 4) AND threads = 1 AND rows = 30000;
