package acorn

// The cache: squirrel's Cache on a cache virtual table.
//
// Invariants, asserted by the tests:
//   - c.db is the pool of every call made outside a Tx; each of its
//     connections has acorn loaded and the pragmas of c.opts set (connect).
//   - c.sql holds the statements of c.table, its name quoted once, built at
//     NewCache and never changed.
//   - A Tx or a pinned blob holds one connection of c.db (*sql.Conn) from its
//     BEGIN to its COMMIT or ROLLBACK, and nothing else uses that connection.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// NewConnOpts says which database a Cache opens, as squirrel's does.
type NewConnOpts struct {
	// Path is the database file.  Empty: a new file in a temporary
	// directory, removed by Close (squirrel: a private temporary database).
	Path string
	// Memory: an in-memory database (SQLite's memdb VFS) that the Cache's
	// connections share, gone when the Cache closes.  Path is then ignored.
	Memory bool
	// MaxBlobSize is squirrel's bound on one chunk of a value.  acorn stores
	// a value as one BLOB, so a non-zero MaxBlobSize is refused: bound the
	// length of values with LengthLimit.
	MaxBlobSize int64
}

// InitDbOpts are settings of the database file, applied when the Cache opens.
type InitDbOpts struct {
	// SetAutoVacuum: "none", "full" or "incremental" ("" leaves it).
	// SQLite applies it only before the file's first table exists;
	// "incremental" gives pointer-map pages, which make ReadAt and WriteAt
	// near the end of a large value cheap (docs/cache.md, "Values written in
	// pieces").
	SetAutoVacuum string
	// RequireAutoVacuum, if not nil, fails NewCache unless PRAGMA auto_vacuum
	// gives it (0, 1, 2, or "none", "full", "incremental").
	RequireAutoVacuum any
	// PageSize, if not 0, is set before anything else (a new file only).
	PageSize int
	// DontInitSchema: do not create the cache table; it must exist.
	DontInitSchema bool
	// NoTriggers is accepted and means nothing: acorn has no triggers.
	NoTriggers bool
	// Capacity is the most bytes of keys and values the table holds.  If
	// above 0, it is the capacity of a new table and replaces an existing
	// table's.  0: a new table is unbounded (2^62 bytes), as squirrel's is
	// without one; below 0 (squirrel: no bound), the table is made or made
	// unbounded.
	// squirrel counts the pages of the whole file; acorn counts entries.
	Capacity int64
}

// InitConnOpts are pragmas set on every connection the Cache opens.
type InitConnOpts struct {
	// SetSynchronous is PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
	// As in squirrel, it is always set, and the zero value is OFF: a crash of
	// the program loses nothing, but a power cut or a crash of the system can
	// corrupt the file.  In WAL mode, 1 keeps the file whole through those
	// (the last commits may be lost), 2 keeps every commit too.
	SetSynchronous int
	// SetJournalMode: "wal", "delete", "truncate", "persist", "memory" or
	// "off".  "" is WAL for a file (squirrel leaves the mode as it is: acorn
	// sets WAL, as its other faces do, for several processes on one file) and
	// the memdb default for Memory.
	SetJournalMode string
	// MmapSizeOk: set PRAGMA mmap_size to MmapSize (SQLite's default if < 0).
	MmapSizeOk bool
	MmapSize   int64
	// SetLockingMode: "normal" or "exclusive" ("" is normal).  Exclusive
	// keeps the file locked by one connection: the Cache then opens one.
	SetLockingMode string
	// CacheSize, if not nil, is PRAGMA cache_size (pages, or KiB if < 0).
	CacheSize *int64
	// LengthLimit, if not nil, is the connection's SQLITE_LIMIT_LENGTH: the
	// largest value (and SQL statement) in bytes.
	LengthLimit *int
}

// NewCacheOpts configures NewCache: squirrel's three option structs, and
// acorn's own settings after them.
type NewCacheOpts struct {
	NewConnOpts
	InitDbOpts
	InitConnOpts

	// Table is the cache table's name, "cache" if empty (the name Python's,
	// Node's and Ruby's faces use, so they share the file's entries).
	Table string
	// Policy: "lru" (the default) or "fifo"; applied when the table is made.
	Policy string
	// DefaultTTL, if not 0, is the table's default_ttl: entries set without
	// a TTL expire after it (whole seconds).
	DefaultTTL time.Duration
	// MaxEntries, if not 0, bounds the number of entries.
	MaxEntries int64
	// Feed, if not 0, keeps the latest Feed removals for Evictions.
	Feed int64
	// BusyTimeout is how long a call waits for another connection's lock
	// before it fails with "database is locked"; 0 is 5 seconds.
	BusyTimeout time.Duration
}

// Cache is a cache table in a SQLite file, with squirrel's methods.  It is
// safe for use by several goroutines; several processes may open the same
// file at once.
type Cache struct {
	db      *sql.DB
	opts    NewCacheOpts
	table   string
	sql     statements
	stmts   stmtCache // the statements of run, prepared on the pool
	run     runner    // runs on the pool: every call outside a Tx
	tempDir string    // removed by Close (Path "")
	keep    *sql.Conn // holds a Memory database open
	closed  atomic.Bool
}

// unbounded is the capacity of a table made with Capacity 0: acorn's most.
const unbounded int64 = 1 << 62

var memSeq atomic.Int64

// NewCache opens (and if need be makes) the cache table opts.Table in the
// database opts names.
func NewCache(opts NewCacheOpts) (c *Cache, err error) {
	if err = checkOpts(&opts); err != nil {
		return nil, err
	}
	c = &Cache{opts: opts, table: opts.Table}
	c.sql = makeStatements(opts.Table)
	ext, err := FindExtension()
	if err != nil {
		return nil, err
	}
	path := opts.Path
	busyMs := strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)
	var dsn string
	switch {
	case opts.Memory:
		dsn = fmt.Sprintf("file:/acorn-go-%d-%d?vfs=memdb&_busy_timeout=%s", os.Getpid(), memSeq.Add(1), busyMs)
	default:
		if path == "" {
			if c.tempDir, err = os.MkdirTemp("", "acorn-go-"); err != nil {
				return nil, fmt.Errorf("acorn: NewCache: %w", err)
			}
			path = filepath.Join(c.tempDir, "cache.db")
		}
		if strings.ContainsAny(path, "?#") {
			return nil, fmt.Errorf("acorn: NewCache: Path %q: a path with '?' or '#' cannot be opened through the driver", path)
		}
		dsn = path + "?_busy_timeout=" + busyMs
	}
	c.db = sql.OpenDB(&connector{
		d:   &sqlite3.SQLiteDriver{Extensions: []string{ext}, ConnectHook: c.connect},
		dsn: dsn,
	})
	c.run = poolRunner(c.db, &c.stmts)
	opened := c // c is nil by the time a failing return runs the defer
	defer func() {
		if err != nil {
			opened.Close()
			c = nil
		}
	}()
	// database/sql keeps 2 idle connections unless told: with more
	// goroutines, each connection beyond them would be closed after its call
	// and opened again (acorn loaded, the pragmas set) for the next.
	c.db.SetMaxIdleConns(idleConns())
	if strings.EqualFold(opts.SetLockingMode, "exclusive") {
		c.db.SetMaxOpenConns(1)
	}
	if opts.Memory && c.db.Stats().MaxOpenConnections != 1 {
		// SQLite drops a memdb database when its last connection closes:
		// one connection is held until Close.  (With exclusive locking the
		// pool's one connection stays idle in it instead.)
		if c.keep, err = c.db.Conn(context.Background()); err != nil {
			return nil, fmt.Errorf("acorn: NewCache: %w", err)
		}
	}
	if err = c.initTable(); err != nil {
		return nil, err
	}
	return c, nil
}

func checkOpts(o *NewCacheOpts) error {
	if o.Table == "" {
		o.Table = "cache"
	}
	if strings.ContainsAny(o.Table, ".\x00") {
		return fmt.Errorf("acorn: NewCache: Table %q: a table name must not contain '.' or NUL", o.Table)
	}
	if o.MaxBlobSize != 0 {
		return fmt.Errorf("acorn: NewCache: MaxBlobSize: %w: a value is stored as one BLOB; bound values with LengthLimit", ErrNotSupported)
	}
	if o.SetSynchronous < 0 || o.SetSynchronous > 3 {
		return fmt.Errorf("acorn: NewCache: SetSynchronous %d; expected 0 (OFF), 1 (NORMAL), 2 (FULL) or 3 (EXTRA)", o.SetSynchronous)
	}
	if !oneOf(o.SetJournalMode, "", "wal", "delete", "truncate", "persist", "memory", "off") {
		return fmt.Errorf("acorn: NewCache: SetJournalMode %q; expected wal, delete, truncate, persist, memory, off or \"\"", o.SetJournalMode)
	}
	if !oneOf(o.SetLockingMode, "", "normal", "exclusive") {
		return fmt.Errorf("acorn: NewCache: SetLockingMode %q; expected normal, exclusive or \"\"", o.SetLockingMode)
	}
	if !oneOf(o.SetAutoVacuum, "", "none", "full", "incremental") {
		return fmt.Errorf("acorn: NewCache: SetAutoVacuum %q; expected none, full, incremental or \"\"", o.SetAutoVacuum)
	}
	if !oneOf(o.Policy, "", "lru", "fifo") {
		return fmt.Errorf("acorn: NewCache: Policy %q; expected lru, fifo or \"\"", o.Policy)
	}
	if o.PageSize != 0 && (o.PageSize < 512 || o.PageSize > 65536 || o.PageSize&(o.PageSize-1) != 0) {
		return fmt.Errorf("acorn: NewCache: PageSize %d; expected a power of two from 512 to 65536, or 0", o.PageSize)
	}
	for _, n := range []struct {
		name string
		v    int64
	}{{"MaxEntries", o.MaxEntries}, {"Feed", o.Feed},
		{"DefaultTTL", int64(o.DefaultTTL)}, {"BusyTimeout", int64(o.BusyTimeout)}} {
		if n.v < 0 {
			return fmt.Errorf("acorn: NewCache: %s %d must not be negative", n.name, n.v)
		}
	}
	if o.DefaultTTL%time.Second != 0 {
		return fmt.Errorf("acorn: NewCache: DefaultTTL %v; expected 0 or whole seconds (the table keeps seconds)", o.DefaultTTL)
	}
	if o.BusyTimeout%time.Millisecond != 0 {
		return fmt.Errorf("acorn: NewCache: BusyTimeout %v; expected 0 (5 s) or whole milliseconds", o.BusyTimeout)
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 5 * time.Second
	}
	return nil
}

func oneOf(s string, allowed ...string) bool {
	for _, a := range allowed {
		if strings.EqualFold(s, a) {
			return true
		}
	}
	return false
}

// connect sets the pragmas of c.opts on a new connection (the ConnectHook).
func (c *Cache) connect(conn *sqlite3.SQLiteConn) error {
	o := &c.opts
	var pragmas []string
	if o.PageSize != 0 {
		pragmas = append(pragmas, fmt.Sprintf("page_size = %d", o.PageSize))
	}
	if o.SetAutoVacuum != "" {
		pragmas = append(pragmas, "auto_vacuum = "+o.SetAutoVacuum)
	}
	if o.SetLockingMode != "" {
		pragmas = append(pragmas, "locking_mode = "+o.SetLockingMode)
	}
	pragmas = append(pragmas, fmt.Sprintf("synchronous = %d", o.SetSynchronous))
	if o.MmapSizeOk && o.MmapSize >= 0 {
		pragmas = append(pragmas, fmt.Sprintf("mmap_size = %d", o.MmapSize))
	}
	if o.CacheSize != nil {
		pragmas = append(pragmas, fmt.Sprintf("cache_size = %d", *o.CacheSize))
	}
	for _, p := range pragmas {
		if _, err := conn.Exec("PRAGMA "+p, nil); err != nil {
			return fmt.Errorf("acorn: PRAGMA %s: %w", p, err)
		}
	}
	mode := strings.ToLower(o.SetJournalMode)
	if mode == "" && !o.Memory {
		mode = "wal"
	}
	if mode != "" {
		got, err := pragmaText(conn, "PRAGMA journal_mode = "+mode)
		if err != nil {
			return fmt.Errorf("acorn: PRAGMA journal_mode = %s: %w", mode, err)
		}
		if !strings.EqualFold(got, mode) {
			return fmt.Errorf("acorn: PRAGMA journal_mode = %s gave %q (an in-memory database keeps its journal in memory)", mode, got)
		}
	}
	if o.LengthLimit != nil {
		conn.SetLimit(sqlite3.SQLITE_LIMIT_LENGTH, *o.LengthLimit)
	}
	return nil
}

func pragmaText(conn *sqlite3.SQLiteConn, q string) (string, error) {
	rows, err := conn.Query(q, nil)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return "", err
	}
	return fmt.Sprint(v[0]), nil
}

// initTable makes the table (unless DontInitSchema), checks it is a cache
// table, and gives an existing table the non-zero settings of c.opts.
func (c *Cache) initTable() error {
	o := &c.opts
	var capacity int64
	var hits sql.NullInt64 // NULL under fifo, which counts no hits
	stats := func() error {
		return c.db.QueryRow("SELECT capacity, hits FROM cache_stats(?)", c.table).Scan(&capacity, &hits)
	}
	probe := stats()
	existed := probe == nil
	if !existed && !o.DontInitSchema {
		args := []string{fmt.Sprintf("capacity = %d", capacityArg(o.Capacity))}
		if o.Policy != "" {
			args = append(args, "policy = "+strings.ToLower(o.Policy))
		}
		if o.DefaultTTL != 0 {
			args = append(args, fmt.Sprintf("default_ttl = %d", int64(o.DefaultTTL/time.Second)))
		}
		if o.MaxEntries != 0 {
			args = append(args, fmt.Sprintf("max_entries = %d", o.MaxEntries))
		}
		if o.Feed != 0 {
			args = append(args, fmt.Sprintf("feed = %d", o.Feed))
		}
		q := fmt.Sprintf("CREATE VIRTUAL TABLE IF NOT EXISTS %s USING cache(%s)", quoteIdent(c.table), strings.Join(args, ", "))
		if _, err := c.db.Exec(q); err != nil {
			return fmt.Errorf("acorn: NewCache: %s: %w", q, err)
		}
		probe = stats()
	}
	if probe != nil {
		return fmt.Errorf("acorn: NewCache: %w", probe)
	}
	if existed && o.Policy != "" {
		if is := map[bool]string{true: "lru", false: "fifo"}[hits.Valid]; !strings.EqualFold(o.Policy, is) {
			return fmt.Errorf("acorn: NewCache: Policy %q, but the table %q is %s: a table's policy is chosen when it is made", o.Policy, c.table, is)
		}
	}
	if existed {
		set := []struct {
			cmd string
			v   int64
			now bool
		}{
			{"capacity", capacityArg(o.Capacity), o.Capacity != 0 && capacityArg(o.Capacity) != capacity},
			{"default_ttl", int64(o.DefaultTTL / time.Second), o.DefaultTTL != 0},
			{"max_entries", o.MaxEntries, o.MaxEntries != 0},
			{"feed", o.Feed, o.Feed != 0},
		}
		for _, s := range set {
			if s.now {
				if err := c.command(s.cmd, s.v); err != nil {
					return fmt.Errorf("acorn: NewCache: %w", err)
				}
			}
		}
	}
	if o.RequireAutoVacuum != nil {
		var got int64
		if err := c.db.QueryRow("PRAGMA auto_vacuum").Scan(&got); err != nil {
			return fmt.Errorf("acorn: NewCache: %w", err)
		}
		names := []string{"none", "full", "incremental"}
		want := strings.ToLower(fmt.Sprint(o.RequireAutoVacuum))
		if want != strconv.FormatInt(got, 10) && (got < 0 || got > 2 || want != names[got]) {
			return fmt.Errorf("acorn: NewCache: RequireAutoVacuum %v, but the file's auto_vacuum is %d (%s)", o.RequireAutoVacuum, got, names[got])
		}
	}
	return nil
}

// command runs one of the table's commands: INSERT INTO t(t, value) VALUES (cmd, v).
func (c *Cache) command(cmd string, v any) error {
	if _, err := c.db.Exec(c.sql.command, cmd, v); err != nil {
		return fmt.Errorf("%s command: %w", cmd, err)
	}
	return nil
}

// connector opens the Cache's connections with its own ConnectHook.
type connector struct {
	d   *sqlite3.SQLiteDriver
	dsn string
}

func (k *connector) Connect(context.Context) (driver.Conn, error) { return k.d.Open(k.dsn) }
func (k *connector) Driver() driver.Driver                        { return k.d }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// DB is the Cache's pool of connections, each with acorn loaded and the
// Cache's pragmas set: for SQL of your own on the same file.
func (c *Cache) DB() *sql.DB { return c.db }

// Close closes the Cache's connections (and removes the database of a
// Cache opened with Path "" or Memory).  Calls after it return ErrClosed.
func (c *Cache) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.stmts.close()
	var err error
	if c.keep != nil {
		err = c.keep.Close()
	}
	err = joinErr(err, c.db.Close())
	if c.tempDir != "" {
		err = joinErr(err, os.RemoveAll(c.tempDir))
	}
	return err
}

// GetCapacity returns the table's capacity in bytes; ok is false for an
// unbounded table (made with Capacity 0), as squirrel's is without a
// capacity.  It panics on an error, as squirrel's does; GetCapacityErr
// returns it.
func (c *Cache) GetCapacity() (capacity int64, ok bool) {
	capacity, ok, err := c.GetCapacityErr()
	if err != nil {
		panic(err)
	}
	return capacity, ok
}

// GetCapacityErr is GetCapacity with its error.
func (c *Cache) GetCapacityErr() (capacity int64, ok bool, err error) {
	if c.closed.Load() {
		return 0, false, ErrClosed
	}
	if err = c.db.QueryRow("SELECT capacity FROM cache_stats(?)", c.table).Scan(&capacity); err != nil {
		return 0, false, fmt.Errorf("acorn: GetCapacity: %w", err)
	}
	if capacity >= unbounded {
		return 0, false, nil
	}
	return capacity, true, nil
}

// SetCapacity sets the table's capacity in bytes (0 or below: unbounded),
// evicting at once, in LRU order, what no longer fits.  Every process sees it.
func (c *Cache) SetCapacity(capacity int64) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if err := c.command("capacity", capacityArg(capacity)); err != nil {
		return fmt.Errorf("acorn: SetCapacity: %w", err)
	}
	return nil
}

// idleConns is how many idle connections a Cache keeps: enough for the
// goroutines that can run at once.
func idleConns() int {
	if n := 2 * runtime.GOMAXPROCS(0); n > 4 {
		return n
	}
	return 4
}

// capacityArg is the table's capacity for a Capacity or SetCapacity: 0 or
// below is unbounded.
func capacityArg(capacity int64) int64 {
	if capacity <= 0 {
		return unbounded
	}
	return capacity
}

// stmtCache keeps one *sql.Stmt per query, made by the prepare of the
// runner it serves.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func (s *stmtCache) get(q string, prepare func(string) (*sql.Stmt, error)) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[q]; ok {
		return st, nil
	}
	st, err := prepare(q)
	if err != nil {
		return nil, err
	}
	if s.m == nil {
		s.m = map[string]*sql.Stmt{}
	}
	s.m[q] = st
	return st, nil
}

func (s *stmtCache) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.m {
		st.Close()
	}
	s.m = nil
}
