package acorn

// The writer experiments from Go: bench_insert with typed parameters and
// results (docs/bench_insert.md has the meaning of each).

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// BenchParams chooses the runs of bench_insert.  Each slice field left nil
// takes bench_insert's default; a slice of several values runs one
// configuration per value, crossed with the other slices (bench_insert's
// `IN (...)`).  Each scalar field left zero takes the default too.
type BenchParams struct {
	ID          []string // integer, shortid, uuid4_text, uuid4_blob, uuid7_text, uuid7_blob, uuid8_text, uuid8_blob
	Journal     []string // wal, delete, truncate, persist, memory, off
	Synchronous []string // off, normal, full, extra
	Threads     []int    // writer threads, 1..64
	Mutex       []bool   // an application mutex around each transaction
	Batch       []int    // rows per transaction; 1 is autocommit
	Begin       []string // deferred, immediate
	Prepare     []string // once, each, exec
	Locking     []string // normal, exclusive
	Readers     []int    // reader threads, 0..64
	Content     []int    // bytes of content per row

	Rows        int     // rows per run (default 10000)
	Seconds     float64 // upper bound on one run's timed part (default 60)
	BusyTimeout int     // milliseconds (default 1000)
	Storage     string  // file (default) or memory
	Dir         string  // directory of the scratch database (default: the temporary directory)
	PageSize    int
	Schema      string // your tables: see docs/bench_insert.md
	Statement   string // your INSERT, with ?1 the row number, ?2 the id, ?3 the content
	Template    string // a database file to copy as the start of each run
}

// BenchResult is one row of bench_insert: the configuration, then what it
// measured.  A measure is -1 where bench_insert gives NULL: FsyncUs for
// storage memory, the four WAL columns without a -wal file, the rates and
// latencies of a run that wrote no row, ContentMBPerSec for a statement
// without ?3.
type BenchResult struct {
	ID, Journal, Synchronous string
	Threads                  int
	Mutex                    bool
	Batch                    int
	Begin, Prepare, Locking  string
	Readers, Content, Rows   int

	RowsWritten         int64
	Elapsed             float64 // seconds of the timed part
	WritesPerSec        int64
	NsPerWrite          int64
	P50Us, P99Us, MaxUs float64
	ReadsPerSec         int64
	Busy                int64 // busy-handler calls
	DBBytes             int64
	SQLiteVersion       string
	FsyncUs             float64
	BusyErrors          int64 // transactions refused with SQLITE_BUSY and run again
	WALBytesMax         int64
	WALBytesEnd         int64
	Checkpoints         int64
	CheckpointsBlocked  int64
	ContentMBPerSec     float64
}

const benchColumns = "id, journal, synchronous, threads, mutex, batch, begin, prepare, locking, readers, content, rows, " +
	"rows_written, elapsed, writes_per_sec, ns_per_write, p50_us, p99_us, max_us, reads_per_sec, busy, db_bytes, " +
	"sqlite_version, fsync_us, busy_errors, wal_bytes_max, wal_bytes_end, checkpoints, checkpoints_blocked, content_mb_per_sec"

// BenchQuery is the SQL and arguments BenchInsert runs for p.
func BenchQuery(p BenchParams) (string, []any) {
	var where []string
	var args []any
	in := func(col string, n int, at func(i int) any) {
		if n == 0 {
			return
		}
		where = append(where, col+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", n), ", ")+")")
		for i := 0; i < n; i++ {
			args = append(args, at(i))
		}
	}
	strs := func(col string, v []string) { in(col, len(v), func(i int) any { return v[i] }) }
	ints := func(col string, v []int) { in(col, len(v), func(i int) any { return v[i] }) }
	strs("id", p.ID)
	strs("journal", p.Journal)
	strs("synchronous", p.Synchronous)
	ints("threads", p.Threads)
	in("mutex", len(p.Mutex), func(i int) any {
		if p.Mutex[i] {
			return 1
		}
		return 0
	})
	ints("batch", p.Batch)
	strs("begin", p.Begin)
	strs("prepare", p.Prepare)
	strs("locking", p.Locking)
	ints("readers", p.Readers)
	ints("content", p.Content)
	eq := func(col string, set bool, v any) {
		if set {
			where = append(where, col+" = ?")
			args = append(args, v)
		}
	}
	eq("rows", p.Rows != 0, p.Rows)
	eq("seconds", p.Seconds != 0, p.Seconds)
	eq("busy_timeout", p.BusyTimeout != 0, p.BusyTimeout)
	eq("storage", p.Storage != "", p.Storage)
	eq("dir", p.Dir != "", p.Dir)
	eq("page_size", p.PageSize != 0, p.PageSize)
	eq("schema", p.Schema != "", p.Schema)
	eq("statement", p.Statement != "", p.Statement)
	eq("template", p.Template != "", p.Template)
	q := "SELECT " + benchColumns + " FROM bench_insert"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q, args
}

// BenchInsert runs bench_insert with p on db (any connection pool with acorn
// loaded; nil: a private in-memory one) and returns a result per
// configuration, in bench_insert's order.  Cancelling ctx stops between
// runs; a run in progress ends by its Seconds.
func BenchInsert(ctx context.Context, db *sql.DB, p BenchParams) ([]BenchResult, error) {
	if db == nil {
		var err error
		if db, err = sql.Open(DriverName, ":memory:"); err != nil {
			return nil, err
		}
		defer db.Close()
	}
	q, args := BenchQuery(p)
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("acorn: BenchInsert: %w", err)
	}
	defer rows.Close()
	var out []BenchResult
	for rows.Next() {
		var r BenchResult
		var mutex int
		var p50, p99, pmax, fsync, mbps sql.NullFloat64
		var wps, nspw, rps, walMax, walEnd, ckpt, ckptBlocked sql.NullInt64
		err := rows.Scan(&r.ID, &r.Journal, &r.Synchronous, &r.Threads, &mutex, &r.Batch, &r.Begin, &r.Prepare,
			&r.Locking, &r.Readers, &r.Content, &r.Rows,
			&r.RowsWritten, &r.Elapsed, &wps, &nspw, &p50, &p99, &pmax,
			&rps, &r.Busy, &r.DBBytes, &r.SQLiteVersion, &fsync, &r.BusyErrors, &walMax,
			&walEnd, &ckpt, &ckptBlocked, &mbps)
		if err != nil {
			return out, fmt.Errorf("acorn: BenchInsert: %w", err)
		}
		r.Mutex = mutex != 0
		for _, f := range []struct {
			v  sql.NullFloat64
			to *float64
		}{{p50, &r.P50Us}, {p99, &r.P99Us}, {pmax, &r.MaxUs}, {fsync, &r.FsyncUs}, {mbps, &r.ContentMBPerSec}} {
			*f.to = -1
			if f.v.Valid {
				*f.to = f.v.Float64
			}
		}
		for _, n := range []struct {
			v  sql.NullInt64
			to *int64
		}{{wps, &r.WritesPerSec}, {nspw, &r.NsPerWrite}, {rps, &r.ReadsPerSec}, {walMax, &r.WALBytesMax},
			{walEnd, &r.WALBytesEnd}, {ckpt, &r.Checkpoints}, {ckptBlocked, &r.CheckpointsBlocked}} {
			*n.to = -1
			if n.v.Valid {
				*n.to = n.v.Int64
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("acorn: BenchInsert: %w", err)
	}
	return out, nil
}
