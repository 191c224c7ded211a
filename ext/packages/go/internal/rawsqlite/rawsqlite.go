// Package rawsqlite is squirrel's storage design written by hand, a
// benchmark baseline for acorn's Go package (bench_test.go): not a cache to
// use.
//
// squirrel (github.com/anacrolix/squirrel) keeps a key in keys(key_id
// INTEGER PRIMARY KEY, key TEXT UNIQUE, length, create_time, last_used,
// access_count), indexed on (last_used, access_count, create_time,
// key_id) for its trimming, and the value apart, in rows of blobs, which it
// writes and reads with SQLite's incremental blob I/O (sqlite3_blob_open,
// sqlite3_blob_write, sqlite3_blob_read), and a use of a key updates its
// last_used and access_count.  squirrel maps a key to chunks of its value
// (1 MiB by default) through a third table; here a value is one row of
// blobs(blob_id INTEGER PRIMARY KEY, blob BLOB NOT NULL) with blob_id =
// key_id, as in bench/pieces.c.
//
// Debian's mattn/go-sqlite3 1.14.16 has no blob I/O (later versions wrap
// it), so DB reaches it through cgo, on the same libsqlite3 that mattn
// links.  SQLStore is the same design through database/sql, for the puts.
//
// A DB or SQLStore is one connection: not safe for concurrent use.
package rawsqlite

/*
#cgo LDFLAGS: -lsqlite3
#include <sqlite3.h>
#include <stdlib.h>

static int rsBindText(sqlite3_stmt *st, int i, _GoString_ s) {
	size_t n = _GoStringLen(s);
	return sqlite3_bind_text(st, i, n ? _GoStringPtr(s) : "", (int)n, SQLITE_TRANSIENT);
}

// rsStep steps st once: SQLITE_ROW with *a and *b its first two columns,
// or SQLITE_DONE (then st is reset), or an error (st reset).
static int rsStep(sqlite3_stmt *st, sqlite3_int64 *a, sqlite3_int64 *b) {
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*a = sqlite3_column_int64(st, 0);
		if (sqlite3_column_count(st) > 1) *b = sqlite3_column_int64(st, 1);
		return rc;
	}
	sqlite3_reset(st);
	return rc;
}

// rsRun runs st to its end and resets it: SQLITE_OK, or the error.
static int rsRun(sqlite3_stmt *st) {
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
	"unsafe"
)

// ErrNotFound is returned for a key with no entry; errors.Is(err,
// fs.ErrNotExist) is true of it.
var ErrNotFound = fmt.Errorf("rawsqlite: %w", fs.ErrNotExist)

// Options are the settings of a new connection.
type Options struct {
	PageSize    int    // 0: SQLite's default
	AutoVacuum  string // "none", "full" or "incremental", set before the first table; "": SQLite's default (none)
	JournalMode string // "": SQLite's default (delete; memory for ":memory:")
	LockingMode string // "": normal
	Synchronous int    // PRAGMA synchronous: 0 off, 1 normal, 2 full
	BusyTimeout time.Duration
	// Capacity, if not 0, bounds the bytes of the file's used pages, as
	// squirrel counts them ((page_count - freelist_count) * page_size): a
	// write transaction deletes the least recently used keys until they fit
	// before it commits (DB only).
	Capacity int64
}

// pragmas are the statements that set o, in the order squirrel sets them
// (auto_vacuum and page_size before the first table and before WAL).
func (o Options) pragmas() []string {
	var p []string
	if o.PageSize != 0 {
		p = append(p, fmt.Sprintf("PRAGMA page_size = %d", o.PageSize))
	}
	if o.AutoVacuum != "" {
		p = append(p, "PRAGMA auto_vacuum = "+o.AutoVacuum)
	}
	p = append(p, fmt.Sprintf("PRAGMA synchronous = %d", o.Synchronous))
	if o.JournalMode != "" {
		p = append(p, "PRAGMA journal_mode = "+o.JournalMode)
	}
	if o.LockingMode != "" {
		p = append(p, "PRAGMA locking_mode = "+o.LockingMode)
	}
	return p
}

const schema = `
CREATE TABLE IF NOT EXISTS keys(
  key_id INTEGER PRIMARY KEY,
  key TEXT UNIQUE,
  length INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  last_used INTEGER NOT NULL,
  access_count INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS keys_last_used ON keys(last_used, access_count, create_time, key_id);
CREATE TABLE IF NOT EXISTS blobs(blob_id INTEGER PRIMARY KEY, blob BLOB NOT NULL);`

// The statements of the design, shared with SQLStore.
const (
	sqlFind    = "SELECT key_id, length FROM keys WHERE key = ?1"
	sqlDelBlob = "DELETE FROM blobs WHERE blob_id = ?1"
	sqlDelKey  = "DELETE FROM keys WHERE key_id = ?1"
	sqlInsKey  = "INSERT INTO keys(key, length, create_time, last_used) VALUES (?1, ?2, ?3, ?3)"
	sqlTouch   = "UPDATE keys SET last_used = ?2, access_count = access_count + 1 WHERE key_id = ?1"
	sqlOldest  = "SELECT key_id FROM keys ORDER BY last_used, access_count, create_time LIMIT 1"
)

// DB is one connection holding the design, its statements prepared once.
type DB struct {
	db       *C.sqlite3
	capacity int64
	pageSize int64
	inTx     bool

	begin, beginImm, commit, rollback       *C.sqlite3_stmt
	find, delBlob, delKey, insKey, insBlob  *C.sqlite3_stmt
	touch, oldest, pageCount, freelistCount *C.sqlite3_stmt
}

// Open opens path (":memory:" for a private in-memory database), sets o
// and makes the tables if they are missing.
func Open(path string, o Options) (*DB, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	d := &DB{capacity: o.Capacity}
	// Serialized, as mattn opens its connections.
	flags := C.SQLITE_OPEN_READWRITE | C.SQLITE_OPEN_CREATE | C.SQLITE_OPEN_FULLMUTEX
	if rc := C.sqlite3_open_v2(cpath, &d.db, C.int(flags), nil); rc != C.SQLITE_OK {
		err := d.err(rc, "open "+path)
		C.sqlite3_close_v2(d.db)
		return nil, err
	}
	C.sqlite3_extended_result_codes(d.db, 1)
	C.sqlite3_busy_timeout(d.db, C.int(o.BusyTimeout.Milliseconds()))
	err := d.init(o)
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *DB) init(o Options) error {
	for _, p := range o.pragmas() {
		if err := d.Exec(p); err != nil {
			return err
		}
	}
	if o.JournalMode != "" {
		got, err := d.pragmaText("PRAGMA journal_mode")
		if err != nil {
			return err
		}
		if !strings.EqualFold(got, o.JournalMode) {
			return fmt.Errorf("rawsqlite: journal_mode %s gave %q", o.JournalMode, got)
		}
	}
	if err := d.Exec(schema); err != nil {
		return err
	}
	var err error
	if d.pageSize, err = d.PragmaInt("page_size"); err != nil {
		return err
	}
	for _, s := range []struct {
		p **C.sqlite3_stmt
		q string
	}{
		{&d.begin, "BEGIN"}, {&d.beginImm, "BEGIN IMMEDIATE"}, {&d.commit, "COMMIT"}, {&d.rollback, "ROLLBACK"},
		{&d.find, sqlFind}, {&d.delBlob, sqlDelBlob}, {&d.delKey, sqlDelKey}, {&d.insKey, sqlInsKey},
		{&d.insBlob, "INSERT INTO blobs(blob_id, blob) VALUES (?1, zeroblob(?2))"},
		{&d.touch, sqlTouch}, {&d.oldest, sqlOldest},
		{&d.pageCount, "PRAGMA page_count"}, {&d.freelistCount, "PRAGMA freelist_count"},
	} {
		if *s.p, err = d.prepare(s.q); err != nil {
			return err
		}
	}
	return nil
}

func (d *DB) statements() []*C.sqlite3_stmt {
	return []*C.sqlite3_stmt{d.begin, d.beginImm, d.commit, d.rollback, d.find, d.delBlob, d.delKey,
		d.insKey, d.insBlob, d.touch, d.oldest, d.pageCount, d.freelistCount}
}

// Close finalizes the statements and closes the connection.
func (d *DB) Close() error {
	if d.db == nil {
		return nil
	}
	for _, st := range d.statements() {
		C.sqlite3_finalize(st) // a no-op for nil
	}
	rc := C.sqlite3_close_v2(d.db)
	d.db = nil
	if rc != C.SQLITE_OK {
		return fmt.Errorf("rawsqlite: close: %s", C.GoString(C.sqlite3_errstr(rc)))
	}
	return nil
}

func (d *DB) err(rc C.int, what string) error {
	msg := C.GoString(C.sqlite3_errstr(rc))
	if d.db != nil {
		msg = C.GoString(C.sqlite3_errmsg(d.db))
	}
	return fmt.Errorf("rawsqlite: %s: %s (%d)", what, msg, int(rc))
}

func (d *DB) prepare(q string) (*C.sqlite3_stmt, error) {
	cq := C.CString(q)
	defer C.free(unsafe.Pointer(cq))
	var st *C.sqlite3_stmt
	if rc := C.sqlite3_prepare_v3(d.db, cq, -1, C.SQLITE_PREPARE_PERSISTENT, &st, nil); rc != C.SQLITE_OK {
		return nil, d.err(rc, "prepare "+q)
	}
	return st, nil
}

// Exec runs SQL text (several statements allowed), unprepared.
func (d *DB) Exec(q string) error {
	cq := C.CString(q)
	defer C.free(unsafe.Pointer(cq))
	if rc := C.sqlite3_exec(d.db, cq, nil, nil, nil); rc != C.SQLITE_OK {
		return d.err(rc, q)
	}
	return nil
}

func (d *DB) pragmaText(q string) (string, error) {
	st, err := d.prepare(q)
	if err != nil {
		return "", err
	}
	defer C.sqlite3_finalize(st)
	if rc := C.sqlite3_step(st); rc != C.SQLITE_ROW {
		return "", d.err(rc, q)
	}
	return C.GoString((*C.char)(unsafe.Pointer(C.sqlite3_column_text(st, 0)))), nil
}

// PragmaInt is the integer PRAGMA name gives (auto_vacuum: 0 none, 1 full,
// 2 incremental).
func (d *DB) PragmaInt(name string) (int64, error) {
	st, err := d.prepare("PRAGMA " + name)
	if err != nil {
		return 0, err
	}
	defer C.sqlite3_finalize(st)
	var v, unused C.sqlite3_int64
	if rc := C.rsStep(st, &v, &unused); rc != C.SQLITE_ROW {
		return 0, d.err(rc, "PRAGMA "+name)
	}
	return int64(v), nil
}

func (d *DB) run(st *C.sqlite3_stmt, what string) error {
	if rc := C.rsRun(st); rc != C.SQLITE_OK {
		return d.err(rc, what)
	}
	return nil
}

func (d *DB) bindKey(st *C.sqlite3_stmt, i int, key string) {
	C.rsBindText(st, C.int(i), key)
}

func bindInt(st *C.sqlite3_stmt, i int, v int64) {
	C.sqlite3_bind_int64(st, C.int(i), C.sqlite3_int64(v))
}

// txBegin begins a transaction: immediate takes the write lock first.
func (d *DB) txBegin(immediate bool) error {
	if d.inTx {
		return errors.New("rawsqlite: a transaction is open (a pinned blob not closed)")
	}
	st := d.begin
	if immediate {
		st = d.beginImm
	}
	if err := d.run(st, "BEGIN"); err != nil {
		return err
	}
	d.inTx = true
	return nil
}

// txEnd commits if err is nil (trimming first if write), else rolls back;
// it returns err, or the commit's.
func (d *DB) txEnd(err error, write bool) error {
	d.inTx = false
	if err == nil && write {
		err = d.trim()
	}
	if err == nil {
		if err = d.run(d.commit, "COMMIT"); err == nil {
			return nil
		}
	}
	if C.sqlite3_get_autocommit(d.db) == 0 {
		C.rsRun(d.rollback)
	}
	return err
}

func (d *DB) tx(immediate bool, f func() error) error {
	if err := d.txBegin(immediate); err != nil {
		return err
	}
	return d.txEnd(f(), immediate)
}

// lookup is key's id and length; ErrNotFound if it has none.
func (d *DB) lookup(key string) (id, length int64, err error) {
	d.bindKey(d.find, 1, key)
	var a, b C.sqlite3_int64
	switch rc := C.rsStep(d.find, &a, &b); rc {
	case C.SQLITE_ROW:
		C.sqlite3_reset(d.find)
		return int64(a), int64(b), nil
	case C.SQLITE_DONE:
		return 0, 0, ErrNotFound
	default:
		return 0, 0, d.err(rc, "find "+key)
	}
}

func (d *DB) deleteID(id int64) error {
	bindInt(d.delBlob, 1, id)
	if err := d.run(d.delBlob, "delete a blob"); err != nil {
		return err
	}
	bindInt(d.delKey, 1, id)
	return d.run(d.delKey, "delete a key")
}

// create makes key's row and a blob of length zero bytes; its id.
func (d *DB) create(key string, length int64) (int64, error) {
	d.bindKey(d.insKey, 1, key)
	bindInt(d.insKey, 2, length)
	bindInt(d.insKey, 3, time.Now().UnixMilli())
	if err := d.run(d.insKey, "insert a key"); err != nil {
		return 0, err
	}
	id := int64(C.sqlite3_last_insert_rowid(d.db))
	bindInt(d.insBlob, 1, id)
	bindInt(d.insBlob, 2, length)
	return id, d.run(d.insBlob, "insert a blob")
}

func (d *DB) use(id int64) error {
	bindInt(d.touch, 1, id)
	bindInt(d.touch, 2, time.Now().UnixMilli())
	return d.run(d.touch, "update last_used")
}

// blobIO opens id's blob, writes or reads b at off, and closes it.
func (d *DB) blobIO(id int64, b []byte, off int64, write bool) error {
	if len(b) == 0 {
		return nil
	}
	var h *C.sqlite3_blob
	w := C.int(0)
	if write {
		w = 1
	}
	if rc := C.sqlite3_blob_open(d.db, cMain, cBlobs, cBlob, C.sqlite3_int64(id), w, &h); rc != C.SQLITE_OK {
		return d.err(rc, "sqlite3_blob_open")
	}
	rc := blobRW(h, b, off, write)
	if rc2 := C.sqlite3_blob_close(h); rc == C.SQLITE_OK {
		rc = rc2
	}
	if rc != C.SQLITE_OK {
		return d.err(rc, "blob I/O")
	}
	return nil
}

var cMain, cBlobs, cBlob = C.CString("main"), C.CString("blobs"), C.CString("blob")

func blobRW(h *C.sqlite3_blob, b []byte, off int64, write bool) C.int {
	if write {
		return C.sqlite3_blob_write(h, unsafe.Pointer(&b[0]), C.int(len(b)), C.int(off))
	}
	return C.sqlite3_blob_read(h, unsafe.Pointer(&b[0]), C.int(len(b)), C.int(off))
}

// trim deletes the least recently used keys while the used pages exceed
// the capacity (squirrel's trimToCapacity).
func (d *DB) trim() error {
	if d.capacity <= 0 {
		return nil
	}
	for {
		var pages, free, unused C.sqlite3_int64
		if rc := C.rsStep(d.pageCount, &pages, &unused); rc != C.SQLITE_ROW {
			return d.err(rc, "PRAGMA page_count")
		}
		C.sqlite3_reset(d.pageCount)
		if rc := C.rsStep(d.freelistCount, &free, &unused); rc != C.SQLITE_ROW {
			return d.err(rc, "PRAGMA freelist_count")
		}
		C.sqlite3_reset(d.freelistCount)
		if int64(pages-free)*d.pageSize <= d.capacity {
			return nil
		}
		var id C.sqlite3_int64
		rc := C.rsStep(d.oldest, &id, &unused)
		if rc == C.SQLITE_DONE {
			return nil
		}
		if rc != C.SQLITE_ROW {
			return d.err(rc, "find the oldest key")
		}
		C.sqlite3_reset(d.oldest)
		if err := d.deleteID(int64(id)); err != nil {
			return err
		}
	}
}

// Put sets key to value, as squirrel's Put: in one BEGIN IMMEDIATE, the
// key's old row and blob deleted, a new row and a blob of zeros made, the
// value written into it by sqlite3_blob_write.
func (d *DB) Put(key string, value []byte) error {
	return d.tx(true, func() error {
		if id, _, err := d.lookup(key); err == nil {
			if err := d.deleteID(id); err != nil {
				return err
			}
		} else if err != ErrNotFound {
			return err
		}
		id, err := d.create(key, int64(len(value)))
		if err != nil {
			return err
		}
		return d.blobIO(id, value, 0, true)
	})
}

// WriteAt writes b into key's value at off, in a transaction of its own
// (BEGIN IMMEDIATE), and counts a use, as squirrel's Blob.WriteAt.  A key
// with no entry is first made length zero bytes; with length < 0 it is
// ErrNotFound.  A write past the value's end fails whole.
func (d *DB) WriteAt(key string, length int64, b []byte, off int64) (int, error) {
	err := d.tx(true, func() error {
		id, size, err := d.lookup(key)
		if err == ErrNotFound && length >= 0 {
			size = length
			id, err = d.create(key, length)
		}
		if err != nil {
			return err
		}
		if off < 0 || off+int64(len(b)) > size {
			return fmt.Errorf("rawsqlite: WriteAt %q: %d bytes at %d, past its %d", key, len(b), off, size)
		}
		if err := d.blobIO(id, b, off, true); err != nil {
			return err
		}
		return d.use(id)
	})
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// ReadAt reads key's value at off into b, in a transaction of its own
// (BEGIN), and counts a use: io.EOF where the value ends.
func (d *DB) ReadAt(key string, b []byte, off int64) (n int, err error) {
	var eof error
	err = d.tx(false, func() error {
		id, size, err := d.lookup(key)
		if err != nil {
			return err
		}
		if n, eof = clip(len(b), off, size); eof != nil && eof != io.EOF {
			return eof
		}
		if err := d.blobIO(id, b[:n], off, false); err != nil {
			return err
		}
		return d.use(id)
	})
	if err != nil {
		return 0, err
	}
	return n, eof
}

// clip is how many of want bytes at off a value of size has: io.EOF if
// fewer.
func clip(want int, off, size int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("rawsqlite: offset %d", off)
	}
	if off >= size {
		return 0, io.EOF
	}
	if rest := size - off; int64(want) > rest {
		return int(rest), io.EOF
	}
	return want, nil
}

// Pinned is a value open for reading in a transaction (BEGIN) of its own,
// its blob handle opened once and kept (squirrel keeps a transaction's
// blob handles): one snapshot until Close, which commits.  As squirrel's
// PinnedBlob does, each ReadAt reads the key's length again and counts a
// use (last_used, access_count); squirrel's query for the chunk that
// holds the offset is not made, a value being one chunk here.
type Pinned struct {
	d      *DB
	h      *C.sqlite3_blob
	key    string
	id     int64
	length int64
}

// OpenPinnedReadOnly opens key's value for ReadAt; ErrNotFound if it has no
// entry.  Nothing else may run on the DB until Close.
func (d *DB) OpenPinnedReadOnly(key string) (*Pinned, error) {
	if err := d.txBegin(false); err != nil {
		return nil, err
	}
	p := &Pinned{d: d, key: key}
	var err error
	if p.id, p.length, err = d.lookup(key); err == nil {
		if rc := C.sqlite3_blob_open(d.db, cMain, cBlobs, cBlob, C.sqlite3_int64(p.id), 0, &p.h); rc != C.SQLITE_OK {
			err = d.err(rc, "sqlite3_blob_open")
		}
	}
	if err != nil {
		return nil, d.txEnd(err, false)
	}
	return p, nil
}

// Length is the value's length in bytes.
func (p *Pinned) Length() int64 { return p.length }

// ReadAt is io.ReaderAt on the value.
func (p *Pinned) ReadAt(b []byte, off int64) (int, error) {
	if p.h == nil {
		return 0, errors.New("rawsqlite: ReadAt on a closed Pinned")
	}
	_, length, err := p.d.lookup(p.key)
	if err != nil {
		return 0, err
	}
	n, err := clip(len(b), off, length)
	if err != nil && err != io.EOF {
		return 0, err
	}
	if n > 0 {
		if rc := blobRW(p.h, b[:n], off, false); rc != C.SQLITE_OK {
			return 0, p.d.err(rc, "sqlite3_blob_read")
		}
		if err := p.d.use(p.id); err != nil {
			return 0, err
		}
	}
	return n, err
}

// Close closes the blob and commits.
func (p *Pinned) Close() error {
	if p.h == nil {
		return nil
	}
	rc := C.sqlite3_blob_close(p.h)
	p.h = nil
	var err error
	if rc != C.SQLITE_OK {
		err = p.d.err(rc, "sqlite3_blob_close")
	}
	return p.d.txEnd(err, false)
}
