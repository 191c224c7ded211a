package acorn

// Tests of every exported call, on one process.  The tests of several
// processes are in multi_test.go.  Every name of this file that is not a
// test starts with t, so that it cannot clash with another test file's.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// tFile is a new database path in the test's temporary directory.
func tFile(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "cache.db")
}

// tOpen opens a Cache on opts (a new file if neither Path nor Memory is
// set) and closes it when the test ends.
func tOpen(t *testing.T, opts NewCacheOpts) *Cache {
	t.Helper()
	if opts.Path == "" && !opts.Memory {
		opts.Path = tFile(t)
	}
	c, err := NewCache(opts)
	if err != nil {
		t.Fatalf("NewCache(%+v): %v", opts, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// tPathOpts are NewCacheOpts for the file path.
func tPathOpts(path string) NewCacheOpts {
	return NewCacheOpts{NewConnOpts: NewConnOpts{Path: path}}
}

func tNoErr(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// tErrHas fails unless err is not nil and its message holds every part.
func tErrHas(t *testing.T, err error, what string, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error; expected one with %q", what, parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("%s: error %q does not say %q", what, err, p)
		}
	}
}

// tKey is a key as a BitTorrent client makes one: a 20-byte info hash (any
// bytes, NUL and 0xFF included) and a piece's big-endian offset.
func tKey(hash [20]byte, offset uint32) string {
	var b [24]byte
	copy(b[:], hash[:])
	binary.BigEndian.PutUint32(b[20:], offset)
	return string(b[:])
}

// tHashes are info hashes: random ones, and ones of NUL, 0xFF, and a NUL
// first byte, which a C string would cut.
func tHashes(from int64, n int) [][20]byte {
	r := rand.New(rand.NewSource(from))
	var out [][20]byte
	var zero, ff, lead [20]byte
	for i := range ff {
		ff[i] = 0xFF
	}
	r.Read(lead[1:])
	out = append(out, zero, ff, lead)
	for len(out) < n {
		var h [20]byte
		r.Read(h[:])
		out = append(out, h)
	}
	return out
}

// tValue is a value of n bytes that depends on name, so a value read under
// another key, or torn, shows.
func tValue(name string, n int) []byte {
	b := make([]byte, n)
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	for i := range b {
		h = h*1103515245 + 12345
		b[i] = byte(h >> 16)
	}
	return b
}

func tReadAll(t *testing.T, c *Cache, name string) []byte {
	t.Helper()
	b, err := c.ReadAll(name, nil)
	tNoErr(t, err, fmt.Sprintf("ReadAll %q", name))
	return b
}

func tWantValue(t *testing.T, c *Cache, name string, want []byte) {
	t.Helper()
	if got := tReadAll(t, c, name); !bytes.Equal(got, want) {
		t.Fatalf("ReadAll %q: %d bytes %.16x..., want %d bytes %.16x...", name, len(got), got, len(want), want)
	}
}

func tNotFound(t *testing.T, err error, what string) {
	t.Helper()
	if err != ErrNotFound {
		t.Fatalf("%s: %v, want ErrNotFound", what, err)
	}
}

// tQueryInt runs a query of one integer on c's pool.
func tQueryInt(t *testing.T, c *Cache, q string, args ...any) int64 {
	t.Helper()
	var n int64
	tNoErr(t, c.DB().QueryRow(q, args...).Scan(&n), q)
	return n
}

// tExpiresIn is expires - created of name's entry, in milliseconds (-1 if
// it has no expiry); a listing, not a use.
func tExpiresIn(t *testing.T, c *Cache, name string) int64 {
	t.Helper()
	return tQueryInt(t, c, `SELECT coalesce(expires - created, -1) FROM `+quoteIdent(c.table)+` WHERE key = ?`, name)
}

func tStats(t *testing.T, c *Cache) Stats {
	t.Helper()
	s, err := c.Stats()
	tNoErr(t, err, "Stats")
	return s
}

// tIntegrity runs the table's integrity_check command (the form of
// docs/cache.md, and the form with a NULL value) and PRAGMA integrity_check.
func tIntegrity(t *testing.T, c *Cache) {
	t.Helper()
	tbl := quoteIdent(c.table)
	for _, q := range []string{
		`INSERT INTO ` + tbl + `(` + tbl + `) VALUES ('integrity_check')`,
		`INSERT INTO ` + tbl + `(` + tbl + `, value) VALUES ('integrity_check', NULL)`,
	} {
		_, err := c.DB().Exec(q)
		tNoErr(t, err, q)
	}
	var res string
	tNoErr(t, c.DB().QueryRow(`PRAGMA integrity_check`).Scan(&res), "PRAGMA integrity_check")
	if res != "ok" {
		t.Fatalf("PRAGMA integrity_check: %q", res)
	}
}

// tExtension is the acorn.so the tests load.
func tExtension(t *testing.T) string {
	t.Helper()
	p, err := FindExtension()
	tNoErr(t, err, "FindExtension")
	return p
}

var tDriverSeq atomic.Int64

// tDriverName is a driver name no other test (or run of -count) has taken.
func tDriverName() string {
	return fmt.Sprintf("acorn_test_%d_%d", os.Getpid(), tDriverSeq.Add(1))
}

func TestDriverName(t *testing.T) {
	db, err := sql.Open(DriverName, ":memory:")
	tNoErr(t, err, "sql.Open")
	defer db.Close()
	var id string
	tNoErr(t, db.QueryRow(`SELECT uuid7()`).Scan(&id), "SELECT uuid7()")
	if len(id) != 36 || id[14] != '7' || strings.Count(id, "-") != 4 {
		t.Fatalf("uuid7() = %q, want a version 7 UUID in text", id)
	}
	// The module is there too: a cache table in a plain connection.
	_, err = db.Exec(`CREATE VIRTUAL TABLE c USING cache(capacity = 100)`)
	tNoErr(t, err, "CREATE VIRTUAL TABLE")
}

func TestRegister(t *testing.T) {
	ext := tExtension(t)
	name := tDriverName()
	tNoErr(t, Register(name, ext), "Register")
	err := Register(name, ext)
	tErrHas(t, err, "Register of a name taken", "acorn: Register", name)
	if err := Register(DriverName, ""); err == nil {
		t.Fatalf("Register(%q): no error for the package's own name", DriverName)
	}
	db, err := sql.Open(name, ":memory:")
	tNoErr(t, err, "sql.Open")
	defer db.Close()
	var n int
	tNoErr(t, db.QueryRow(`SELECT length(uuid7())`).Scan(&n), "uuid7 on the registered driver")
	if n != 36 {
		t.Fatalf("length(uuid7()) = %d", n)
	}
	// A driver of a file that is not acorn.so fails to open a connection,
	// saying so.
	bad := tDriverName()
	tNoErr(t, Register(bad, filepath.Join(t.TempDir(), "none.so")), "Register of a missing file")
	db2, err := sql.Open(bad, ":memory:")
	tNoErr(t, err, "sql.Open")
	defer db2.Close()
	tErrHas(t, db2.Ping(), "Ping with a missing extension", "none.so")
}

func TestDriverConnectHook(t *testing.T) {
	name := tDriverName()
	var calls atomic.Int64
	var hookErr error
	sql.Register(name, &Driver{ConnectHook: func(conn *sqlite3.SQLiteConn) error {
		calls.Add(1)
		// acorn is loaded before the hook runs.
		rows, err := conn.Query(`SELECT uuid4()`, nil)
		if err != nil {
			hookErr = err
			return err
		}
		return rows.Close()
	}})
	db, err := sql.Open(name, ":memory:")
	tNoErr(t, err, "sql.Open")
	defer db.Close()
	tNoErr(t, db.Ping(), "Ping")
	tNoErr(t, hookErr, "the hook's query")
	if calls.Load() != 1 {
		t.Fatalf("ConnectHook ran %d times for one connection", calls.Load())
	}
}

func TestFindExtension(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "acorn.so")
	tNoErr(t, os.WriteFile(real, []byte("not really"), 0o644), "WriteFile")
	missing := filepath.Join(dir, "gone", "acorn.so")
	other := filepath.Join(dir, "other.so")

	// The environment variable, when set, is the only place looked at.
	got, err := findExtension(real, []string{missing})
	if err != nil || got != real {
		t.Fatalf("findExtension(env=file) = %q, %v", got, err)
	}
	_, err = findExtension(missing, []string{real})
	tErrHas(t, err, "env set to a missing file", ExtensionEnv, missing, "not a file")
	_, err = findExtension(dir, nil)
	tErrHas(t, err, "env set to a directory", ExtensionEnv, dir)

	// Unset: the first place that is a file, cleaned.
	got, err = findExtension("", []string{missing, dir, filepath.Join(dir, ".", "acorn.so")})
	if err != nil || got != real {
		t.Fatalf("findExtension(places) = %q, %v; want %q", got, err, real)
	}
	// Nothing anywhere: the error names every place, and the variable.
	_, err = findExtension("", []string{missing, other})
	tErrHas(t, err, "nothing found", missing, other, ExtensionEnv, "not found")

	// The places of this build hold the repository's dist/acorn.so, and
	// the Debian package's.
	places := extensionPlaces()
	joined := strings.Join(places, "\n")
	for _, want := range []string{string(filepath.Separator) + filepath.Join("dist", "acorn.so"), "/usr/lib/acorn.so", "/usr/local/lib/acorn.so"} {
		if !strings.Contains(joined, want) {
			t.Errorf("extensionPlaces() = %q: nothing ending in %q", places, want)
		}
	}
	p, err := FindExtension()
	if err != nil || !strings.HasSuffix(p, "acorn.so") {
		t.Fatalf("FindExtension() = %q, %v", p, err)
	}
}

func TestNewCacheTemporaryFile(t *testing.T) {
	c, err := NewCache(NewCacheOpts{})
	tNoErr(t, err, "NewCache with no Path")
	tNoErr(t, c.Put("k", []byte("v")), "Put")
	var seq int
	var name, file string
	tNoErr(t, c.DB().QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &file), "PRAGMA database_list")
	if file == "" {
		t.Fatalf("Path \"\" gave no file")
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the temporary file: %v", err)
	}
	var mode string
	tNoErr(t, c.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode), "PRAGMA journal_mode")
	if mode != "wal" {
		t.Fatalf("journal_mode of a file by default is %q, want wal", mode)
	}
	tNoErr(t, c.Close(), "Close")
	if _, err := os.Stat(filepath.Dir(file)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after Close, the temporary directory %s: %v", filepath.Dir(file), err)
	}
	// Two such caches are two files.
	b1, err := NewCache(NewCacheOpts{})
	tNoErr(t, err, "NewCache")
	defer b1.Close()
	b2, err := NewCache(NewCacheOpts{})
	tNoErr(t, err, "NewCache")
	defer b2.Close()
	tNoErr(t, b1.Put("only-in-1", nil), "Put")
	tNotFound(t, b2.Delete("only-in-1"), "Delete in another temporary cache")
}

func TestNewCacheMemory(t *testing.T) {
	ignored := tFile(t)
	c := tOpen(t, NewCacheOpts{NewConnOpts: NewConnOpts{Memory: true, Path: ignored}})
	tNoErr(t, c.Put("a", []byte("1")), "Put")
	// A Tx holds one connection; a pool call inside it runs on another:
	// both see the same database.
	err := c.Tx(func(tx *Tx) error {
		got, err := tx.ReadAll("a", nil)
		if err != nil || string(got) != "1" {
			return fmt.Errorf("tx.ReadAll = %q, %v", got, err)
		}
		got, err = c.ReadAll("a", nil)
		if err != nil || string(got) != "1" {
			return fmt.Errorf("pool ReadAll inside the Tx = %q, %v", got, err)
		}
		if n := c.DB().Stats().OpenConnections; n < 2 {
			return fmt.Errorf("%d connections open; want the Tx's and the pool's", n)
		}
		return nil
	})
	tNoErr(t, err, "Tx")
	// Two goroutines, each with a connection of its own at once, see each
	// other's writes.
	conns := make([]*sql.Conn, 2)
	for i := range conns {
		k, err := c.DB().Conn(context.Background())
		tNoErr(t, err, "Conn")
		defer k.Close()
		conns[i] = k
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range conns {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = conns[i].ExecContext(context.Background(), `INSERT INTO cache(key, value) VALUES (?, ?)`, fmt.Sprint("g", i), []byte{byte(i)})
		}(i)
	}
	wg.Wait()
	tNoErr(t, errs[0], "goroutine 0")
	tNoErr(t, errs[1], "goroutine 1")
	for i := range conns {
		var n int
		tNoErr(t, conns[i].QueryRowContext(context.Background(), `SELECT count(*) FROM cache WHERE key IN ('g0', 'g1')`).Scan(&n), "count")
		if n != 2 {
			t.Fatalf("connection %d sees %d of the two goroutines' entries", i, n)
		}
	}
	// No file was made, and another Memory cache is another database.
	if _, err := os.Stat(ignored); err == nil {
		t.Fatalf("Memory made the file of Path")
	}
	d := tOpen(t, NewCacheOpts{NewConnOpts: NewConnOpts{Memory: true}})
	tNotFound(t, d.Delete("a"), "Delete in another Memory cache")
	// The memdb database has no WAL.
	if _, err := NewCache(NewCacheOpts{NewConnOpts: NewConnOpts{Memory: true}, InitConnOpts: InitConnOpts{SetJournalMode: "wal"}}); err == nil {
		t.Fatalf("Memory with SetJournalMode wal: no error")
	} else {
		tErrHas(t, err, "Memory with wal", "journal_mode")
	}
	tNoErr(t, c.Close(), "Close")
	// Gone with the Cache: a new one of the same process starts empty.
	e := tOpen(t, NewCacheOpts{NewConnOpts: NewConnOpts{Memory: true}})
	if s := tStats(t, e); s.Entries != 0 {
		t.Fatalf("a new Memory cache holds %d entries", s.Entries)
	}
}

func TestNewCacheTable(t *testing.T) {
	path := tFile(t)
	c := tOpen(t, tPathOpts(path))
	if c.table != "cache" {
		t.Fatalf("default Table %q", c.table)
	}
	capacity, ok := c.GetCapacity()
	if ok || capacity != 0 {
		t.Fatalf("GetCapacity of a table made with Capacity 0 = %d, %v; want unbounded", capacity, ok)
	}
	if n := tQueryInt(t, c, `SELECT capacity FROM cache_stats('cache')`); n != unbounded {
		t.Fatalf("capacity of the table %q: %d", "cache", n)
	}
	// A table of an odd name, next to it in the same file.
	opts := tPathOpts(path)
	opts.Table = `my "odd" table`
	opts.Capacity = 1000
	d := tOpen(t, opts)
	tNoErr(t, d.Put("k", []byte("in odd")), "Put")
	tNoErr(t, c.Put("k", []byte("in cache")), "Put")
	tWantValue(t, d, "k", []byte("in odd"))
	tWantValue(t, c, "k", []byte("in cache"))
	if capacity, ok := d.GetCapacity(); !ok || capacity != 1000 {
		t.Fatalf("GetCapacity = %d, %v", capacity, ok)
	}
	tNoErr(t, d.SetCapacity(500), "SetCapacity")
	tIntegrity(t, d)
}

func TestNewCacheOptions(t *testing.T) {
	t.Run("Capacity", func(t *testing.T) {
		path := tFile(t)
		o := tPathOpts(path)
		o.Capacity = 1 << 20
		c := tOpen(t, o)
		if capacity, ok := c.GetCapacity(); !ok || capacity != 1<<20 {
			t.Fatalf("new table: GetCapacity = %d, %v", capacity, ok)
		}
		tNoErr(t, c.Close(), "Close")
		// An existing table gets a new Capacity; Capacity 0 leaves it.
		o.Capacity = 5000
		c = tOpen(t, o)
		if capacity, ok := c.GetCapacity(); !ok || capacity != 5000 {
			t.Fatalf("existing table: GetCapacity = %d, %v", capacity, ok)
		}
		tNoErr(t, c.Close(), "Close")
		c = tOpen(t, tPathOpts(path))
		if capacity, ok := c.GetCapacity(); !ok || capacity != 5000 {
			t.Fatalf("Capacity 0 on an existing table: GetCapacity = %d, %v", capacity, ok)
		}
	})
	t.Run("PolicyFifo", func(t *testing.T) {
		o := tPathOpts(tFile(t))
		o.Policy = "FIFO"
		o.MaxEntries = 2
		c := tOpen(t, o)
		tNoErr(t, c.Put("a", []byte("x")), "Put")
		tNoErr(t, c.Put("b", []byte("y")), "Put")
		tWantValue(t, c, "a", []byte("x")) // no use under fifo
		tNoErr(t, c.Put("c", []byte("z")), "Put")
		tNotFound(t, c.Delete("a"), "Delete of the entry set first")
		tWantValue(t, c, "b", []byte("y"))
		tNoErr(t, c.Flush(), "Flush")
		if s := tStats(t, c); s.Hits != -1 || s.Misses != -1 || s.Entries != 2 {
			t.Fatalf("fifo Stats %+v; want Hits and Misses -1, 2 entries", s)
		}
		// a table's policy is chosen when it is made: another is an error
		o.Policy = "lru"
		_, err := NewCache(o)
		tErrHas(t, err, "NewCache of a fifo table with Policy lru", `Policy "lru", but the table "cache" is fifo`)
		o.Policy = "fifo"
		tOpen(t, o).Close()
		o.Policy = ""
		tOpen(t, o).Close()
	})
	t.Run("CapacityBelowZero", func(t *testing.T) {
		o := tPathOpts(tFile(t))
		o.Capacity = -1 // squirrel's "no bound"
		c := tOpen(t, o)
		if capacity, ok := c.GetCapacity(); ok || capacity != 0 {
			t.Fatalf("GetCapacity of a table made with Capacity -1 = %d, %v", capacity, ok)
		}
	})
	t.Run("DefaultTTL", func(t *testing.T) {
		path := tFile(t)
		o := tPathOpts(path)
		o.DefaultTTL = 90 * time.Second
		c := tOpen(t, o)
		tNoErr(t, c.Put("a", []byte("x")), "Put")
		if ms := tExpiresIn(t, c, "a"); ms != 90000 {
			t.Fatalf("DefaultTTL 90s: expires - created = %d ms", ms)
		}
		tNoErr(t, c.PutWith("b", []byte("y"), PutOpts{TTL: 1500 * time.Millisecond}), "PutWith")
		if ms := tExpiresIn(t, c, "b"); ms != 1500 {
			t.Fatalf("PutWith TTL 1.5s: expires - created = %d ms", ms)
		}
		tNoErr(t, c.Close(), "Close")
		o.DefaultTTL = 2 * time.Hour
		c = tOpen(t, o)
		tNoErr(t, c.Put("c", []byte("x")), "Put")
		if ms := tExpiresIn(t, c, "c"); ms != 7200000 {
			t.Fatalf("DefaultTTL 2h on an existing table: expires - created = %d ms", ms)
		}
	})
	t.Run("MaxEntries", func(t *testing.T) {
		path := tFile(t)
		o := tPathOpts(path)
		o.MaxEntries = 3
		c := tOpen(t, o)
		for _, k := range []string{"a", "b", "c", "d"} {
			tNoErr(t, c.Put(k, []byte(k)), "Put")
		}
		if s := tStats(t, c); s.Entries != 3 || s.Evictions != 1 {
			t.Fatalf("MaxEntries 3: Stats %+v", s)
		}
		tNotFound(t, c.Delete("a"), "Delete of the evicted entry")
		tNoErr(t, c.Close(), "Close")
		// Lowered on the existing table: evicts at once.
		o.MaxEntries = 1
		c = tOpen(t, o)
		if s := tStats(t, c); s.Entries != 1 {
			t.Fatalf("MaxEntries 1 on an existing table: Stats %+v", s)
		}
		tWantValue(t, c, "d", []byte("d"))
	})
	t.Run("Feed", func(t *testing.T) {
		path := tFile(t)
		o := tPathOpts(path)
		o.MaxEntries = 1
		c := tOpen(t, o)
		tNoErr(t, c.Put("a", nil), "Put")
		tNoErr(t, c.Put("b", nil), "Put")
		ev, err := c.Evictions(0)
		tNoErr(t, err, "Evictions")
		if len(ev) != 0 {
			t.Fatalf("no Feed: Evictions = %+v", ev)
		}
		tNoErr(t, c.Close(), "Close")
		o.Feed = 10
		c = tOpen(t, o)
		tNoErr(t, c.Put("c", nil), "Put")
		ev, err = c.Evictions(0)
		tNoErr(t, err, "Evictions")
		if len(ev) != 1 || ev[0].Key != "b" || ev[0].Reason != "entries" {
			t.Fatalf("Feed 10 on an existing table: Evictions = %+v", ev)
		}
	})
	t.Run("DontInitSchema", func(t *testing.T) {
		o := tPathOpts(tFile(t))
		o.DontInitSchema = true
		_, err := NewCache(o)
		tErrHas(t, err, "DontInitSchema on a missing table", "no such table", "cache")
		o.DontInitSchema = false
		tOpen(t, o).Close()
		o.DontInitSchema = true
		c := tOpen(t, o)
		tNoErr(t, c.Put("k", nil), "Put")
	})
	t.Run("PlainTableOfThatName", func(t *testing.T) {
		path := tFile(t)
		db, err := sql.Open(DriverName, path)
		tNoErr(t, err, "sql.Open")
		_, err = db.Exec(`CREATE TABLE pages(url, body)`)
		tNoErr(t, err, "CREATE TABLE")
		db.Close()
		o := tPathOpts(path)
		o.Table = "pages"
		_, err = NewCache(o)
		tErrHas(t, err, "a plain table named as Table", "'pages' is a table, not a cache table")
	})
	t.Run("AutoVacuum", func(t *testing.T) {
		path := tFile(t)
		o := tPathOpts(path)
		o.RequireAutoVacuum = "incremental"
		_, err := NewCache(o)
		tErrHas(t, err, "RequireAutoVacuum on a new file without SetAutoVacuum", "RequireAutoVacuum", "incremental", "0 (none)")

		path = tFile(t)
		o = tPathOpts(path)
		o.SetAutoVacuum = "incremental"
		o.RequireAutoVacuum = 2
		c := tOpen(t, o)
		if n := tQueryInt(t, c, `PRAGMA auto_vacuum`); n != 2 {
			t.Fatalf("auto_vacuum %d", n)
		}
		tNoErr(t, c.Close(), "Close")
		for _, want := range []any{"INCREMENTAL", 2, int64(2), "2"} {
			o := tPathOpts(path)
			o.RequireAutoVacuum = want
			tOpen(t, o).Close()
		}
		o = tPathOpts(path)
		o.RequireAutoVacuum = "full"
		_, err = NewCache(o)
		tErrHas(t, err, "RequireAutoVacuum full on an incremental file", "RequireAutoVacuum full", "2 (incremental)")
	})
	t.Run("ExclusiveLocking", func(t *testing.T) {
		path := tFile(t)
		o := tPathOpts(path)
		o.SetLockingMode = "exclusive"
		c := tOpen(t, o)
		tNoErr(t, c.Put("k", []byte("v")), "Put")
		tWantValue(t, c, "k", []byte("v"))
		tNoErr(t, c.TxImmediate(func(tx *Tx) error { return tx.Put("t", []byte("w")) }), "TxImmediate")
		tNoErr(t, c.Flush(), "Flush")
		var mode string
		tNoErr(t, c.DB().QueryRow(`PRAGMA locking_mode`).Scan(&mode), "PRAGMA locking_mode")
		if mode != "exclusive" {
			t.Fatalf("locking_mode %q", mode)
		}
		if n := c.DB().Stats().MaxOpenConnections; n != 1 {
			t.Fatalf("exclusive locking: the pool may open %d connections", n)
		}
		// The file is this Cache's alone until it closes.
		o2 := tPathOpts(path)
		o2.BusyTimeout = time.Millisecond
		if d, err := NewCache(o2); err == nil {
			d.Close()
			t.Fatalf("a second Cache opened a file locked exclusively")
		} else {
			tErrHas(t, err, "second Cache on an exclusive file", "locked")
		}
		tNoErr(t, c.Close(), "Close")
		d := tOpen(t, o2)
		tWantValue(t, d, "t", []byte("w"))
	})
	t.Run("Pragmas", func(t *testing.T) {
		cacheSize, limit := int64(-4000), 10000
		o := tPathOpts(tFile(t))
		o.SetJournalMode = "delete"
		o.SetSynchronous = 1
		o.PageSize = 8192
		o.MmapSizeOk, o.MmapSize = true, 1<<20
		o.CacheSize = &cacheSize
		o.LengthLimit = &limit
		o.NoTriggers = true
		c := tOpen(t, o)
		var mode string
		tNoErr(t, c.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode), "journal_mode")
		for q, want := range map[string]int64{`PRAGMA synchronous`: 1, `PRAGMA page_size`: 8192, `PRAGMA cache_size`: -4000, `PRAGMA mmap_size`: 1 << 20} {
			if got := tQueryInt(t, c, q); got != want {
				t.Errorf("%s = %d, want %d", q, got, want)
			}
		}
		if mode != "delete" {
			t.Fatalf("journal_mode %q", mode)
		}
		tNoErr(t, c.Put("small", make([]byte, 5000)), "Put under LengthLimit")
		tErrHas(t, c.Put("big", make([]byte, 20000)), "Put over LengthLimit", `"big"`, "too big")
	})
}

func TestNewCacheOptsErrors(t *testing.T) {
	path := tFile(t)
	for _, tc := range []struct {
		name  string
		opts  func(o *NewCacheOpts)
		field string
	}{
		{"journal", func(o *NewCacheOpts) { o.SetJournalMode = "wall" }, "SetJournalMode"},
		{"locking", func(o *NewCacheOpts) { o.SetLockingMode = "shared" }, "SetLockingMode"},
		{"synchronous high", func(o *NewCacheOpts) { o.SetSynchronous = 4 }, "SetSynchronous"},
		{"synchronous negative", func(o *NewCacheOpts) { o.SetSynchronous = -1 }, "SetSynchronous"},
		{"auto_vacuum", func(o *NewCacheOpts) { o.SetAutoVacuum = "sometimes" }, "SetAutoVacuum"},
		{"policy", func(o *NewCacheOpts) { o.Policy = "random" }, "Policy"},
		{"max entries", func(o *NewCacheOpts) { o.MaxEntries = -1 }, "MaxEntries"},
		{"feed", func(o *NewCacheOpts) { o.Feed = -1 }, "Feed"},
		{"ttl negative", func(o *NewCacheOpts) { o.DefaultTTL = -time.Second }, "DefaultTTL"},
		{"ttl under a second", func(o *NewCacheOpts) { o.DefaultTTL = 500 * time.Millisecond }, "DefaultTTL"},
		{"busy timeout", func(o *NewCacheOpts) { o.BusyTimeout = -time.Second }, "BusyTimeout"},
		{"page size", func(o *NewCacheOpts) { o.PageSize = -4096 }, "PageSize"},
		{"page size not a power of two", func(o *NewCacheOpts) { o.PageSize = 1000 }, "PageSize"},
		{"page size too big", func(o *NewCacheOpts) { o.PageSize = 131072 }, "PageSize"},
		{"ttl with a fraction", func(o *NewCacheOpts) { o.DefaultTTL = 1500 * time.Millisecond }, "DefaultTTL"},
		{"busy timeout under a millisecond", func(o *NewCacheOpts) { o.BusyTimeout = time.Microsecond }, "BusyTimeout"},
		{"table with a dot", func(o *NewCacheOpts) { o.Table = "main.cache" }, "Table"},
		{"table with NUL", func(o *NewCacheOpts) { o.Table = "ca\x00che" }, "Table"},
		{"max blob size", func(o *NewCacheOpts) { o.MaxBlobSize = 1 << 20 }, "MaxBlobSize"},
		{"path with ?", func(o *NewCacheOpts) { o.Path += "?mode=ro" }, "Path"},
	} {
		o := tPathOpts(path)
		tc.opts(&o)
		c, err := NewCache(o)
		if err == nil {
			c.Close()
			t.Errorf("%s: NewCache(%+v) gave no error", tc.name, o)
			continue
		}
		if c != nil {
			t.Errorf("%s: a Cache with the error", tc.name)
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %q does not name %s", tc.name, err, tc.field)
		}
		if tc.field == "MaxBlobSize" && !errors.Is(err, ErrNotSupported) {
			t.Errorf("MaxBlobSize: error %v is not ErrNotSupported", err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("refused options made the file: %v", err)
	}
}

func TestPutRead(t *testing.T) {
	c := tOpen(t, NewCacheOpts{})
	tNoErr(t, c.Put("k", []byte("hello")), "Put")

	// ReadFull: exact, shorter than b, longer than b, empty, missing.
	b := make([]byte, 5)
	n, err := c.ReadFull("k", b)
	if n != 5 || err != nil || string(b) != "hello" {
		t.Fatalf("ReadFull exact = %d, %v, %q", n, err, b)
	}
	b = make([]byte, 8)
	n, err = c.ReadFull("k", b)
	if n != 5 || err != io.ErrUnexpectedEOF || string(b[:n]) != "hello" {
		t.Fatalf("ReadFull of a shorter value = %d, %v, %q", n, err, b[:n])
	}
	b = make([]byte, 2)
	n, err = c.ReadFull("k", b)
	if n != 2 || err != nil || string(b) != "he" {
		t.Fatalf("ReadFull of a longer value = %d, %v, %q", n, err, b)
	}
	tNoErr(t, c.Put("empty", nil), "Put nil")
	n, err = c.ReadFull("empty", make([]byte, 4))
	if n != 0 || err != io.EOF {
		t.Fatalf("ReadFull of an empty value = %d, %v; want 0, io.EOF", n, err)
	}
	n, err = c.ReadFull("empty", nil)
	if n != 0 || err != nil {
		t.Fatalf("ReadFull of an empty value into nothing = %d, %v", n, err)
	}
	n, err = c.ReadFull("missing", make([]byte, 4))
	if n != 0 || err != ErrNotFound || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFull of a missing key = %d, %v", n, err)
	}

	// ReadAll: into b's storage when it is big enough, else new.
	buf := make([]byte, 3, 64)
	got, err := c.ReadAll("k", buf)
	tNoErr(t, err, "ReadAll")
	if string(got) != "hello" || &got[0] != &buf[:1][0] {
		t.Fatalf("ReadAll into a big enough b: %q, same storage %v", got, &got[0] == &buf[:1][0])
	}
	small := make([]byte, 0, 2)
	got, err = c.ReadAll("k", small)
	tNoErr(t, err, "ReadAll")
	if string(got) != "hello" || cap(small) != 2 {
		t.Fatalf("ReadAll into a small b: %q", got)
	}
	got, err = c.ReadAll("empty", nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("ReadAll of an empty value = %q, %v", got, err)
	}
	_, err = c.ReadAll("missing", nil)
	tNotFound(t, err, "ReadAll of a missing key")

	// Put replaces; PutWith gives a TTL and a tag.
	tNoErr(t, c.Put("k", []byte("again")), "Put again")
	tWantValue(t, c, "k", []byte("again"))
	tNoErr(t, c.PutWith("t", []byte("tagged"), PutOpts{TTL: time.Hour, Tag: "user:1"}), "PutWith")
	if ms := tExpiresIn(t, c, "t"); ms != 3600000 {
		t.Fatalf("PutWith TTL 1h: expires - created = %d", ms)
	}
	var tag string
	tNoErr(t, c.DB().QueryRow(`SELECT tag FROM cache WHERE key = 't'`).Scan(&tag), "tag")
	if tag != "user:1" {
		t.Fatalf("tag %q", tag)
	}
	tNoErr(t, c.PutWith("plain", []byte("p"), PutOpts{}), "PutWith no options")
	if ms := tExpiresIn(t, c, "plain"); ms != -1 {
		t.Fatalf("PutWith without TTL expires in %d ms", ms)
	}
	tErrHas(t, c.PutWith("neg", nil, PutOpts{TTL: -time.Second}), "PutWith negative TTL", "TTL", "negative")

	// Delete, then ErrNotFound.
	tNoErr(t, c.Delete("k"), "Delete")
	err = c.Delete("k")
	tNotFound(t, err, "second Delete")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ErrNotFound is not fs.ErrNotExist")
	}
	_, err = c.ReadAll("k", nil)
	tNotFound(t, err, "ReadAll after Delete")

	// An entry expired but not yet reclaimed is not found.
	_, err = c.DB().Exec(`INSERT INTO cache(key, value, expires) VALUES ('old', x'01', 1)`)
	tNoErr(t, err, "INSERT expired")
	_, err = c.ReadAll("old", nil)
	tNotFound(t, err, "ReadAll of an expired entry")
	_, err = c.LastUsed("old")
	tNotFound(t, err, "LastUsed of an expired entry")
	tIntegrity(t, c)
}

func TestForeignValues(t *testing.T) {
	c := tOpen(t, NewCacheOpts{})
	ins := func(key string, value any) {
		t.Helper()
		_, err := c.DB().Exec(`INSERT INTO cache(key, value) VALUES (?, ?)`, key, value)
		tNoErr(t, err, "INSERT "+key)
	}
	insText := func(key string, b []byte) {
		t.Helper()
		_, err := c.DB().Exec(`INSERT INTO cache(key, value) VALUES (?, CAST(? AS TEXT))`, key, b)
		tNoErr(t, err, "INSERT "+key)
	}
	ins("text", "héllo")
	ins("int", 42)
	ins("real", 2.5)
	insText("pickle", []byte("\xffp\x80\x04K*."))
	insText("json", []byte("\xffj[1,true]"))
	insText("newer", []byte("\xffzwhat"))
	insText("bare", []byte("\xff"))
	insText("odd\x00key", []byte("\xffmdump"))

	got := tReadAll(t, c, "text")
	if string(got) != "héllo" {
		t.Fatalf("ReadAll of TEXT = %q", got)
	}
	b := make([]byte, 6)
	if n, err := c.ReadFull("text", b); n != 6 || err != nil || string(b) != "héllo" {
		t.Fatalf("ReadFull of TEXT = %d, %v, %q", n, err, b)
	}
	for _, tc := range []struct{ key, kind string }{
		{"int", "INTEGER"},
		{"real", "REAL"},
		{"pickle", "a Python pickle"},
		{"json", "JSON"},
		{"newer", `marked TEXT of an unknown format 'z'`},
		{"bare", "marked TEXT of an unknown format"},
		{"odd\x00key", "a Ruby Marshal dump"},
	} {
		_, err := c.ReadAll(tc.key, nil)
		var fe *ForeignValueError
		if !errors.As(err, &fe) {
			t.Fatalf("ReadAll %q: %v, want a *ForeignValueError", tc.key, err)
		}
		if fe.Key != tc.key || !strings.HasPrefix(fe.Kind, tc.kind) {
			t.Fatalf("ReadAll %q: %+v, want kind %q", tc.key, fe, tc.kind)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.key)) || !strings.Contains(err.Error(), tc.kind) {
			t.Fatalf("ReadAll %q: message %q names neither key nor kind", tc.key, err)
		}
	}
	// A number has no bytes at an offset either.
	for _, key := range []string{"int", "real"} {
		_, err := c.ReadFull(key, make([]byte, 1))
		var fe *ForeignValueError
		if !errors.As(err, &fe) || fe.Key != key {
			t.Fatalf("ReadFull %q: %v, want a *ForeignValueError", key, err)
		}
		_, err = c.NewBlobRef(key).ReadAt(make([]byte, 1), 0)
		if !errors.As(err, &fe) || fe.Key != key {
			t.Fatalf("ReadAt %q: %v, want a *ForeignValueError", key, err)
		}
	}
	// cache_write refuses a TEXT value, naming it.
	_, err := c.NewBlobRef("text").WriteAt([]byte{0}, 0)
	tErrHas(t, err, "WriteAt into TEXT", "TEXT")
}

func TestBinaryKeys(t *testing.T) {
	c := tOpen(t, NewCacheOpts{})
	hashes := tHashes(1, 8)
	want := map[string][]byte{}
	for i, h := range hashes {
		for _, off := range []uint32{0, 1 << 14, 0xFF00FF00, 0xFFFFFFFF} {
			k := tKey(h, off)
			v := tValue(k, 100+i)
			tNoErr(t, c.Put(k, v), fmt.Sprintf("Put %q", k))
			want[k] = v
		}
	}
	// A key that is only NUL bytes, and the empty key.
	for _, k := range []string{"\x00", "\x00\x00", ""} {
		tNoErr(t, c.Put(k, []byte(k+"v")), fmt.Sprintf("Put %q", k))
		want[k] = []byte(k + "v")
	}
	for k, v := range want {
		tWantValue(t, c, k, v)
		b := make([]byte, len(v))
		if n, err := c.ReadFull(k, b); n != len(v) || err != nil || !bytes.Equal(b, v) {
			t.Fatalf("ReadFull %q = %d, %v", k, n, err)
		}
		if n, err := c.NewBlobRef(k).Size(); n != int64(len(v)) || err != nil {
			t.Fatalf("Size %q = %d, %v; want %d", k, n, err, len(v))
		}
		if _, err := c.LastUsed(k); err != nil {
			t.Fatalf("LastUsed %q: %v", k, err)
		}
	}
	// Keys differing only after a NUL are different keys.
	if bytes.Equal(tReadAll(t, c, "\x00"), tReadAll(t, c, "\x00\x00")) {
		t.Fatalf("keys \\x00 and \\x00\\x00 share a value")
	}
	// The listing gives every key back, byte for byte.
	rows, err := c.DB().Query(`SELECT key FROM cache`)
	tNoErr(t, err, "SELECT key")
	listed := map[string]bool{}
	for rows.Next() {
		var k string
		tNoErr(t, rows.Scan(&k), "Scan")
		listed[k] = true
	}
	tNoErr(t, rows.Err(), "rows")
	rows.Close()
	if len(listed) != len(want) {
		t.Fatalf("listing holds %d keys, want %d", len(listed), len(want))
	}
	for k := range want {
		if !listed[k] {
			t.Fatalf("key %q is not listed", k)
		}
	}
	// Pieces of one torrent written in place, and an eviction's feed row.
	k := tKey(hashes[0], 3<<14)
	blob := c.BlobWithLength(k, 1<<14)
	piece := tValue("piece", 1<<14)
	for off := 0; off < len(piece); off += 4096 {
		if n, err := blob.WriteAt(piece[off:off+4096], int64(off)); n != 4096 || err != nil {
			t.Fatalf("WriteAt %q at %d = %d, %v", k, off, n, err)
		}
	}
	tWantValue(t, c, k, piece)
	for k := range want {
		tNoErr(t, c.Delete(k), fmt.Sprintf("Delete %q", k))
	}
	tIntegrity(t, c)
}

func TestBlob(t *testing.T) {
	c := tOpen(t, NewCacheOpts{})
	value := tValue("blob", 10000)
	tNoErr(t, c.Put("b", value), "Put")
	blob := c.NewBlobRef("b")

	if n, err := blob.Size(); n != 10000 || err != nil {
		t.Fatalf("Size = %d, %v", n, err)
	}
	b := make([]byte, 100)
	if n, err := blob.ReadAt(b, 5000); n != 100 || err != nil || !bytes.Equal(b, value[5000:5100]) {
		t.Fatalf("ReadAt middle = %d, %v", n, err)
	}
	// io.ReaderAt: fewer bytes than asked only with an error, io.EOF at the end.
	if n, err := blob.ReadAt(b, 9950); n != 50 || err != io.EOF || !bytes.Equal(b[:50], value[9950:]) {
		t.Fatalf("ReadAt across the end = %d, %v", n, err)
	}
	if n, err := blob.ReadAt(b, 10000); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at the end = %d, %v", n, err)
	}
	if n, err := blob.ReadAt(b, 20000); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt past the end = %d, %v", n, err)
	}
	if n, err := blob.ReadAt(b[:0], 0); n != 0 || err != nil {
		t.Fatalf("ReadAt of nothing = %d, %v", n, err)
	}
	_, err := blob.ReadAt(b, -1)
	tErrHas(t, err, "ReadAt at a negative offset", "offset -1")
	tNoErr(t, iotest.TestReader(io.NewSectionReader(blob, 0, 10000), value), "iotest.TestReader over a SectionReader of the Blob")

	// WriteAt in place; refused past the end, whole.
	if n, err := blob.WriteAt([]byte("abc"), 100); n != 3 || err != nil {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	copy(value[100:], "abc")
	tWantValue(t, c, "b", value)
	n, err := blob.WriteAt([]byte("xyz"), 9998)
	if n != 0 {
		t.Fatalf("WriteAt past the end wrote %d", n)
	}
	tErrHas(t, err, "WriteAt past the end", "cannot write 3 bytes at offset 9998")
	_, err = blob.WriteAt([]byte("x"), -1)
	tErrHas(t, err, "WriteAt at a negative offset", "offset -1")
	tWantValue(t, c, "b", value)

	// NewBlobRef of a missing key: ErrNotFound everywhere.
	none := c.NewBlobRef("none")
	_, err = none.WriteAt([]byte("x"), 0)
	tNotFound(t, err, "WriteAt of a NewBlobRef with no entry")
	_, err = none.ReadAt(b, 0)
	tNotFound(t, err, "ReadAt of a missing key")
	_, err = none.Size()
	tNotFound(t, err, "Size of a missing key")
	_, err = none.LastUsed()
	tNotFound(t, err, "LastUsed of a missing key")
	tNotFound(t, none.Delete(), "Delete of a missing key")

	// BlobWithLength makes the entry at its first WriteAt.
	for _, mk := range []func(string, int64) Blob{c.BlobWithLength, c.OpenWithLength} {
		nb := mk("new", 64)
		if n, err := nb.WriteAt([]byte("tail"), 60); n != 4 || err != nil {
			t.Fatalf("WriteAt creating the entry = %d, %v", n, err)
		}
		want := append(make([]byte, 60), "tail"...)
		tWantValue(t, c, "new", want)
		if n, err := nb.Size(); n != 64 || err != nil {
			t.Fatalf("Size = %d, %v", n, err)
		}
		// A second WriteAt writes into the entry made.
		if n, err := nb.WriteAt([]byte("head"), 0); n != 4 || err != nil {
			t.Fatalf("WriteAt = %d, %v", n, err)
		}
		copy(want, "head")
		tWantValue(t, c, "new", want)
		tNoErr(t, nb.Delete(), "Delete")
		tNotFound(t, nb.Delete(), "second Delete")
	}
	// A refused first WriteAt makes no entry: it is one transaction.
	nb := c.BlobWithLength("short", 8)
	_, err = nb.WriteAt([]byte("0123456789"), 0)
	tErrHas(t, err, "WriteAt past the end of the entry it makes", "cannot write 10 bytes at offset 0")
	_, err = nb.Size()
	tNotFound(t, err, "Size after the refused WriteAt")

	// LastUsed, SetTag.
	lu, err := blob.LastUsed()
	tNoErr(t, err, "LastUsed")
	if lu.IsZero() || lu.After(time.Now().Add(time.Second)) {
		t.Fatalf("LastUsed %v", lu)
	}
	if err := blob.SetTag("x", 1); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("Blob.SetTag: %v", err)
	}
	tNoErr(t, blob.Delete(), "Delete")
	_, err = blob.Size()
	tNotFound(t, err, "Size after Delete")
	tIntegrity(t, c)
}

func TestPinned(t *testing.T) {
	c := tOpen(t, NewCacheOpts{})
	value := tValue("pinned", 5000)
	tNoErr(t, c.Put("p", value), "Put")

	// OpenPinnedReadOnly: one snapshot; WriteAt refused.
	ro, err := c.OpenPinnedReadOnly("p")
	tNoErr(t, err, "OpenPinnedReadOnly")
	if n := ro.Length(); n != 5000 {
		t.Fatalf("Length %d", n)
	}
	if _, err := ro.WriteAt([]byte("x"), 0); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("WriteAt of a read-only blob: %v", err)
	}
	// A writer goes on (WAL); the snapshot still reads the old value.
	tNoErr(t, tErrOf(c.NewBlobRef("p").WriteAt([]byte("new"), 0)), "WriteAt meanwhile")
	got, err := io.ReadAll(io.NewSectionReader(ro, 0, ro.Length()))
	tNoErr(t, err, "io.ReadAll of a SectionReader")
	if !bytes.Equal(got, value) {
		t.Fatalf("the snapshot sees the write made after it")
	}
	tNoErr(t, iotest.TestReader(io.NewSectionReader(ro, 0, 5000), value), "iotest.TestReader")
	if _, err := ro.LastUsed(); err != nil {
		t.Fatalf("LastUsed: %v", err)
	}
	tNoErr(t, ro.Close(), "Close")
	if err := ro.Close(); err != ErrClosed {
		t.Fatalf("second Close of a CachePinnedBlob: %v, want ErrClosed", err)
	}
	if _, err := ro.ReadAt(make([]byte, 1), 0); err != ErrClosed {
		t.Fatalf("ReadAt after Close: %v", err)
	}
	if _, err := ro.LengthErr(); err != ErrClosed || ro.Length() != -1 {
		t.Fatalf("LengthErr after Close: %v", err)
	}
	if _, err := ro.LastUsed(); err != ErrClosed {
		t.Fatalf("LastUsed after Close: %v", err)
	}
	if _, err := ro.WriteAt(nil, 0); err != ErrClosed {
		t.Fatalf("WriteAt after Close: %v", err)
	}
	copy(value, "new")

	// OpenPinned: writes commit at Close.
	pb, err := c.OpenPinned("p")
	tNoErr(t, err, "OpenPinned")
	if n, err := pb.WriteAt([]byte("pinned"), 10); n != 6 || err != nil {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	b := make([]byte, 6)
	if n, err := pb.ReadAt(b, 10); n != 6 || err != nil || string(b) != "pinned" {
		t.Fatalf("ReadAt in the transaction = %d, %v, %q", n, err, b)
	}
	tWantValue(t, c, "p", value) // not committed yet
	tNoErr(t, pb.Close(), "Close")
	copy(value[10:], "pinned")
	tWantValue(t, c, "p", value)
	_, err = c.OpenPinned("missing")
	tNotFound(t, err, "OpenPinned of a missing key")
	_, err = c.OpenPinnedReadOnly("missing")
	tNotFound(t, err, "OpenPinnedReadOnly of a missing key")

	// Create: a new value of zero bytes, committed at Close.
	cb, err := c.Create("made", CreateOpts{Length: 32})
	tNoErr(t, err, "Create")
	if n := cb.Length(); n != 32 {
		t.Fatalf("Length %d", n)
	}
	_, err = cb.WriteAt([]byte("x"), 32)
	tErrHas(t, err, "WriteAt past the end of a Create", "offset 32")
	if n, err := cb.WriteAt([]byte("end"), 29); n != 3 || err != nil {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	_, err = c.ReadAll("made", nil)
	tNotFound(t, err, "ReadAll before the Create's Close")
	tNoErr(t, cb.Close(), "Close")
	tWantValue(t, c, "made", append(make([]byte, 29), "end"...))
	// Create over a stored key replaces it.
	cb, err = c.Create("made", CreateOpts{Length: 2})
	tNoErr(t, err, "Create over a key")
	tNoErr(t, cb.Close(), "Close")
	tWantValue(t, c, "made", []byte{0, 0})
	_, err = c.Create("neg", CreateOpts{Length: -1})
	tErrHas(t, err, "Create of a negative length", "length -1")

	if n := c.DB().Stats().InUse; n != 0 {
		t.Fatalf("%d connections still in use after every blob closed", n)
	}
	tIntegrity(t, c)
}

func TestTx(t *testing.T) {
	c := tOpen(t, NewCacheOpts{})
	tNoErr(t, c.Put("a", []byte("1")), "Put")
	for _, run := range []struct {
		name string
		tx   func(func(*Tx) error) error
	}{{"Tx", c.Tx}, {"TxImmediate", c.TxImmediate}} {
		t.Run(run.name, func(t *testing.T) {
			key := "in-" + run.name
			// Commit: every method of the Tx.
			err := run.tx(func(tx *Tx) error {
				if err := tx.Put(key, []byte("v")); err != nil {
					return err
				}
				if err := tx.PutWith(key+"-tagged", []byte("w"), PutOpts{Tag: "tx", TTL: time.Minute}); err != nil {
					return err
				}
				got, err := tx.ReadAll(key, nil)
				if err != nil || string(got) != "v" {
					return fmt.Errorf("tx.ReadAll = %q, %v", got, err)
				}
				b := make([]byte, 4)
				if n, err := tx.ReadFull(key, b); n != 1 || err != io.ErrUnexpectedEOF {
					return fmt.Errorf("tx.ReadFull = %d, %v", n, err)
				}
				if _, err := tx.LastUsed(key); err != nil {
					return fmt.Errorf("tx.LastUsed: %v", err)
				}
				if _, err := tx.LastUsed("nope"); err != ErrNotFound {
					return fmt.Errorf("tx.LastUsed of a missing key: %v", err)
				}
				if err := tx.SetTag(key, "x", 1); !errors.Is(err, ErrNotSupported) {
					return fmt.Errorf("tx.SetTag: %v", err)
				}
				pb, err := tx.Create(key+"-blob", CreateOpts{Length: 8})
				if err != nil {
					return err
				}
				if _, err := pb.WriteAt([]byte("ab"), 6); err != nil {
					return err
				}
				if err := pb.Close(); err != nil {
					return err
				}
				pb, err = tx.OpenPinned(key + "-blob")
				if err != nil {
					return err
				}
				if _, err := pb.WriteAt([]byte("cd"), 0); err != nil {
					return err
				}
				ro, err := tx.OpenPinnedReadOnly(key + "-blob")
				if err != nil {
					return err
				}
				if _, err := ro.WriteAt([]byte("x"), 0); err == nil {
					return fmt.Errorf("WriteAt of a blob opened read-only in a Tx: no error")
				}
				got, err = io.ReadAll(io.NewSectionReader(ro, 0, ro.Length()))
				if err != nil || string(got) != "cd\x00\x00\x00\x00ab" {
					return fmt.Errorf("read of the pinned blob = %q, %v", got, err)
				}
				if _, err := tx.OpenPinned("nope"); err != ErrNotFound {
					return fmt.Errorf("tx.OpenPinned of a missing key: %v", err)
				}
				op, err := tx.Open(key + "-blob") // squirrel's other name of OpenPinned
				if err != nil {
					return fmt.Errorf("tx.Open: %v", err)
				}
				if _, err := op.WriteAt([]byte("c"), 0); err != nil {
					return fmt.Errorf("WriteAt of a blob of tx.Open: %v", err)
				}
				if _, err := tx.Open("nope"); err != ErrNotFound {
					return fmt.Errorf("tx.Open of a missing key: %v", err)
				}
				if err := tx.Delete("a"); err != nil {
					return err
				}
				if err := tx.Delete("a"); err != ErrNotFound {
					return fmt.Errorf("second tx.Delete: %v", err)
				}
				return nil
			})
			tNoErr(t, err, run.name)
			tWantValue(t, c, key, []byte("v"))
			tWantValue(t, c, key+"-blob", []byte("cd\x00\x00\x00\x00ab"))
			if ms := tExpiresIn(t, c, key+"-tagged"); ms != 60000 {
				t.Fatalf("PutWith in a Tx: expires - created = %d", ms)
			}
			_, err = c.ReadAll("a", nil)
			tNotFound(t, err, "ReadAll of the key the Tx deleted")
			tNoErr(t, c.Put("a", []byte("1")), "Put")

			// An error returned: rolled back, and returned.
			errMine := errors.New("mine")
			err = run.tx(func(tx *Tx) error {
				if err := tx.Put(key+"-gone", []byte("x")); err != nil {
					return err
				}
				if err := tx.Delete("a"); err != nil {
					return err
				}
				return fmt.Errorf("wrapped: %w", errMine)
			})
			if !errors.Is(err, errMine) {
				t.Fatalf("%s returned %v, want the function's error", run.name, err)
			}
			_, err = c.ReadAll(key+"-gone", nil)
			tNotFound(t, err, "ReadAll of a rolled-back Put")
			tWantValue(t, c, "a", []byte("1"))

			// A panic: rolled back, and it goes on.
			var recovered any
			func() {
				defer func() { recovered = recover() }()
				run.tx(func(tx *Tx) error {
					if err := tx.Put(key+"-panic", []byte("x")); err != nil {
						return err
					}
					panic("boom")
				})
			}()
			if recovered != "boom" {
				t.Fatalf("%s: recovered %v, want the panic's value", run.name, recovered)
			}
			_, err = c.ReadAll(key+"-panic", nil)
			tNotFound(t, err, "ReadAll of a Put before a panic")
			if n := c.DB().Stats().InUse; n != 0 {
				t.Fatalf("%d connections in use after the Tx", n)
			}
		})
	}
	tIntegrity(t, c)
}

// TestTxReadThenWrite: SQLite's rule that docs/cache.md states, seen through
// Tx: in WAL mode a deferred transaction that read before another
// connection's commit cannot write, and fails at once; TxImmediate waits.
func TestTxReadThenWrite(t *testing.T) {
	c := tOpen(t, NewCacheOpts{})
	tNoErr(t, c.Put("a", []byte("1")), "Put")
	err := c.Tx(func(tx *Tx) error {
		if _, err := tx.ReadAll("a", nil); err != nil {
			return err
		}
		if err := c.Put("other", []byte("2")); err != nil { // another connection
			return fmt.Errorf("pool Put: %w", err)
		}
		return tx.Put("a", []byte("3"))
	})
	tErrHas(t, err, "a deferred Tx writing after a read and another commit", "database is locked")
	tWantValue(t, c, "a", []byte("1"))
	tWantValue(t, c, "other", []byte("2"))
	// Written first, the deferred Tx takes the write lock before it reads.
	tNoErr(t, c.Tx(func(tx *Tx) error {
		if err := tx.Put("a", []byte("4")); err != nil {
			return err
		}
		_, err := tx.ReadAll("other", nil)
		return err
	}), "Tx writing first")
	tWantValue(t, c, "a", []byte("4"))
}

func TestCapacity(t *testing.T) {
	o := NewCacheOpts{Feed: 10}
	o.Capacity = 100
	c := tOpen(t, o)
	if capacity, ok := c.GetCapacity(); capacity != 100 || !ok {
		t.Fatalf("GetCapacity = %d, %v", capacity, ok)
	}
	if capacity, ok, err := c.GetCapacityErr(); capacity != 100 || !ok || err != nil {
		t.Fatalf("GetCapacityErr = %d, %v, %v", capacity, ok, err)
	}
	for _, k := range []string{"a", "b", "c"} { // 10 bytes each
		tNoErr(t, c.Put(k, make([]byte, 9)), "Put")
	}
	tWantValue(t, c, "a", make([]byte, 9)) // a is now the most recently used
	tNoErr(t, c.Flush(), "Flush")
	before := time.Now().Truncate(time.Millisecond)
	tNoErr(t, c.SetCapacity(25), "SetCapacity")
	after := time.Now()
	s := tStats(t, c)
	if s.Capacity != 25 || s.Entries != 2 || s.Bytes != 20 || s.Evictions != 1 {
		t.Fatalf("after SetCapacity(25): %+v", s)
	}
	_, err := c.ReadAll("b", nil)
	tNotFound(t, err, "the least recently used entry after SetCapacity")
	ev, err := c.Evictions(0)
	tNoErr(t, err, "Evictions")
	if len(ev) != 1 || ev[0].Seq != 1 || ev[0].Key != "b" || ev[0].Size != 10 || ev[0].Reason != "capacity" {
		t.Fatalf("Evictions(0) = %+v", ev)
	}
	if ev[0].At.Before(before) || ev[0].At.After(after) {
		t.Fatalf("eviction at %v, not between %v and %v", ev[0].At, before, after)
	}
	tErrHas(t, c.Put("big", make([]byte, 30)), "Put over the capacity", "exceeds capacity")
	// Each set evicts the least recently used entry: c, a, then the key
	// of bytes, which the feed gives back exactly.
	bin := "\x00\xff\x01"
	for _, k := range []string{bin, "d", "e"} {
		tNoErr(t, c.Put(k, make([]byte, 9)), "Put")
	}
	ev, err = c.Evictions(1)
	tNoErr(t, err, "Evictions")
	if len(ev) != 3 || ev[0].Seq != 2 || ev[0].Key != "c" || ev[1].Key != "a" || ev[2].Seq != 4 || ev[2].Key != bin {
		t.Fatalf("Evictions(1) = %+v", ev)
	}
	if ev, err := c.Evictions(4); len(ev) != 0 || err != nil {
		t.Fatalf("Evictions(4) = %+v, %v", ev, err)
	}
	tNoErr(t, c.SetCapacity(0), "SetCapacity(0)")
	if capacity, ok := c.GetCapacity(); ok || capacity != 0 {
		t.Fatalf("GetCapacity after SetCapacity(0) = %d, %v", capacity, ok)
	}
	tNoErr(t, c.Put("big", make([]byte, 1000)), "Put after SetCapacity(0)")
	tNoErr(t, c.SetCapacity(10), "SetCapacity(10)")
	tNoErr(t, c.SetCapacity(-1), "SetCapacity(-1)") // squirrel's "no bound"
	if capacity, ok := c.GetCapacity(); ok || capacity != 0 {
		t.Fatalf("GetCapacity after SetCapacity(-1) = %d, %v", capacity, ok)
	}
	tIntegrity(t, c)
}

func TestStatsTagsPurgeFlush(t *testing.T) {
	c := tOpen(t, NewCacheOpts{})
	tNoErr(t, c.Put("a", []byte("xy")), "Put")
	tNoErr(t, c.Put("b", []byte("z")), "Put")
	tReadAll(t, c, "a")
	if n, err := c.ReadFull("b", make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("ReadFull = %d, %v", n, err)
	}
	_, err := c.ReadAll("nope", nil)
	tNotFound(t, err, "ReadAll")
	tNoErr(t, c.Flush(), "Flush")
	s := tStats(t, c)
	if s != (Stats{Capacity: unbounded, Entries: 2, Bytes: 5, Hits: 2, Misses: 1}) {
		t.Fatalf("Stats %+v", s)
	}
	if n := tQueryInt(t, c, `SELECT hits FROM cache WHERE key = 'a'`); n != 1 {
		t.Fatalf("hits of a after Flush: %d", n)
	}

	// LastUsed: the time of the set.
	before := time.Now().Truncate(time.Millisecond)
	tNoErr(t, c.Put("t", nil), "Put")
	after := time.Now()
	lu, err := c.LastUsed("t")
	tNoErr(t, err, "LastUsed")
	if lu.Before(before) || lu.After(after) {
		t.Fatalf("LastUsed %v not between %v and %v", lu, before, after)
	}
	_, err = c.LastUsed("nope")
	tNotFound(t, err, "LastUsed of a missing key")

	// DeleteTag.
	for _, k := range []string{"u1/a", "u1/b"} {
		tNoErr(t, c.PutWith(k, []byte(k), PutOpts{Tag: "user:1"}), "PutWith")
	}
	tNoErr(t, c.PutWith("u2/a", nil, PutOpts{Tag: "user:2"}), "PutWith")
	if n, err := c.DeleteTag("user:1"); n != 2 || err != nil {
		t.Fatalf("DeleteTag = %d, %v", n, err)
	}
	if n, err := c.DeleteTag("user:1"); n != 0 || err != nil {
		t.Fatalf("second DeleteTag = %d, %v", n, err)
	}
	_, err = c.ReadAll("u1/a", nil)
	tNotFound(t, err, "ReadAll of a key of the deleted tag")
	tReadAll(t, c, "u2/a")

	// Purge reclaims what expired.
	_, err = c.DB().Exec(`INSERT INTO cache(key, value, expires) VALUES ('old', x'00', 1)`)
	tNoErr(t, err, "INSERT")
	s = tStats(t, c)
	tNoErr(t, c.Purge(), "Purge")
	s2 := tStats(t, c)
	if s2.Entries != s.Entries-1 || s2.Expired != s.Expired+1 {
		t.Fatalf("Purge: %+v then %+v", s, s2)
	}

	// SetTag is not acorn's.
	err = c.SetTag("a", "name", "v")
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "PutWith") {
		t.Fatalf("SetTag: %v", err)
	}
	tIntegrity(t, c)
}

func TestClosed(t *testing.T) {
	c, err := NewCache(NewCacheOpts{})
	tNoErr(t, err, "NewCache")
	tNoErr(t, c.Put("k", []byte("v")), "Put")
	blob := c.NewBlobRef("k")
	tNoErr(t, c.Close(), "Close")
	tNoErr(t, c.Close(), "second Close")
	b := make([]byte, 1)
	nop := func(*Tx) error { return nil }
	for name, err := range map[string]error{
		"Put":                 c.Put("k", nil),
		"PutWith":             c.PutWith("k", nil, PutOpts{}),
		"ReadFull":            tErrOf(c.ReadFull("k", b)),
		"ReadAll":             tErrOf(c.ReadAll("k", nil)),
		"Delete":              c.Delete("k"),
		"LastUsed":            tErrOf(c.LastUsed("k")),
		"Tx":                  c.Tx(nop),
		"TxImmediate":         c.TxImmediate(nop),
		"GetCapacityErr":      tErrOf2(c.GetCapacityErr()),
		"SetCapacity":         c.SetCapacity(10),
		"Stats":               tErrOf(c.Stats()),
		"Evictions":           tErrOf(c.Evictions(0)),
		"DeleteTag":           tErrOf(c.DeleteTag("x")),
		"Purge":               c.Purge(),
		"Flush":               c.Flush(),
		"OpenPinned":          tErrOf(c.OpenPinned("k")),
		"OpenPinnedReadOnly":  tErrOf(c.OpenPinnedReadOnly("k")),
		"Create":              tErrOf(c.Create("k", CreateOpts{Length: 1})),
		"Blob.ReadAt":         tErrOf(blob.ReadAt(b, 0)),
		"Blob.WriteAt":        tErrOf(blob.WriteAt(b, 0)),
		"BlobWithLength":      tErrOf(c.BlobWithLength("n", 1).WriteAt(b, 0)),
		"Blob.Size":           tErrOf(blob.Size()),
		"Blob.Delete":         blob.Delete(),
		"Blob.LastUsed":       tErrOf(blob.LastUsed()),
		"OpenWithLength.Size": tErrOf(c.OpenWithLength("k", 1).Size()),
	} {
		if err != ErrClosed {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	func() {
		defer func() {
			if r := recover(); r != ErrClosed {
				t.Errorf("GetCapacity after Close panicked with %v, want ErrClosed", r)
			}
		}()
		c.GetCapacity()
	}()
	if err := c.SetTag("k", "n", 1); !errors.Is(err, ErrNotSupported) {
		t.Errorf("SetTag after Close: %v", err)
	}
}

// TestEndedTx: a Tx, and a blob pinned in it, used after the transaction
// ended give ErrClosed, not the connection's error.
func TestEndedTx(t *testing.T) {
	c, err := NewCache(NewCacheOpts{})
	tNoErr(t, err, "NewCache")
	defer c.Close()
	var kept *Tx
	var pb *PinnedBlob
	tNoErr(t, c.TxImmediate(func(tx *Tx) error {
		kept = tx
		var err error
		pb, err = tx.Create("k", CreateOpts{Length: 4})
		return err
	}), "TxImmediate")
	b := make([]byte, 1)
	for name, err := range map[string]error{
		"Put":                c.Put("x", nil), // the Cache itself is open
		"Tx.Put":             kept.Put("k", nil),
		"Tx.PutWith":         kept.PutWith("k", nil, PutOpts{}),
		"Tx.ReadFull":        tErrOf(kept.ReadFull("k", b)),
		"Tx.ReadAll":         tErrOf(kept.ReadAll("k", nil)),
		"Tx.Delete":          kept.Delete("k"),
		"Tx.LastUsed":        tErrOf(kept.LastUsed("k")),
		"Tx.Create":          tErrOf(kept.Create("k", CreateOpts{Length: 1})),
		"Tx.OpenPinned":      tErrOf(kept.OpenPinned("k")),
		"PinnedBlob.ReadAt":  tErrOf(pb.ReadAt(b, 0)),
		"PinnedBlob.WriteAt": tErrOf(pb.WriteAt(b, 0)),
		"PinnedBlob.Length":  tErrOf(pb.LengthErr()),
	} {
		want := ErrClosed
		if name == "Put" {
			want = nil
		}
		if err != want {
			t.Errorf("%s after the transaction: %v, want %v", name, err, want)
		}
	}
}

func tErrOf[T any](_ T, err error) error { return err }

func tErrOf2[A, B any](_ A, _ B, err error) error { return err }

// TestGoroutines: 8 goroutines on one Cache, on a file and in memory, each
// with keys of its own and keys all share, checking every answer.
func TestGoroutines(t *testing.T) {
	for _, mem := range []bool{false, true} {
		name := "file"
		if mem {
			name = "memory"
		}
		t.Run(name, func(t *testing.T) { tGoroutines(t, mem) })
	}
}

func tGoroutines(t *testing.T, memory bool) {
	const workers, rounds, region = 8, 25, 512
	c := tOpen(t, NewCacheOpts{NewConnOpts: NewConnOpts{Memory: memory}})
	hashes := tHashes(7, workers)
	shared := c.BlobWithLength("shared", workers*region)
	tNoErr(t, c.Put("counter", []byte("0")), "Put")
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			errs <- tWorker(c, shared, g, rounds, region, hashes[g])
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every goroutine's last write to its region of the shared blob is there.
	want := make([]byte, workers*region)
	for g := 0; g < workers; g++ {
		copy(want[g*region:], tValue(fmt.Sprint("region", g, rounds-1), region))
	}
	tWantValue(t, c, "shared", want)
	if got := tReadAll(t, c, "counter"); string(got) != fmt.Sprint(workers*rounds) {
		t.Fatalf("counter %s after %d increments", got, workers*rounds)
	}
	if s := tStats(t, c); s.Entries != workers*rounds+3 {
		t.Fatalf("Stats %+v; want %d entries", s, workers*rounds+3)
	}
	tIntegrity(t, c)
}

// tWorker is one goroutine of TestGoroutines.
func tWorker(c *Cache, shared Blob, g, rounds, region int, hash [20]byte) error {
	for i := 0; i < rounds; i++ {
		k := tKey(hash, uint32(i)<<14)
		v := tValue(k, 100+g*10+i)
		if err := c.Put(k, v); err != nil {
			return fmt.Errorf("goroutine %d Put: %w", g, err)
		}
		if got, err := c.ReadAll(k, nil); err != nil || !bytes.Equal(got, v) {
			return fmt.Errorf("goroutine %d ReadAll %q = %d bytes, %v", g, k, len(got), err)
		}
		// Its own region of the shared blob (made by whichever goroutine
		// writes first), written then read back.
		piece := tValue(fmt.Sprint("region", g, i), region)
		if n, err := shared.WriteAt(piece, int64(g*region)); n != region || err != nil {
			return fmt.Errorf("goroutine %d WriteAt = %d, %v", g, n, err)
		}
		b := make([]byte, region)
		if n, err := shared.ReadAt(b, int64(g*region)); n != region || err != nil || !bytes.Equal(b, piece) {
			return fmt.Errorf("goroutine %d ReadAt of its region = %d, %v, equal %v", g, n, err, bytes.Equal(b, piece))
		}
		// A key every goroutine sets: whatever is read is one whole value.
		if err := c.Put("common", []byte(fmt.Sprintf("%d:%d:%s", g, i, tValue(fmt.Sprint(g, i), 50)))); err != nil {
			return fmt.Errorf("goroutine %d Put common: %w", g, err)
		}
		got, err := c.ReadAll("common", nil)
		if err != nil {
			return fmt.Errorf("goroutine %d ReadAll common: %w", g, err)
		}
		var gg, ii int
		if _, err := fmt.Sscanf(string(got), "%d:%d:", &gg, &ii); err != nil ||
			!bytes.HasSuffix(got, tValue(fmt.Sprint(gg, ii), 50)) {
			return fmt.Errorf("goroutine %d read a torn common value %q", g, got)
		}
		// An increment in a transaction of the shared counter.
		err = c.TxImmediate(func(tx *Tx) error {
			b, err := tx.ReadAll("counter", nil)
			if err != nil {
				return err
			}
			var n int
			fmt.Sscan(string(b), &n)
			return tx.Put("counter", []byte(fmt.Sprint(n+1)))
		})
		if err != nil {
			return fmt.Errorf("goroutine %d increment: %w", g, err)
		}
		// A read-only Tx sees its own key whole.
		err = c.Tx(func(tx *Tx) error {
			got, err := tx.ReadAll(k, nil)
			if err != nil || !bytes.Equal(got, v) {
				return fmt.Errorf("tx.ReadAll %q = %d bytes, %v", k, len(got), err)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("goroutine %d: %w", g, err)
		}
	}
	return nil
}

// TestWALSize: writing pieces into one value keeps the -wal file small,
// against a plain table doing the same writes (each an UPDATE of the whole
// value to the same bytes).  The ratio is logged.
func TestWALSize(t *testing.T) {
	const size, piece = 1 << 20, 16 << 10
	dir := t.TempDir()
	c := tOpen(t, tPathOpts(filepath.Join(dir, "cache.db")))
	tNoErr(t, c.Put("v", make([]byte, size)), "Put")
	blob := c.NewBlobRef("v")
	want := make([]byte, size)
	for off := 0; off < size; off += piece {
		p := tValue(fmt.Sprint("p", off), piece)
		copy(want[off:], p)
		if n, err := blob.WriteAt(p, int64(off)); n != piece || err != nil {
			t.Fatalf("WriteAt %d = %d, %v", off, n, err)
		}
	}
	tWantValue(t, c, "v", want)
	st, err := os.Stat(filepath.Join(dir, "cache.db-wal"))
	tNoErr(t, err, "stat -wal")
	cacheWAL := st.Size()

	plainPath := filepath.Join(dir, "plain.db")
	db, err := sql.Open(DriverName, plainPath)
	tNoErr(t, err, "sql.Open")
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{`PRAGMA journal_mode = wal`, `PRAGMA synchronous = 0`,
		`CREATE TABLE plain(k TEXT PRIMARY KEY, v BLOB)`, `INSERT INTO plain VALUES ('v', zeroblob(1048576))`} {
		_, err := db.Exec(q)
		tNoErr(t, err, q)
	}
	for off := 0; off < size; off += piece {
		_, err := db.Exec(`UPDATE plain SET v = CAST(substr(v, 1, ?1) || ?2 || substr(v, ?1 + length(?2) + 1) AS BLOB) WHERE k = 'v'`,
			off, tValue(fmt.Sprint("p", off), piece))
		tNoErr(t, err, "UPDATE")
	}
	var got []byte
	tNoErr(t, db.QueryRow(`SELECT v FROM plain`).Scan(&got), "SELECT")
	if !bytes.Equal(got, want) {
		t.Fatalf("the plain table's value differs")
	}
	st, err = os.Stat(plainPath + "-wal")
	tNoErr(t, err, "stat plain -wal")
	plainWAL := st.Size()
	t.Logf("-wal after %d writes of %d KiB into a %d KiB value: cache %d bytes, plain table %d bytes (%.1f times)",
		size/piece, piece>>10, size>>10, cacheWAL, plainWAL, float64(plainWAL)/float64(cacheWAL))
	if cacheWAL > 4<<20 {
		t.Fatalf("the cache's -wal holds %d bytes after writing %d bytes in pieces", cacheWAL, size)
	}
	// SQLite overwrites a row of the same size in place, writing only the
	// overflow pages that changed: the plain table's -wal is about as
	// small.  The cache's must not be much larger.
	if cacheWAL > plainWAL*3/2 {
		t.Fatalf("the cache's -wal (%d bytes) is more than 1.5 times the plain table's (%d)", cacheWAL, plainWAL)
	}
}

func TestTinyBenchInsert(t *testing.T) {
	q, args := BenchQuery(BenchParams{})
	if q != "SELECT "+benchColumns+" FROM bench_insert" || len(args) != 0 {
		t.Fatalf("BenchQuery of no parameters = %q, %v", q, args)
	}
	q, args = BenchQuery(BenchParams{
		ID: []string{"uuid7_blob"}, Threads: []int{1, 2}, Mutex: []bool{true, false},
		Rows: 50, Seconds: 1.5, Storage: "memory", Dir: "/tmp",
	})
	wantQ := "SELECT " + benchColumns + " FROM bench_insert WHERE id IN (?) AND threads IN (?, ?) AND mutex IN (?, ?)" +
		" AND rows = ? AND seconds = ? AND storage = ? AND dir = ?"
	wantArgs := []any{"uuid7_blob", 1, 2, 1, 0, 50, 1.5, "memory", "/tmp"}
	if q != wantQ || !reflect.DeepEqual(args, wantArgs) {
		t.Fatalf("BenchQuery =\n%q %v\nwant\n%q %v", q, args, wantQ, wantArgs)
	}

	res, err := BenchInsert(context.Background(), nil, BenchParams{Rows: 50, Threads: []int{1, 2}, Dir: t.TempDir()})
	tNoErr(t, err, "BenchInsert")
	if len(res) != 2 {
		t.Fatalf("BenchInsert gave %d results, want 2: %+v", len(res), res)
	}
	for i, r := range res {
		if r.Threads != i+1 || r.RowsWritten != 50 || r.Rows != 50 || r.SQLiteVersion == "" || r.Elapsed <= 0 {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	// On a pool of the caller's; a cancelled context stops it.
	db, err := sql.Open(DriverName, ":memory:")
	tNoErr(t, err, "sql.Open")
	defer db.Close()
	// Where bench_insert gives NULL, -1: no fsync_us and no WAL columns in
	// memory, no rates for a run that wrote nothing.
	res, err = BenchInsert(context.Background(), db, BenchParams{Rows: 20, Storage: "memory", Mutex: []bool{true}})
	if err != nil || len(res) != 1 || !res[0].Mutex || res[0].RowsWritten != 20 {
		t.Fatalf("BenchInsert on a pool = %+v, %v", res, err)
	}
	if r := res[0]; r.FsyncUs != -1 || r.WALBytesMax != -1 || r.WALBytesEnd != -1 || r.Checkpoints != -1 ||
		r.CheckpointsBlocked != -1 || r.WritesPerSec <= 0 || r.P50Us <= 0 {
		t.Fatalf("BenchInsert in memory: %+v", r)
	}
	res, err = BenchInsert(context.Background(), db, BenchParams{Rows: 20, Journal: []string{"delete"}, Dir: t.TempDir()})
	if err != nil || len(res) != 1 || res[0].WALBytesMax != -1 || res[0].FsyncUs <= 0 {
		t.Fatalf("BenchInsert with a rollback journal = %+v, %v", res, err)
	}
	res, err = BenchInsert(context.Background(), db, BenchParams{Rows: 20, Seconds: 1e-9, Storage: "memory"})
	if err != nil || len(res) != 1 || res[0].RowsWritten != 0 || res[0].WritesPerSec != -1 || res[0].MaxUs != -1 {
		t.Fatalf("BenchInsert of a run that wrote nothing = %+v, %v", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := BenchInsert(ctx, db, BenchParams{Rows: 20}); !errors.Is(err, context.Canceled) {
		t.Fatalf("BenchInsert with a cancelled context: %v", err)
	}
	_, err = BenchInsert(context.Background(), db, BenchParams{Rows: 20, ID: []string{"nope"}})
	if err == nil {
		t.Fatalf("BenchInsert with a bad id: no error")
	}
}

// TestTxBusy: a transaction that cannot get the write lock, or cannot
// commit, within BusyTimeout fails saying so, is rolled back, and gives its
// connection back.
func TestTxBusy(t *testing.T) {
	o := tPathOpts(tFile(t))
	o.SetJournalMode = "delete"
	o.BusyTimeout = time.Millisecond
	a := tOpen(t, o)
	b := tOpen(t, o)
	tNoErr(t, a.Put("k", []byte("v")), "Put")

	// b holds the write lock: a's BEGIN IMMEDIATE fails.
	err := b.TxImmediate(func(*Tx) error {
		return a.TxImmediate(func(*Tx) error { return errors.New("ran without the lock") })
	})
	tErrHas(t, err, "TxImmediate while another holds the write lock", "BEGIN IMMEDIATE", "database is locked")

	// b reads in a transaction: with a rollback journal, a's COMMIT waits
	// for it, and here fails; a's writes are rolled back.
	ro, err := b.OpenPinnedReadOnly("k")
	tNoErr(t, err, "OpenPinnedReadOnly")
	err = a.TxImmediate(func(tx *Tx) error { return tx.Put("n", []byte("x")) })
	tErrHas(t, err, "COMMIT while another reads", "COMMIT", "database is locked")
	tNoErr(t, ro.Close(), "Close")
	_, err = a.ReadAll("n", nil)
	tNotFound(t, err, "ReadAll of the Put whose COMMIT failed")
	for _, c := range []*Cache{a, b} {
		if n := c.DB().Stats().InUse; n != 0 {
			t.Fatalf("%d connections in use after the failed transactions", n)
		}
	}
	tNoErr(t, a.TxImmediate(func(tx *Tx) error { return tx.Put("n", []byte("x")) }), "TxImmediate once alone")
	tWantValue(t, b, "n", []byte("x"))
}

// TestNewCacheFailureRemovesTemporary: a NewCache of Path "" that fails
// leaves no temporary directory behind, as Close leaves none.
func TestNewCacheFailureRemovesTemporary(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	o := NewCacheOpts{}
	o.DontInitSchema = true
	_, err := NewCache(o)
	tErrHas(t, err, "DontInitSchema on a new temporary file", "no such table")
	c, err := NewCache(NewCacheOpts{})
	tNoErr(t, err, "NewCache")
	if left, _ := os.ReadDir(tmp); len(left) != 1 {
		t.Fatalf("TMPDIR holds %d entries with one Cache open, after a NewCache that failed", len(left))
	}
	tNoErr(t, c.Close(), "Close")
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("TMPDIR holds %v after Close", left)
	}
}

func TestErrorValues(t *testing.T) {
	if ErrNotFound.Error() != "not found" || !errors.Is(ErrNotFound, fs.ErrNotExist) || errors.Is(ErrNotFound, fs.ErrExist) {
		t.Fatalf("ErrNotFound %q", ErrNotFound)
	}
	wrapped := fmt.Errorf("get: %w", ErrNotFound)
	if !errors.Is(wrapped, fs.ErrNotExist) || !errors.Is(wrapped, ErrNotFound) {
		t.Fatalf("a wrapped ErrNotFound is not fs.ErrNotExist")
	}
	a, b := errors.New("first"), errors.New("second")
	if joinErr(nil, nil) != nil || joinErr(a, nil) != a || joinErr(nil, b) != b {
		t.Fatalf("joinErr with a nil")
	}
	j := joinErr(a, b)
	if j.Error() != "first; then: second" || !errors.Is(j, a) || errors.Unwrap(j) != a {
		t.Fatalf("joinErr(a, b) = %q", j)
	}
	if ErrClosed.Error() != "acorn: closed" || !errors.Is(ErrClosed, fs.ErrClosed) || !errors.Is(fmt.Errorf("x: %w", ErrClosed), ErrClosed) {
		t.Fatalf("ErrClosed %q is not fs.ErrClosed", ErrClosed)
	}
	fe := &ForeignValueError{Key: "k\x00", Kind: "INTEGER"}
	if fe.Error() != `acorn: the value of "k\x00" is INTEGER, not bytes` {
		t.Fatalf("ForeignValueError %q", fe)
	}
}

// TestIdleConnections: four connections in use at once all stay open when
// given back (database/sql would keep two), so goroutines do not make the
// pool open connections, loading acorn each time, again and again.
func TestIdleConnections(t *testing.T) {
	c, err := NewCache(NewCacheOpts{})
	tNoErr(t, err, "NewCache")
	defer c.Close()
	ctx := context.Background()
	var conns []*sql.Conn
	for i := 0; i < 4; i++ {
		k, err := c.DB().Conn(ctx)
		tNoErr(t, err, "Conn")
		conns = append(conns, k)
	}
	for _, k := range conns {
		tNoErr(t, k.Close(), "Conn.Close")
	}
	if s := c.DB().Stats(); s.Idle != 4 || s.MaxIdleClosed != 0 {
		t.Fatalf("after four connections given back: %d idle, %d closed as idle beyond the bound", s.Idle, s.MaxIdleClosed)
	}
}

// TestVersion: the package is the release of the acorn.so it loads, as
// built from the same tree (tests/acorn.bats holds Version to VERSION).
func TestVersion(t *testing.T) {
	db, err := sql.Open(DriverName, ":memory:")
	tNoErr(t, err, "sql.Open")
	defer db.Close()
	var v string
	tNoErr(t, db.QueryRow("SELECT acorn_version()").Scan(&v), "acorn_version()")
	if v != "v"+Version {
		t.Fatalf("acorn_version() = %q, the package's Version %q", v, Version)
	}
}
