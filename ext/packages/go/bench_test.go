package acorn

// squirrel's workloads on the cache table, each beside a baseline in the
// same process (bench/go_squirrel.sh runs them in rounds and prints the
// medians and ratios; docs/performance.md, "Go: squirrel's workloads"):
//
//   BenchmarkPutSmallItem    squirrel's small put ("hello" = "world" again
//                            and again): Cache.Put against squirrel's design
//                            through database/sql (sql) and by hand on
//                            SQLite's blob API through cgo (raw)
//   BenchmarkTorrentStorage  2 MiB pieces written in 16 KiB blocks at their
//                            offsets, read back through a pinned blob,
//                            hashed and compared; 8 keys in turn
//   BenchmarkWriters         the Go writer experiment (posts inserted from
//                            1, 2, 4 goroutines, with and without a
//                            sync.Mutex) against BenchInsert doing the same
//                            inside SQLite
//
// ACORN_BENCH_ROUND=r (set by bench/go_squirrel.sh) rotates the order of
// the sides by r, so that the side going first changes between rounds.
// Every name here starts with bench: the package's other test file is
// written apart from this one.

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sqlite-acorn/acorn/internal/rawsqlite"
)

// benchRound is ACORN_BENCH_ROUND, 0 if unset.
func benchRound() int {
	r, _ := strconv.Atoi(os.Getenv("ACORN_BENCH_ROUND"))
	if r < 0 {
		r = 0
	}
	return r
}

// benchRotate is names rotated left by the round: the side going first
// changes from round to round.
func benchRotate(names []string) []string {
	k := benchRound() % len(names)
	return append(append([]string{}, names[k:]...), names[:k]...)
}

// benchStore is the calls the small puts and the pieces make, on each side.
type benchStore interface {
	put(key string, value []byte) error
	get(key string) ([]byte, error)
	writeAt(key string, length int64, b []byte, off int64) (int, error)
	// readPiece copies the whole value of key into w through a pinned blob:
	// one read transaction, io.ReaderAt, io.NewSectionReader.
	readPiece(key string, w io.Writer) error
	close() error
}

// benchConfig is one configuration of a side's database.
type benchConfig struct {
	memory      bool
	journal     string // "" in memory
	synchronous int
	autoVacuum  string
	capacity    int64 // 0: unbounded (acorn) or no trimming (squirrel's design)
}

type benchAcorn struct{ c *Cache }

func benchOpenAcorn(b *testing.B, cfg benchConfig) benchStore {
	o := NewCacheOpts{}
	o.PageSize = 4096
	o.SetSynchronous = cfg.synchronous
	o.SetJournalMode = cfg.journal
	o.SetAutoVacuum = cfg.autoVacuum
	o.Capacity = cfg.capacity
	if cfg.autoVacuum == "incremental" {
		o.RequireAutoVacuum = 2
	}
	if cfg.memory {
		o.Memory = true
	} else {
		o.Path = filepath.Join(b.TempDir(), "acorn.db")
	}
	c, err := NewCache(o)
	if err != nil {
		b.Fatal(err)
	}
	return benchAcorn{c}
}

func (s benchAcorn) put(key string, value []byte) error { return s.c.Put(key, value) }
func (s benchAcorn) get(key string) ([]byte, error)     { return s.c.ReadAll(key, nil) }
func (s benchAcorn) close() error                       { return s.c.Close() }

func (s benchAcorn) writeAt(key string, length int64, b []byte, off int64) (int, error) {
	return s.c.BlobWithLength(key, length).WriteAt(b, off)
}

func (s benchAcorn) readPiece(key string, w io.Writer) error {
	pb, err := s.c.OpenPinnedReadOnly(key)
	if err != nil {
		return err
	}
	n, err := pb.LengthErr()
	if err == nil {
		_, err = io.Copy(w, io.NewSectionReader(pb, 0, n))
	}
	return joinErr(err, pb.Close())
}

// benchSQL is squirrel's design through database/sql (mattn's driver, no
// acorn loaded): puts only.
type benchSQL struct {
	db *sql.DB
	s  *rawsqlite.SQLStore
}

func benchOpenSQL(b *testing.B, cfg benchConfig) benchStore {
	path := ":memory:"
	if !cfg.memory {
		path = filepath.Join(b.TempDir(), "sql.db")
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		b.Fatal(err)
	}
	s, err := rawsqlite.OpenSQL(db, benchRawOptions(cfg))
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	return benchSQL{db, s}
}

func (s benchSQL) put(key string, value []byte) error { return s.s.Put(key, value) }
func (s benchSQL) get(key string) ([]byte, error)     { return s.s.Get(key) }
func (s benchSQL) close() error                       { return joinErr(s.s.Close(), s.db.Close()) }

func (s benchSQL) writeAt(string, int64, []byte, int64) (int, error) {
	return 0, fmt.Errorf("squirrel's design through database/sql has no blob I/O")
}

func (s benchSQL) readPiece(string, io.Writer) error {
	return fmt.Errorf("squirrel's design through database/sql has no blob I/O")
}

// benchRaw is squirrel's design by hand on SQLite's blob API (cgo).
type benchRaw struct{ d *rawsqlite.DB }

func benchRawOptions(cfg benchConfig) rawsqlite.Options {
	return rawsqlite.Options{PageSize: 4096, AutoVacuum: cfg.autoVacuum, JournalMode: cfg.journal,
		Synchronous: cfg.synchronous, BusyTimeout: 5 * time.Second, Capacity: cfg.capacity}
}

func benchOpenRaw(b *testing.B, cfg benchConfig) benchStore {
	path := ":memory:"
	if !cfg.memory {
		path = filepath.Join(b.TempDir(), "raw.db")
	}
	d, err := rawsqlite.Open(path, benchRawOptions(cfg))
	if err != nil {
		b.Fatal(err)
	}
	if cfg.autoVacuum == "incremental" {
		if av, err := d.PragmaInt("auto_vacuum"); err != nil || av != 2 {
			d.Close()
			b.Fatalf("auto_vacuum is %d (%v), not 2 (incremental)", av, err)
		}
	}
	return benchRaw{d}
}

func (s benchRaw) put(key string, value []byte) error { return s.d.Put(key, value) }
func (s benchRaw) close() error                       { return s.d.Close() }

func (s benchRaw) get(key string) ([]byte, error) {
	b := make([]byte, 1<<16)
	n, err := s.d.ReadAt(key, b, 0)
	if err == io.EOF {
		err = nil
	}
	return b[:n], err
}

func (s benchRaw) writeAt(key string, length int64, b []byte, off int64) (int, error) {
	return s.d.WriteAt(key, length, b, off)
}

func (s benchRaw) readPiece(key string, w io.Writer) error {
	p, err := s.d.OpenPinnedReadOnly(key)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, io.NewSectionReader(p, 0, p.Length()))
	return joinErr(err, p.Close())
}

type benchSide struct {
	name string
	open func(*testing.B, benchConfig) benchStore
}

var benchPutSides = map[string]benchSide{
	"acorn": {"acorn", benchOpenAcorn},
	"sql":   {"sql", benchOpenSQL},
	"raw":   {"raw", benchOpenRaw},
}

// BenchmarkPutSmallItem is squirrel's small put: "hello" set to "world"
// again and again, each put a transaction of its own.  acorn: Cache.Put
// (one INSERT through database/sql); sql: squirrel's design through
// database/sql (BEGIN IMMEDIATE, the old key and blob deleted, a key and
// its blob inserted, COMMIT); raw: the same by hand with the value written
// by sqlite3_blob_write.  WAL and delete journals, synchronous off and
// normal, a file and memory; page_size 4096.
func BenchmarkPutSmallItem(b *testing.B) {
	type cfg struct {
		name string
		benchConfig
	}
	var cfgs []cfg
	for _, st := range []struct {
		name    string
		memory  bool
		journal string
	}{{"file-wal", false, "wal"}, {"file-delete", false, "delete"}, {"memory", true, ""}} {
		for _, syn := range []struct {
			name string
			v    int
		}{{"off", 0}, {"normal", 1}} {
			cfgs = append(cfgs, cfg{st.name + "-" + syn.name,
				benchConfig{memory: st.memory, journal: st.journal, synchronous: syn.v}})
		}
	}
	for _, c := range cfgs {
		c := c
		b.Run(c.name, func(b *testing.B) {
			for _, name := range benchRotate([]string{"acorn", "sql", "raw"}) {
				side := benchPutSides[name]
				b.Run(side.name, func(b *testing.B) { benchPuts(b, side, c.benchConfig) })
			}
		})
	}
}

func benchPuts(b *testing.B, side benchSide, cfg benchConfig) {
	s := side.open(b, cfg)
	key, value := "hello", []byte("world")
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := s.put(key, value); err != nil {
			b.Fatalf("put %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "puts/s")
	got, err := s.get(key)
	if err != nil || string(got) != string(value) {
		b.Fatalf("after the puts: %q, %v; want %q", got, err, value)
	}
	if err := s.close(); err != nil {
		b.Fatal(err)
	}
}

const (
	benchPieceSize = 2 << 20  // a piece: 2 MiB
	benchBlockSize = 16 << 10 // a block of it: 16 KiB
	benchKeys      = 8        // pieces written in turn
)

// BenchmarkTorrentStorage is squirrel's torrent storage: an operation is
// one piece of 2 MiB (the 8 keys in turn) written in 16 KiB blocks, each
// at its offset in a transaction of its own (acorn: BlobWithLength(key,
// 2 MiB).WriteAt; raw: squirrel's design by hand, sqlite3_blob_write),
// then read back through a pinned blob (OpenPinnedReadOnly,
// io.NewSectionReader), hashed and compared with what was written.  Every
// block carries the operation's number, so a block not written fails the
// comparison.  page_size 4096, auto_vacuum incremental (pointer-map
// pages, as squirrel's own benchmark sets), WAL, synchronous normal.
// unbounded: nothing is evicted (acorn: no capacity; raw: no trimming);
// evicting: a capacity of 9 MiB, which holds 4 of the 8 pieces, so every
// piece is made again (acorn counts its entries' bytes, squirrel the
// file's used pages: either holds 4).
func BenchmarkTorrentStorage(b *testing.B) {
	for _, c := range []struct {
		name     string
		capacity int64
	}{{"unbounded", 0}, {"evicting", 9 << 20}} {
		c := c
		cfg := benchConfig{journal: "wal", synchronous: 1, autoVacuum: "incremental", capacity: c.capacity}
		b.Run(c.name, func(b *testing.B) {
			for _, name := range benchRotate([]string{"acorn", "raw"}) {
				side := benchPutSides[name]
				b.Run(side.name, func(b *testing.B) { benchPieces(b, side, cfg) })
			}
		})
	}
}

var benchCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// benchPieceData is the random contents the pieces start from, made once.
var benchPieceData = func() []byte {
	p := make([]byte, benchPieceSize)
	rand.New(rand.NewSource(1)).Read(p)
	return p
}()

func benchPieces(b *testing.B, side benchSide, cfg benchConfig) {
	s := side.open(b, cfg)
	piece := append([]byte{}, benchPieceData...)
	var keys [benchKeys]string
	for k := range keys {
		keys[k] = fmt.Sprintf("piece-%02d", k)
	}
	var writing, reading time.Duration
	b.SetBytes(benchPieceSize)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		key := keys[i%benchKeys]
		for off := 0; off < benchPieceSize; off += benchBlockSize {
			binary.LittleEndian.PutUint64(piece[off:], uint64(i)<<32|uint64(off))
		}
		want := crc32.Checksum(piece, benchCastagnoli)
		t0 := time.Now()
		for off := 0; off < benchPieceSize; off += benchBlockSize {
			n, err := s.writeAt(key, benchPieceSize, piece[off:off+benchBlockSize], int64(off))
			if err != nil || n != benchBlockSize {
				b.Fatalf("piece %d, %s at %d: wrote %d, %v", i, key, off, n, err)
			}
		}
		t1 := time.Now()
		h := crc32.New(benchCastagnoli)
		if err := s.readPiece(key, h); err != nil {
			b.Fatalf("piece %d, %s: read: %v", i, key, err)
		}
		reading += time.Since(t1)
		writing += t1.Sub(t0)
		if got := h.Sum32(); got != want {
			b.Fatalf("piece %d, %s: read back with CRC-32C %08x, written %08x", i, key, got, want)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	mb := float64(b.N) * benchPieceSize / 1e6
	b.ReportMetric(float64(b.N*benchPieceSize/benchBlockSize)/elapsed.Seconds(), "chunks/s")
	b.ReportMetric(mb/writing.Seconds(), "write-MB/s")
	b.ReportMetric(mb/reading.Seconds(), "read-MB/s")
	if err := s.close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriters is the Go writer experiment of docs/bench_insert.md
// ("Where the experiments come from"): blog posts inserted into
// posts(id, title, content, created) through database/sql (mattn's driver)
// by 1, 2 and 4 goroutines sharing one pool of as many connections and one
// prepared INSERT, each insert autocommit, with and without a sync.Mutex
// held around it; WAL, synchronous normal, busy_timeout 10000,
// foreign_keys on.  Then, in the same benchmark, BenchInsert does the same
// inside SQLite (as many threads, each with its own connection, the same
// mutex, rows, table and pragmas): go/bench_insert is the share of
// SQLite's own insert rate that a Go program gets through the driver.
// ns/op is the Go side's.
func BenchmarkWriters(b *testing.B) {
	for _, threads := range []int{1, 2, 4} {
		for _, mutex := range []bool{false, true} {
			threads, mutex := threads, mutex
			name := fmt.Sprintf("threads-%d-nomutex", threads)
			if mutex {
				name = fmt.Sprintf("threads-%d-mutex", threads)
			}
			b.Run(name, func(b *testing.B) { benchWriters(b, threads, mutex) })
		}
	}
}

const benchBusyMs = 10000

func benchWriters(b *testing.B, threads int, mutex bool) {
	b.StopTimer()
	dir := b.TempDir()
	var goRate, biRate float64
	sides := map[string]func(){
		"go": func() { goRate = benchGoWriters(b, dir, threads, mutex) },
		"bench_insert": func() {
			res, err := BenchInsert(context.Background(), nil, BenchParams{
				Threads: []int{threads}, Mutex: []bool{mutex}, Journal: []string{"wal"},
				Synchronous: []string{"normal"}, ID: []string{"integer"}, Batch: []int{1},
				Rows: b.N, BusyTimeout: benchBusyMs, Dir: dir,
			})
			if err != nil || len(res) != 1 {
				b.Fatalf("BenchInsert: %d rows, %v", len(res), err)
			}
			if res[0].RowsWritten != int64(b.N) {
				b.Fatalf("BenchInsert wrote %d rows of %d", res[0].RowsWritten, b.N)
			}
			biRate = float64(res[0].RowsWritten) / res[0].Elapsed
		},
	}
	for _, name := range benchRotate([]string{"go", "bench_insert"}) {
		sides[name]()
	}
	b.ReportMetric(goRate, "go-writes/s")
	b.ReportMetric(biRate, "bench_insert-writes/s")
	b.ReportMetric(goRate/biRate, "go/bench_insert")
}

// benchGoWriters inserts b.N posts from threads goroutines and returns the
// rows a second; only the inserts are timed (b's timer included).
func benchGoWriters(b *testing.B, dir string, threads int, mutex bool) float64 {
	path := filepath.Join(dir, fmt.Sprintf("posts-%d.db", time.Now().UnixNano()))
	dsn := fmt.Sprintf("file:%s?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=%d&_foreign_keys=1", path, benchBusyMs)
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		db.Close()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(path + suffix)
		}
	}()
	// As many connections as goroutines, all kept: database/sql keeps only
	// 2 idle by default and would close and open the others.
	db.SetMaxOpenConns(threads)
	db.SetMaxIdleConns(threads)
	_, err = db.Exec(`CREATE TABLE posts(id INTEGER PRIMARY KEY, title TEXT NOT NULL, content TEXT NOT NULL,
		created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ'))) STRICT`)
	if err != nil {
		b.Fatal(err)
	}
	// Open every connection before the clock, as bench_insert does, and
	// check that the DSN's pragmas took.
	conns := make([]*sql.Conn, threads)
	for i := range conns {
		if conns[i], err = db.Conn(context.Background()); err != nil {
			b.Fatal(err)
		}
		var mode string
		var sync int
		ctx := context.Background()
		if err := conns[i].QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			b.Fatalf("journal_mode %q, %v; want wal", mode, err)
		}
		if err := conns[i].QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil || sync != 1 {
			b.Fatalf("synchronous %d, %v; want 1 (normal)", sync, err)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	ins, err := db.Prepare("INSERT INTO posts(title, content) VALUES (?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	defer ins.Close()
	var (
		next    atomic.Int64
		mu      sync.Mutex
		wg      sync.WaitGroup
		failOne sync.Once
		failed  error
	)
	n := int64(b.N)
	b.StartTimer()
	start := time.Now()
	for g := 0; g < threads; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= n {
				if mutex {
					mu.Lock()
				}
				_, err := ins.Exec("Some title", "Some content")
				if mutex {
					mu.Unlock()
				}
				if err != nil {
					failOne.Do(func() { failed = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed != nil {
		b.Fatalf("insert: %v", failed)
	}
	var rows int64
	if err := db.QueryRow("SELECT count(*) FROM posts").Scan(&rows); err != nil || rows != n {
		b.Fatalf("%d posts, %v; want %d", rows, err, n)
	}
	return float64(n) / elapsed.Seconds()
}
