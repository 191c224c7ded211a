-- squirrel's questions, asked of a cache table inside SQLite.  squirrel is a
-- Go cache stored in SQLite, taken out of the SQLite storage of a BitTorrent
-- client.  It published the MB/s that storage takes when a torrent's 2 MiB
-- pieces arrive in 16 KiB blocks, under each journal mode, on file and in
-- memory, and noted that journal mode delete is almost as fast as WAL only
-- with exclusive locking, and that pointer-map pages (auto_vacuum other than
-- NONE) make reads and writes at offsets inside a blob much faster.  Here,
-- one writer, autocommit, journal mode x locking mode x synchronous on file,
-- and the two journals that differ in memory (there SQLite keeps every
-- other journal in memory too, and syncs nothing):
--
-- 1. Small puts: INSERT INTO c(key, value) VALUES (?1, ?3), 100-byte
--    values into a cache table: puts a second (writes_per_sec).
-- 2. Pieces: 8 pieces of 2 MiB reserved as zeroblobs in a cache table of a
--    database with auto_vacuum = INCREMENTAL; row i writes its 16 KiB block
--    into piece ((i-1)/128) % 8 at offset ((i-1) % 128) * 16384 with
--    cache_write (in place, incremental blob I/O), so 4096 rows write each
--    piece 4 times over: MB a second of block data (content_mb_per_sec).
--    ?3 is bound as TEXT and cache_write takes a BLOB: the CAST changes the
--    type, it copies nothing.
-- 3. The pointer maps: the pieces of 2 again, in WAL and delete with
--    exclusive locking and synchronous off, with auto_vacuum NONE and
--    INCREMENTAL.
--
-- Each run is capped at 1 s: runs that wait for an fsync per commit report
-- what they wrote by then.
--   sqlite3 < sql/pieces.sql           (from the project root; ~40 s)
.load ./dist/acorn
.mode box
SELECT storage, journal, locking, synchronous, writes_per_sec, p50_us,
       p99_us, rows_written, fsync_us
  FROM bench_insert
 WHERE schema = 'CREATE VIRTUAL TABLE c USING cache(capacity = ''64MiB'')'
   AND statement = 'INSERT INTO c(key, value) VALUES (?1, ?3)'
   AND journal IN ('wal', 'delete', 'truncate', 'persist', 'memory', 'off')
   AND locking IN ('normal', 'exclusive')
   AND synchronous IN ('off', 'normal', 'full')
   AND storage = 'file' AND content = 100 AND rows = 3000 AND seconds = 1
UNION ALL
SELECT storage, journal, locking, synchronous, writes_per_sec, p50_us,
       p99_us, rows_written, fsync_us
  FROM bench_insert
 WHERE schema = 'CREATE VIRTUAL TABLE c USING cache(capacity = ''64MiB'')'
   AND statement = 'INSERT INTO c(key, value) VALUES (?1, ?3)'
   AND journal IN ('memory', 'off') AND locking IN ('normal', 'exclusive')
   AND synchronous = 'off'
   AND storage = 'memory' AND content = 100 AND rows = 3000 AND seconds = 1;
SELECT storage, journal, locking, synchronous, content_mb_per_sec,
       writes_per_sec, p50_us, p99_us, rows_written
  FROM bench_insert
 WHERE schema = '
     PRAGMA auto_vacuum = INCREMENTAL;
     CREATE VIRTUAL TABLE c USING cache(capacity = ''64MiB'');
     WITH RECURSIVE p(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM p WHERE k < 7)
     INSERT INTO c(key, value) SELECT k, zeroblob(2097152) FROM p;'
   AND statement = '
     SELECT cache_write(''c'', ((?1-1)/128)%8, ((?1-1)%128)*16384, CAST(?3 AS BLOB))'
   AND journal IN ('wal', 'delete', 'truncate', 'persist', 'memory', 'off')
   AND locking IN ('normal', 'exclusive')
   AND synchronous IN ('off', 'normal', 'full')
   AND storage = 'file' AND content = 16384 AND rows = 4096 AND seconds = 1
UNION ALL
SELECT storage, journal, locking, synchronous, content_mb_per_sec,
       writes_per_sec, p50_us, p99_us, rows_written
  FROM bench_insert
 WHERE schema = '
     PRAGMA auto_vacuum = INCREMENTAL;
     CREATE VIRTUAL TABLE c USING cache(capacity = ''64MiB'');
     WITH RECURSIVE p(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM p WHERE k < 7)
     INSERT INTO c(key, value) SELECT k, zeroblob(2097152) FROM p;'
   AND statement = '
     SELECT cache_write(''c'', ((?1-1)/128)%8, ((?1-1)%128)*16384, CAST(?3 AS BLOB))'
   AND journal IN ('memory', 'off') AND locking IN ('normal', 'exclusive')
   AND synchronous = 'off'
   AND storage = 'memory' AND content = 16384 AND rows = 4096 AND seconds = 1;
SELECT CASE WHEN schema LIKE '%INCREMENTAL%' THEN 'incremental' ELSE 'none'
       END AS auto_vacuum,
       journal, content_mb_per_sec, writes_per_sec, p50_us, p99_us
  FROM bench_insert
 WHERE schema IN ('
     CREATE VIRTUAL TABLE c USING cache(capacity = ''64MiB'');
     WITH RECURSIVE p(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM p WHERE k < 7)
     INSERT INTO c(key, value) SELECT k, zeroblob(2097152) FROM p;', '
     PRAGMA auto_vacuum = INCREMENTAL;
     CREATE VIRTUAL TABLE c USING cache(capacity = ''64MiB'');
     WITH RECURSIVE p(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM p WHERE k < 7)
     INSERT INTO c(key, value) SELECT k, zeroblob(2097152) FROM p;')
   AND statement = '
     SELECT cache_write(''c'', ((?1-1)/128)%8, ((?1-1)%128)*16384, CAST(?3 AS BLOB))'
   AND journal IN ('wal', 'delete') AND locking = 'exclusive'
   AND synchronous = 'off' AND content = 16384 AND rows = 4096 AND seconds = 1;
