package acorn

// Transactions and the Cache's methods, squirrel's names.

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Tx is a transaction on one connection: its calls see each other's writes,
// and commit or roll back together.
type Tx struct {
	c     *Cache
	conn  *sql.Conn
	stmts stmtCache // the statements of r, prepared on conn
	r     runner
	done  bool // set by end: every later call gives ErrClosed
}

// run is the transaction's runner, or ErrClosed once it has ended.
func (tx *Tx) run() (runner, error) {
	if tx.done {
		return runner{}, ErrClosed
	}
	return tx.r, nil
}

// begin takes a connection of the pool and begins a transaction on it:
// "BEGIN" (deferred: the write lock is taken at the first write) or
// "BEGIN IMMEDIATE" (the write lock first, waiting up to the busy timeout).
func (c *Cache) begin(stmt string) (*Tx, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	conn, err := c.db.Conn(context.Background())
	if err != nil {
		return nil, fmt.Errorf("acorn: %s: %w", stmt, err)
	}
	if _, err = conn.ExecContext(context.Background(), stmt); err != nil {
		conn.Close()
		return nil, fmt.Errorf("acorn: %s: %w", stmt, err)
	}
	tx := &Tx{c: c, conn: conn}
	tx.r = connRunner(conn, &tx.stmts)
	return tx, nil
}

// end commits (or, if rollback, rolls back) and gives the connection back.
func (tx *Tx) end(rollback bool) (err error) {
	if tx.done {
		return ErrClosed
	}
	tx.done = true
	tx.stmts.close()
	ctx := context.Background()
	if !rollback {
		if _, err = tx.conn.ExecContext(ctx, "COMMIT"); err != nil {
			err = fmt.Errorf("acorn: COMMIT: %w", err)
			rollback = true
		}
	}
	if rollback {
		if _, e := tx.conn.ExecContext(ctx, "ROLLBACK"); e != nil && err == nil {
			err = fmt.Errorf("acorn: ROLLBACK: %w", e)
		}
	}
	return joinErr(err, tx.conn.Close())
}

func (c *Cache) runTx(stmt string, f func(tx *Tx) error) error {
	tx, err := c.begin(stmt)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok { // f panicked: undo, then let the panic go on
			tx.end(true)
		}
	}()
	err = f(tx)
	ok = true
	return joinErr(err, tx.end(err != nil))
}

// Tx runs f in a deferred transaction (BEGIN): committed if f returns nil,
// rolled back if it returns an error (which Tx returns) or panics.  In WAL
// mode, a write after a read in it fails with "database is locked" at once
// while another connection holds the write lock (SQLite's rule); use
// TxImmediate for a transaction that writes.
func (c *Cache) Tx(f func(tx *Tx) error) error { return c.runTx("BEGIN", f) }

// TxImmediate runs f as Tx does, in BEGIN IMMEDIATE: it waits (up to
// BusyTimeout) for the write lock before f runs, so f's writes never fail
// for another connection's.
func (c *Cache) TxImmediate(f func(tx *Tx) error) error { return c.runTx("BEGIN IMMEDIATE", f) }

func (c *Cache) pool() (runner, error) {
	if c.closed.Load() {
		return runner{}, ErrClosed
	}
	return c.run, nil
}

// Put sets name to b, replacing any value: one statement, a transaction of
// its own.  A nil b stores an empty value.
func (c *Cache) Put(name string, b []byte) error {
	r, err := c.pool()
	if err != nil {
		return err
	}
	return c.put(r, name, b)
}

// PutWith is Put with a time to live and a tag (acorn's).
func (c *Cache) PutWith(name string, b []byte, o PutOpts) error {
	r, err := c.pool()
	if err != nil {
		return err
	}
	return c.putWith(r, name, b, o)
}

// ReadFull reads the first len(b) bytes of name's value into b: a get.
// A value shorter than b gives the bytes it has and io.ErrUnexpectedEOF (an
// empty one, io.EOF).  ErrNotFound if there is no live entry.
func (c *Cache) ReadFull(name string, b []byte) (n int, err error) {
	r, err := c.pool()
	if err != nil {
		return 0, err
	}
	return c.readFull(r, name, b)
}

// ReadAll returns name's whole value, in b's storage if it is big enough:
// a get.  ErrNotFound if there is no live entry; a *ForeignValueError for a
// value that is not bytes (a number, a value marked by another language's
// face).  A TEXT value is returned as its UTF-8 bytes.
func (c *Cache) ReadAll(name string, b []byte) ([]byte, error) {
	r, err := c.pool()
	if err != nil {
		return nil, err
	}
	return c.readAll(r, name, b)
}

// Delete removes name's entry; ErrNotFound if it had none.
func (c *Cache) Delete(name string) error {
	r, err := c.pool()
	if err != nil {
		return err
	}
	return c.delete(r, name)
}

// LastUsed is the time of the latest use of name's entry (its set, or a
// read; under fifo, its set).  A read's time is buffered by its connection
// (recency_buffer) and may show later; Flush writes it.
func (c *Cache) LastUsed(name string) (time.Time, error) {
	r, err := c.pool()
	if err != nil {
		return time.Time{}, err
	}
	return c.lastUsed(r, name)
}

// SetTag is squirrel's named per-key tag.  acorn keeps one tag per entry
// (PutOpts.Tag, DeleteTag), not named ones: it fails with ErrNotSupported.
func (c *Cache) SetTag(key, name string, value any) error {
	return fmt.Errorf("acorn: SetTag %q %q: %w: an entry has one tag, given by PutWith (PutOpts.Tag)", key, name, ErrNotSupported)
}

// Put is Cache.Put in the transaction.
func (tx *Tx) Put(name string, b []byte) error {
	r, err := tx.run()
	if err != nil {
		return err
	}
	return tx.c.put(r, name, b)
}

// PutWith is Cache.PutWith in the transaction.
func (tx *Tx) PutWith(name string, b []byte, o PutOpts) error {
	r, err := tx.run()
	if err != nil {
		return err
	}
	return tx.c.putWith(r, name, b, o)
}

// ReadFull is Cache.ReadFull in the transaction.
func (tx *Tx) ReadFull(name string, b []byte) (int, error) {
	r, err := tx.run()
	if err != nil {
		return 0, err
	}
	return tx.c.readFull(r, name, b)
}

// ReadAll is Cache.ReadAll in the transaction.
func (tx *Tx) ReadAll(name string, b []byte) ([]byte, error) {
	r, err := tx.run()
	if err != nil {
		return nil, err
	}
	return tx.c.readAll(r, name, b)
}

// Delete is Cache.Delete in the transaction.
func (tx *Tx) Delete(name string) error {
	r, err := tx.run()
	if err != nil {
		return err
	}
	return tx.c.delete(r, name)
}

// LastUsed is Cache.LastUsed in the transaction.
func (tx *Tx) LastUsed(name string) (time.Time, error) {
	r, err := tx.run()
	if err != nil {
		return time.Time{}, err
	}
	return tx.c.lastUsed(r, name)
}

// SetTag fails as Cache.SetTag does.
func (tx *Tx) SetTag(key, name string, value any) error { return tx.c.SetTag(key, name, value) }

// CreateOpts are the settings of Create: the value's length, in bytes.
type CreateOpts struct {
	Length int64
}

// Create sets name to opts.Length zero bytes (replacing any value) and
// returns it pinned for ReadAt and WriteAt in the transaction.
func (tx *Tx) Create(name string, opts CreateOpts) (*PinnedBlob, error) {
	r, err := tx.run()
	if err != nil {
		return nil, err
	}
	if err := tx.c.create(r, "Create", name, opts.Length, false); err != nil {
		return nil, err
	}
	return &PinnedBlob{key: name, write: true, tx: tx}, nil
}

// OpenPinned returns name's value pinned for ReadAt and WriteAt in the
// transaction; ErrNotFound if it has no live entry.
func (tx *Tx) OpenPinned(name string) (*PinnedBlob, error) { return tx.openPinned(name, true) }

// Open is OpenPinned (squirrel's Tx has both).
func (tx *Tx) Open(name string) (*PinnedBlob, error) { return tx.openPinned(name, true) }

// OpenPinnedReadOnly is OpenPinned for ReadAt only.
func (tx *Tx) OpenPinnedReadOnly(name string) (*PinnedBlob, error) {
	return tx.openPinned(name, false)
}

func (tx *Tx) openPinned(name string, write bool) (*PinnedBlob, error) {
	r, err := tx.run()
	if err != nil {
		return nil, err
	}
	if err := tx.c.exists(r, name); err != nil {
		return nil, err
	}
	return &PinnedBlob{key: name, write: write, tx: tx}, nil
}
