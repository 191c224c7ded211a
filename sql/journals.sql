-- Journal modes times synchronous, with normal and exclusive locking.  The
-- notes of squirrel, a Go cache stored in SQLite, say "journal mode delete
-- is almost as fast as WAL but only if the locking mode is exclusive": this
-- checks it.  Each run is capped at 2 seconds: slow fsync-bound
-- combinations report what they wrote by then.
--   sqlite3 < sql/journals.sql         (from the project root; ~1 min)
.load ./dist/acorn
.mode box
SELECT journal, synchronous, locking, writes_per_sec, p50_us, p99_us,
       rows_written, fsync_us
  FROM bench_insert
 WHERE journal IN ('wal', 'delete', 'truncate', 'persist', 'memory', 'off')
   AND synchronous IN ('off', 'normal', 'full', 'extra')
   AND locking IN ('normal', 'exclusive')
   AND rows = 3000 AND seconds = 2;
