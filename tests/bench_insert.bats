#!/usr/bin/env bats
# bench_insert: the writer-throughput table-valued function.
# Runs are kept small (few rows, synchronous=off where fsync is not the
# point); speed itself is measured only in bench/, never asserted here.

load test_helper
load bench_insert

# limited_sql SQL: bi under a 400 KiB file size limit, so that SQLite's
# writes fail (EFBIG, which SQLite reports as "disk I/O error"); SIGXFSZ is ignored so the
# write fails instead of killing sqlite3.
limited_sql() {
  ( trap '' XFSZ; ulimit -f 400; bi "$1" )
}   # no fsync where the test is not about it

# tiny_sql SQL: bi under a 512-byte file size limit (nothing of 4 KiB can be
# written).
tiny_sql() {
  ( trap '' XFSZ; ulimit -f 1; bi "$1" )
}

@test "bench_insert is an eponymous module whose every result column is present" {
  run bi ".headers on
SELECT * FROM bench_insert WHERE rows=20 AND $W AND dir='$D';"
  assert_success
  [ "${lines[0]}" = "rows_written|elapsed|writes_per_sec|ns_per_write|p50_us|p99_us|max_us|reads_per_sec|busy|db_bytes|sqlite_version|fsync_us" ]
  [ "${#lines[@]}" -eq 2 ]
  assert_dir_empty "$D"
}

@test "the parameters are hidden columns holding their documented defaults" {
  # seconds cuts the run short, so the default rows=10000 stays cheap
  export TMPDIR="$D"
  run bi "SELECT id, journal, synchronous, threads, mutex, batch, begin, prepare, locking,
       quote(page_size), quote(cache_size), quote(mmap_size), readers, rows, seconds,
       content, busy_timeout, storage, dir FROM bench_insert WHERE seconds=0.05;"
  assert_output "integer|wal|normal|1|0|1|deferred|once|normal|NULL|NULL|NULL|0|10000|0.05|12|1000|file|$D"
  assert_dir_empty "$D"
}

@test "every result column is sane: rows_written equals rows, latencies ordered" {
  run bi "SELECT rows_written = rows, typeof(rows_written),
       elapsed > 0, typeof(elapsed),
       writes_per_sec > 0, typeof(writes_per_sec),
       abs(ns_per_write * writes_per_sec / 1e9 - 1) < 0.01,
       p50_us > 0 AND p50_us <= p99_us AND p99_us <= max_us,
       typeof(p50_us), typeof(max_us),
       reads_per_sec = 0, busy = 0, typeof(busy),
       db_bytes >= 4096, sqlite_version = sqlite_version(),
       fsync_us > 0, typeof(fsync_us)
  FROM bench_insert WHERE rows=50 AND $W AND dir='$D';"
  assert_success
  assert_output "1|integer|1|real|1|integer|1|1|real|real|1|1|integer|1|1|1|real"
  assert_dir_empty "$D"
}

@test "IN lists give one row per combination, in the documented order" {
  run bi "SELECT threads, mutex, rows_written FROM bench_insert
 WHERE threads IN (4, 1, 2) AND mutex IN (1, 0) AND rows=20 AND $W AND dir='$D';"
  assert_success
  assert_output "1|0|20
1|1|20
2|0|20
2|1|20
4|0|20
4|1|20"
  assert_dir_empty "$D"
}

@test "the seed's eight id types run in the documented order, keys of the right type" {
  run bi "SELECT id, rows_written FROM bench_insert
 WHERE id IN ('uuid8_blob','uuid8_text','uuid7_blob','uuid7_text','uuid4_blob',
              'uuid4_text','shortid','integer') AND rows=30 AND $W AND dir='$D';"
  assert_success
  assert_output "integer|30
shortid|30
uuid4_text|30
uuid4_blob|30
uuid7_text|30
uuid7_blob|30
uuid8_text|30
uuid8_blob|30"
  assert_dir_empty "$D"
}

@test "elapsed has microseconds: a run shorter than a millisecond is not 0.0" {
  run bi "SELECT rows_written, elapsed > 0, elapsed < 10, writes_per_sec > 0,
       abs(writes_per_sec * elapsed - 1) < 0.05 OR elapsed < 0.00002
  FROM bench_insert WHERE rows=1 AND storage='memory' AND $W AND dir='$D';"
  assert_success
  assert_output "1|1|1|1|1"
  assert_dir_empty "$D"
}

@test "parameters nest in column order, the first slowest; duplicates count once" {
  run bi "SELECT id, journal, batch FROM bench_insert
 WHERE batch IN (5, 1, 5) AND journal IN ('off','wal') AND id IN ('uuid7_blob','integer')
   AND rows=10 AND $W AND dir='$D';"
  assert_success
  assert_output "integer|wal|1
integer|wal|5
integer|off|1
integer|off|5
uuid7_blob|wal|1
uuid7_blob|wal|5
uuid7_blob|off|1
uuid7_blob|off|5"
  assert_dir_empty "$D"
}

@test "a join feeds a parameter row by row; an empty IN list runs nothing" {
  run bi "SELECT x.t, b.threads, b.rows_written
  FROM (SELECT 1 AS t UNION SELECT 2) x, bench_insert b
 WHERE b.threads = x.t AND b.rows=5 AND b.synchronous='off' AND b.dir='$D';
SELECT count(*) FROM bench_insert WHERE threads IN (SELECT 1 WHERE 0) AND rows=5 AND dir='$D';"
  assert_success
  assert_output "1|1|5
2|2|5
0"
  assert_dir_empty "$D"
}

@test "positional arguments set the parameters in column order" {
  run bi "SELECT id, journal, rows_written FROM bench_insert('uuid4_text', 'truncate', 'off') WHERE rows=15 AND dir='$D';"
  assert_success
  assert_output "uuid4_text|truncate|15"
  assert_dir_empty "$D"
}

@test "every journal mode, prepare mode and begin kind writes all its rows" {
  run bi "SELECT count(*), sum(rows_written = rows), min(rows_written) FROM bench_insert
 WHERE journal IN ('wal','delete','truncate','persist','memory','off')
   AND prepare IN ('once','each','exec') AND batch IN (1, 7) AND begin IN ('deferred','immediate')
   AND id IN ('integer','uuid4_blob') AND rows=15 AND $W AND dir='$D';"
  assert_success
  assert_output "144|144|15"
  assert_dir_empty "$D"
}

@test "prepare=exec writes the same rows as bound parameters, for text and blob ids" {
  run bi "SELECT id, prepare, rows_written FROM bench_insert
 WHERE id IN ('shortid','uuid8_text','uuid8_blob') AND prepare IN ('once','exec')
   AND content=0 AND rows=12 AND $W AND dir='$D';"
  assert_success
  assert_output "shortid|once|12
shortid|exec|12
uuid8_text|once|12
uuid8_text|exec|12
uuid8_blob|once|12
uuid8_blob|exec|12"
  assert_dir_empty "$D"
}

@test "locking=exclusive and the page, cache and mmap pragmas run" {
  run bi "SELECT journal, locking, quote(page_size), rows_written,
       db_bytes >= 80000 AND db_bytes % coalesce(page_size, 4096) = 0
  FROM bench_insert
 WHERE journal IN ('wal','delete') AND locking IN ('normal','exclusive') AND page_size IN (NULL, 65536)
   AND cache_size=-500 AND mmap_size=1048576 AND rows=40 AND content=2000 AND $W AND dir='$D';"
  assert_success
  assert_output "wal|normal|NULL|40|1
wal|normal|65536|40|1
wal|exclusive|NULL|40|1
wal|exclusive|65536|40|1
delete|normal|NULL|40|1
delete|normal|65536|40|1
delete|exclusive|NULL|40|1
delete|exclusive|65536|40|1"
  assert_dir_empty "$D"
}

@test "content sets the bytes of the content column" {
  run bi "SELECT content, rows_written, db_bytes > 100000 FROM bench_insert
 WHERE content IN (0, 5000) AND rows=20 AND $W AND dir='$D';"
  assert_success
  assert_output "0|20|0
5000|20|1"
  assert_dir_empty "$D"
}

@test "threads=4 runs, writes every row once and reports busy as an integer" {
  run bi "SELECT threads, rows_written, typeof(busy) FROM bench_insert
 WHERE threads=4 AND rows=$(big 400) AND dir='$D';"
  assert_success
  assert_output "4|$(big 400)|integer"
  assert_dir_empty "$D"
}

@test "readers run point SELECTs beside the writers and report reads_per_sec" {
  run bi "SELECT readers, rows_written, reads_per_sec > 0 FROM bench_insert
 WHERE readers IN (0, 2) AND id IN ('integer','uuid7_text') AND rows=$(big 400) AND $W AND dir='$D';"
  assert_success
  assert_output "0|$(big 400)|0
2|$(big 400)|1
0|$(big 400)|0
2|$(big 400)|1"
  assert_dir_empty "$D"
}

@test "storage=memory shares one in-memory database among the threads and makes no file" {
  run bi "SELECT storage, threads, readers, rows_written, db_bytes > 0 FROM bench_insert
 WHERE storage='memory' AND threads IN (1, 3) AND readers IN (0, 1) AND rows=$(big 200) AND dir='$D';"
  assert_success
  assert_output "memory|1|0|$(big 200)|1
memory|1|1|$(big 200)|1
memory|3|0|$(big 200)|1
memory|3|1|$(big 200)|1"
  assert_dir_empty "$D"
}

@test "storage=memory writes nothing in dir: it runs where files cannot grow, fsync_us is NULL" {
  # under a 512-byte file size limit the 4 KiB fsync_us probe would fail
  run tiny_sql "SELECT storage, rows_written, quote(fsync_us) FROM bench_insert WHERE storage='memory' AND rows=20 AND dir='$D';"
  assert_success
  assert_output "memory|20|NULL"
  run bi "SELECT storage, fsync_us IS NULL FROM bench_insert WHERE storage IN ('file','memory') AND rows=5 AND $W AND dir='$D';"
  assert_success
  assert_output "file|0
memory|1"
  assert_dir_empty "$D"
}

@test "a run cut short by seconds reports what it wrote and leaves no file" {
  run bi "SELECT rows_written > 0, rows_written < rows, elapsed >= 0.2, elapsed < 5,
       rows_written = writes_per_sec * elapsed OR abs(rows_written - writes_per_sec * elapsed) < 0.01 * rows_written
  FROM bench_insert WHERE rows=10000000 AND seconds=0.2 AND threads IN (1, 2) AND $W AND dir='$D';"
  assert_success
  assert_output "1|1|1|1|1
1|1|1|1|1"
  assert_dir_empty "$D"
}

@test "an insert failure becomes the SQL error with SQLite's message and the run's parameters" {
  run limited_sql "SELECT rows_written FROM bench_insert WHERE content=10000 AND rows=200 AND journal='delete' AND $W AND dir='$D';"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: insert failed: disk I/O error (id=integer journal=delete synchronous=off threads=1 mutex=0 batch=1 begin=deferred prepare=once locking=normal page_size=NULL cache_size=NULL mmap_size=NULL readers=0 rows=200 seconds=60.0 content=10000 busy_timeout=1000 storage=file dir=$D)"
  assert_dir_empty "$D"
}

@test "an insert failure in one of several threads joins them all and leaves no file" {
  run limited_sql "SELECT rows_written FROM bench_insert WHERE content=10000 AND rows=200 AND threads=3 AND readers=1 AND $W AND dir='$D';"
  assert_failure
  assert_output_contains "bench_insert: "
  assert_output_contains "failed: disk I/O error (id=integer journal=wal synchronous=off threads=3 mutex=0"
  assert_dir_empty "$D"
}

@test "rows already produced stay printed when a later run fails" {
  run limited_sql "SELECT content, rows_written FROM bench_insert WHERE content IN (10, 10000) AND rows=200 AND journal='delete' AND $W AND dir='$D';"
  assert_failure
  # stdout (the row) and stderr (the error) may come in either order
  [ "${#lines[@]}" -eq 2 ]
  printf '%s\n' "${lines[@]}" | grep -qx '10|200'
  printf '%s\n' "${lines[@]}" | grep -q "^$(runtime_error 2) bench_insert: insert failed: disk I/O error (id=integer .* content=10000 "
  assert_dir_empty "$D"
}

@test "files that exist in dir already are neither opened, changed nor removed" {
  local f
  for f in acorn-bench-0000000000000000.db acorn-bench-0000000000000000.db-wal other.db other.db-journal; do
    printf 'keep %s' "$f" > "$D/$f"
  done
  touch -d '2020-01-01 00:00:00' "$D"/*
  local before
  before=$(cd "$D" && ls -l --time-style=+%s && cat ./*)
  run bi "SELECT rows_written FROM bench_insert WHERE journal IN ('wal','delete','persist') AND rows=10 AND $W AND dir='$D';"
  assert_success
  assert_output "10
10
10"
  [ "$(cd "$D" && ls -l --time-style=+%s && cat ./*)" = "$before" ]
}

# Each parameter's invalid value: the exact error text.
check_error() {  # WHERE-clause expected-message
  run bi "SELECT rows_written FROM bench_insert WHERE $1 AND rows=5 AND dir='$D';"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: $2"
  assert_dir_empty "$D"
}

@test "an invalid id, journal, synchronous, begin, prepare, locking or storage names the allowed values" {
  check_error "id='uuid5'" "id must be one of integer, shortid, uuid4_text, uuid4_blob, uuid7_text, uuid7_blob, uuid8_text, uuid8_blob (got 'uuid5')"
  check_error "journal='WAL'" "journal must be one of wal, delete, truncate, persist, memory, off (got 'WAL')"
  check_error "synchronous=1" "synchronous must be one of off, normal, full, extra (got 1)"
  check_error "begin='exclusive'" "begin must be one of deferred, immediate (got 'exclusive')"
  check_error "prepare IN ('once','twice')" "prepare must be one of once, each, exec (got 'twice')"
  check_error "locking=NULL" "locking must be one of normal, exclusive (got NULL)"
  check_error "storage='disk'" "storage must be one of file, memory (got 'disk')"
  assert_dir_empty "$D"
}

@test "an invalid number names the parameter and its range" {
  check_error "threads=0" "threads must be an integer in 1..64 (got 0)"
  check_error "threads=65" "threads must be an integer in 1..64 (got 65)"
  check_error "threads='2'" "threads must be an integer in 1..64 (got '2')"
  check_error "mutex=2" "mutex must be 0 or 1 (got 2)"
  check_error "batch=0" "batch must be an integer in 1..1000000 (got 0)"
  check_error "batch=1.5" "batch must be an integer in 1..1000000 (got 1.5)"
  check_error "page_size=1000" "page_size must be a power of two in 512..65536, or NULL for the library default (got 1000)"
  check_error "cache_size='big'" "cache_size must be an integer in -1000000000..1000000000, or NULL for the library default (got 'big')"
  check_error "mmap_size=-1" "mmap_size must be an integer in 0..1099511627776, or NULL for the library default (got -1)"
  check_error "readers=65" "readers must be an integer in 0..64 (got 65)"
  check_error "seconds=0" "seconds must be a number greater than 0 and at most 86400 (got 0)"
  check_error "seconds='x'" "seconds must be a number greater than 0 and at most 86400 (got 'x')"
  check_error "content=-1" "content must be an integer in 0..1000000 (got -1)"
  check_error "busy_timeout=3600001" "busy_timeout must be an integer in 0..3600000 (got 3600001)"
  check_error "threads IN (1, 2, 99)" "threads must be an integer in 1..64 (got 99)"
  assert_dir_empty "$D"
}

@test "a long IN list is refused as soon as it passes the combination limit" {
  local t0 t1 limit=5
  [ -z "${ACORN_VALGRIND:-}" ] || limit=60
  t0=$(date +%s%N)
  run bi "SELECT * FROM bench_insert
 WHERE cache_size IN (SELECT value FROM generate_series(1, 200000)) AND rows=5 AND dir='$D';"
  t1=$(date +%s%N)
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: more than 10000 combinations of parameters"
  # reading all 200,000 values with a sorted insert each took ~20 s here
  [ $(( (t1 - t0) / 1000000000 )) -lt "$limit" ]
  run bi "SELECT * FROM bench_insert
 WHERE threads IN (1, 2) AND cache_size IN (SELECT value FROM generate_series(1, 5001)) AND rows=5 AND dir='$D';"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: more than 10000 combinations of parameters"
  # 10,000 exactly is allowed (LIMIT 1: only the first runs)
  run bi "SELECT threads, cache_size, rows_written FROM bench_insert
 WHERE threads IN (1, 2) AND cache_size IN (SELECT value FROM generate_series(1, 5000))
   AND rows=1 AND storage='memory' AND dir='$D' LIMIT 1;"
  assert_success
  assert_output "1|1|1"
  assert_dir_empty "$D"
}

@test "rows must be in range" {
  run bi "SELECT * FROM bench_insert WHERE rows=0;"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: rows must be an integer in 1..10000000 (got 0)"
}

@test "a dir that does not exist, is a file or cannot be written is an error" {
  run bi "SELECT * FROM bench_insert WHERE rows=5 AND dir='$D/nope';"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: dir must be an existing writable directory (got '$D/nope': No such file or directory)"
  touch "$D/file"
  run bi "SELECT * FROM bench_insert WHERE rows=5 AND dir='$D/file';"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: dir must be an existing writable directory (got '$D/file': not a directory)"
  run bi "SELECT * FROM bench_insert WHERE rows=5 AND dir=3;"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: dir must be an existing writable directory (got 3)"
  # /proc is a directory even root cannot create files in
  run bi "SELECT * FROM bench_insert WHERE rows=5 AND dir='/proc';"
  assert_failure
  [[ "$output" == "$(runtime_error 2) bench_insert: cannot create a scratch file /proc/acorn-fsync-"*".tmp: "* ]]
}

@test "a constraint other than = or IN on a parameter is an error that says so" {
  run bi "SELECT * FROM bench_insert WHERE threads > 1;"
  assert_failure
  assert_output "Parse error near line 2: bench_insert: parameter threads takes only = or IN constraints"
  run bi "SELECT * FROM bench_insert WHERE id LIKE 'uuid%';"
  assert_failure
  assert_output "Parse error near line 2: bench_insert: parameter id takes only = or IN constraints"
}

@test "page_size, cache_size and mmap_size take IS NULL as = NULL; other parameters refuse it" {
  run bi "SELECT quote(page_size), quote(cache_size), quote(mmap_size), rows_written FROM bench_insert
 WHERE page_size IS NULL AND cache_size IS NULL AND mmap_size IS NULL AND rows=5 AND $W AND dir='$D';
SELECT quote(page_size), rows_written FROM bench_insert
 WHERE page_size = NULL AND rows=5 AND $W AND dir='$D';"
  assert_success
  assert_output "NULL|NULL|NULL|5
NULL|5"
  run bi "SELECT * FROM bench_insert WHERE threads IS NULL AND rows=5 AND dir='$D';"
  assert_failure
  assert_output "Parse error near line 2: bench_insert: parameter threads takes only = or IN constraints"
  run bi "SELECT * FROM bench_insert WHERE page_size IS NOT NULL AND rows=5 AND dir='$D';"
  assert_failure
  assert_output "Parse error near line 2: bench_insert: parameter page_size takes only = or IN constraints"
  assert_dir_empty "$D"
}

@test "a constraint on a result column filters rows without error" {
  run bi "SELECT threads FROM bench_insert WHERE threads IN (1, 2) AND rows_written = 7 AND rows=7 AND $W AND dir='$D';"
  assert_success
  assert_output "1
2"
  assert_dir_empty "$D"
}

@test "locking=exclusive with more than one connection is refused before any run" {
  run bi "SELECT * FROM bench_insert WHERE locking='exclusive' AND threads IN (1, 2) AND rows=5 AND dir='$D';"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: locking=exclusive lets one connection in: it needs threads=1 and readers=0"
  assert_dir_empty "$D"
}

@test "use from a view or a trigger is refused (SQLITE_VTAB_DIRECTONLY)" {
  run bi "CREATE VIEW v AS SELECT rows_written FROM bench_insert WHERE rows=5 AND dir='$D';
SELECT * FROM v;"
  assert_failure
  assert_output_contains 'unsafe use of virtual table "bench_insert"'
  run bi "CREATE TABLE t(x);
CREATE TRIGGER tr AFTER INSERT ON t BEGIN
  SELECT rows_written FROM bench_insert WHERE rows=5 AND dir='$D';
END;
INSERT INTO t VALUES (1);"
  assert_failure
  assert_output_contains 'unsafe use of virtual table "bench_insert"'
  assert_dir_empty "$D"
}

# explain_script NAME: sql/NAME.sql with every SELECT only prepared (EXPLAIN),
# so no benchmark runs, and acorn loaded from this build.
explain_script() {
  sed -e 's/^SELECT/EXPLAIN SELECT/' -e "s|^\\.load .*|.load $ACORN|" "$ROOT/sql/$1.sql" \
    | wrap "$SQLITE3" -batch -bail :memory: >/dev/null
}

@test "the SQL scripts in sql/ are valid and name only real columns" {
  local f
  for f in writers ids journals batching readers; do
    run explain_script "$f"
    assert_success
  done
}

@test "a relative dir named like a URI ('file:x.db#') makes its files there and leaves x.db beside it untouched" {
  cd "$D"
  plain_sql "CREATE TABLE keep(x); INSERT INTO keep VALUES (1);" victim.db
  mkdir 'file:victim.db#'
  local before
  before=$(cksum victim.db; ls -A)
  run bi "SELECT rows_written, db_bytes > 0, dir FROM bench_insert
 WHERE dir='file:victim.db#' AND journal IN ('wal','delete') AND rows=5 AND $W;"
  assert_success
  assert_output "5|1|file:victim.db#
5|1|file:victim.db#"
  [ "$(cksum victim.db; ls -A)" = "$before" ]
  run plain_sql "SELECT group_concat(name) FROM sqlite_schema; PRAGMA journal_mode;" victim.db
  assert_output "keep
delete"
  assert_dir_empty 'file:victim.db#'
}

@test "a dir reached through a symlink works, given as dir or as TMPDIR" {
  mkdir "$D/real"
  ln -s "$D/real" "$D/link"
  ln -s link "$D/link2"
  run bi "SELECT rows_written, dir FROM bench_insert WHERE dir IN ('$D/link', '$D/link2') AND rows=5 AND $W;"
  assert_success
  assert_output "5|$D/link
5|$D/link2"
  assert_dir_empty "$D/real"
  TMPDIR="$D/link" run bi "SELECT rows_written, dir FROM bench_insert WHERE rows=5 AND $W;"
  assert_success
  assert_output "5|$D/link"
  assert_dir_empty "$D/real"
}

@test "a dir too long for SQLite's 512-byte paths is refused up front, one byte shorter works" {
  # the scratch database's path is realpath(dir) + 32 bytes; SQLite opens a
  # database whose path plus "-journal" fits in 512 bytes: at most 504
  local base n ok
  base=$(realpath "$D")
  n=$(( 472 - ${#base} - 1 ))      # realpath(ok) is 472 bytes: 472 + 32 = 504
  ok="$base/$(head -c $((n - 201)) /dev/zero | tr '\0' o)"
  ok="$base/$(head -c 200 /dev/zero | tr '\0' p)/${ok#$base/}"
  mkdir -p "$ok" "${ok}x"
  [ "$(realpath "$ok" | wc -c)" -eq 473 ]   # 472 and the newline
  run bi "SELECT rows_written FROM bench_insert WHERE dir='$ok' AND rows=5 AND $W;"
  assert_success
  assert_output "5"
  run bi "SELECT rows_written FROM bench_insert WHERE dir='${ok}x' AND rows=5 AND $W;"
  assert_failure
  assert_output "$(runtime_error 2) bench_insert: dir must be an existing writable directory (got '${ok}x': the path of a scratch database there would be 505 bytes, more than SQLite's limit of 504)"
  assert_dir_empty "$ok"
  assert_dir_empty "${ok}x"
}

@test "a host that exits mid-run (the shell's third Ctrl-C) leaves no scratch file" {
  local threads pid status i
  for threads in 1 3; do
    start_sql "SELECT rows_written FROM bench_insert WHERE rows=10000000 AND seconds=120
                 AND threads=$threads AND $W AND dir='$D';"
    pid=$!
    wait_for_file "$D/acorn-bench-*.db-wal"
    sleep 0.3
    # the shell interrupts the statement on the first two, calls exit(1) on
    # the third.  With SQLite 3.41 or later the first already stops the run
    # (the test below) and -bail ends the shell, so a later signal may find
    # no process.
    kill -INT "$pid"; sleep 0.2
    kill -INT "$pid" 2>/dev/null || true; sleep 0.2
    kill -INT "$pid" 2>/dev/null || true
    for ((i = 0; i < 600; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    status=0
    wait "$pid" || status=$?
    [ "$status" -ne 0 ]
    assert_dir_empty "$D"
  done
}

@test "an interrupt of the calling connection (one Ctrl-C in the shell) stops the run and leaves no scratch file" {
  local threads pid status
  skip_unless_sqlite 3.41.0 "sqlite3_is_interrupted()"
  for threads in 1 3; do
    # seconds=60 bounds the run if the interrupt went unnoticed; the error
    # text shows it did not
    start_sql "SELECT rows_written FROM bench_insert WHERE rows=10000000 AND seconds=60
                 AND threads=$threads AND $W AND dir='$D';"
    pid=$!
    wait_for_file "$D/acorn-bench-*.db-wal"
    sleep 0.3
    kill -INT "$pid"
    status=0
    wait "$pid" || status=$?
    [ "$status" -ne 0 ] || fail "threads=$threads: the shell exited 0: $(cat "$BATS_TEST_TMPDIR/out")"
    run cat "$BATS_TEST_TMPDIR/out"
    assert_output_contains "$(runtime_error 2) bench_insert: interrupted (id=integer "
    assert_output_contains " threads=$threads "
    assert_dir_empty "$D"
  done
}

# (tests/long/bench_insert.bats runs it for 8 s: more room on a loaded machine)
@test "busy counts the busy handler's calls: a writer kept waiting by another connection's write lock" {
  check_busy 3
}
