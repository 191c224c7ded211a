package acorn

// The calls every face makes of the table, each one SQL statement, run by a
// runner: the Cache's pool outside a transaction, a Tx's connection inside.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// statements are the SQL of one table, its name quoted in them once.
type statements struct {
	put, putWith, create, createIfMissing, del, delTag  string
	get, read, write, lastUsed, length, exists, command string
}

func makeStatements(table string) statements {
	t := quoteIdent(table)
	return statements{
		put:             "INSERT INTO " + t + "(key, value) VALUES (?, ?)",
		putWith:         "INSERT INTO " + t + "(key, value, ttl, tag) VALUES (?, ?, ?, ?)",
		create:          "INSERT INTO " + t + "(key, value) VALUES (?, zeroblob(?))",
		createIfMissing: "INSERT OR IGNORE INTO " + t + "(key, value) VALUES (?, zeroblob(?))",
		del:             "DELETE FROM " + t + " WHERE key = ?",
		delTag:          "DELETE FROM " + t + " WHERE tag = ?",
		get:             "SELECT v, typeof(v) FROM (SELECT cache_get(?, ?) AS v)",
		read:            "SELECT cache_read(?, ?, ?, ?)",
		write:           "SELECT cache_write(?, ?, ?, ?)",
		lastUsed:        "SELECT last_used FROM " + t + " WHERE key = ?",
		length:          "SELECT size - length(CAST(key AS BLOB)) FROM " + t + " WHERE key = ?",
		exists:          "SELECT 1 FROM " + t + " WHERE key = ?",
		command:         "INSERT INTO " + t + "(" + t + ", value) VALUES (?, ?)",
	}
}

// runner runs a statement on the pool or on a transaction's connection,
// each query prepared there once and kept in stmts until it is closed.
type runner struct {
	stmts   *stmtCache
	prepare func(q string) (*sql.Stmt, error)
	// direct is the pool's or the connection's QueryRow: a *sql.Row cannot
	// be made with an error, so a query whose preparation failed is asked
	// of it, which fails the same way.
	direct func(q string, args ...any) *sql.Row
}

// poolRunner runs on db: database/sql prepares each statement again on
// each connection it runs on, once.
func poolRunner(db *sql.DB, stmts *stmtCache) runner {
	return runner{stmts: stmts, prepare: db.Prepare, direct: db.QueryRow}
}

// connRunner runs on one connection.
func connRunner(conn *sql.Conn, stmts *stmtCache) runner {
	ctx := context.Background()
	return runner{
		stmts:   stmts,
		prepare: func(q string) (*sql.Stmt, error) { return conn.PrepareContext(ctx, q) },
		direct:  func(q string, args ...any) *sql.Row { return conn.QueryRowContext(ctx, q, args...) },
	}
}

func (r runner) exec(q string, args ...any) (sql.Result, error) {
	st, err := r.stmts.get(q, r.prepare)
	if err != nil {
		return nil, err
	}
	return st.Exec(args...)
}

func (r runner) queryRow(q string, args ...any) *sql.Row {
	st, err := r.stmts.get(q, r.prepare)
	if err != nil {
		return r.direct(q, args...)
	}
	return st.QueryRow(args...)
}

func (r runner) query(q string, args ...any) (*sql.Rows, error) {
	st, err := r.stmts.get(q, r.prepare)
	if err != nil {
		return nil, err
	}
	return st.Query(args...)
}

// value gives a Go []byte to SQLite as a BLOB: nil as an empty one, not NULL.
func value(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// PutOpts are acorn's additions to a Put: a time to live and a tag.
type PutOpts struct {
	TTL time.Duration // 0: the table's default_ttl, if any; else whole seconds or more
	Tag string        // "" is none
}

func (c *Cache) put(r runner, name string, b []byte) error {
	if _, err := r.exec(c.sql.put, name, value(b)); err != nil {
		return fmt.Errorf("acorn: Put %q: %w", name, err)
	}
	return nil
}

func (c *Cache) putWith(r runner, name string, b []byte, o PutOpts) error {
	var ttl, tag any
	if o.TTL < 0 {
		return fmt.Errorf("acorn: PutWith %q: TTL %v must not be negative", name, o.TTL)
	}
	if o.TTL > 0 {
		ttl = o.TTL.Seconds()
	}
	if o.Tag != "" {
		tag = o.Tag
	}
	if _, err := r.exec(c.sql.putWith, name, value(b), ttl, tag); err != nil {
		return fmt.Errorf("acorn: PutWith %q: %w", name, err)
	}
	return nil
}

// readAt reads len(b) bytes at off with cache_read.  io.EOF when the value
// ends before b is full, as io.ReaderAt says.
func (c *Cache) readAt(r runner, method, name string, b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("acorn: %s %q: offset %d must not be negative", method, name, off)
	}
	rows, err := r.query(c.sql.read, c.table, name, off, len(b))
	if err != nil {
		return 0, c.readErr(method, name, err)
	}
	defer rows.Close()
	var got sql.RawBytes // the driver's copy, read without another
	if rows.Next() {
		err = rows.Scan(&got)
	}
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return 0, c.readErr(method, name, err)
	}
	if got == nil {
		return 0, ErrNotFound
	}
	n := copy(b, got)
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// readErr names the method, and turns SQLite's refusal to open a number as
// a blob into a ForeignValueError.
func (c *Cache) readErr(method, name string, err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "cannot open value of type "); i >= 0 {
		return &ForeignValueError{Key: name, Kind: strings.ToUpper(strings.TrimSpace(msg[i+len("cannot open value of type "):]))}
	}
	return fmt.Errorf("acorn: %s %q: %w", method, name, err)
}

func (c *Cache) readFull(r runner, name string, b []byte) (int, error) {
	n, err := c.readAt(r, "ReadFull", name, b, 0)
	if err == io.EOF {
		if n == 0 {
			return 0, io.EOF
		}
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// marks name the formats of the faces' marked TEXT (docs/cache.md).
var marks = map[byte]string{
	'i': "an integer too big for 64 bits", 'f': "a float (NaN)", 'j': "JSON (a list, map, true, false or null)",
	'p': "a Python pickle", 'm': "a Ruby Marshal dump", 'k': "a Keyv string",
}

func (c *Cache) readAll(r runner, name string, b []byte) ([]byte, error) {
	var v any
	var typ string
	if err := r.queryRow(c.sql.get, c.table, name).Scan(&v, &typ); err != nil {
		return nil, fmt.Errorf("acorn: ReadAll %q: %w", name, err)
	}
	var got []byte
	switch typ {
	case "null":
		return nil, ErrNotFound
	case "blob":
		got, _ = v.([]byte)
	case "text":
		switch t := v.(type) {
		case string:
			got = []byte(t)
		case []byte:
			got = t
		}
		if len(got) > 0 && got[0] == 0xFF {
			kind := "marked TEXT of an unknown format"
			if len(got) > 1 {
				if k, ok := marks[got[1]]; ok {
					kind = k
				} else {
					kind = fmt.Sprintf("marked TEXT of an unknown format %q", got[1])
				}
			}
			return nil, &ForeignValueError{Key: name, Kind: kind}
		}
	default:
		return nil, &ForeignValueError{Key: name, Kind: strings.ToUpper(typ)}
	}
	if cap(b) >= len(got) {
		b = b[:len(got)]
		copy(b, got)
		return b, nil
	}
	if got == nil {
		got = []byte{}
	}
	return got, nil
}

// writeAt writes b at off with cache_write.  With create, a missing entry is
// first set to length zero bytes, in the same transaction.
func (c *Cache) writeAt(r runner, method, name string, b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("acorn: %s %q: offset %d must not be negative", method, name, off)
	}
	var n int64
	if err := r.queryRow(c.sql.write, c.table, name, off, value(b)).Scan(&n); err != nil {
		if strings.Contains(err.Error(), "no live entry has that key") {
			return 0, ErrNotFound
		}
		return 0, fmt.Errorf("acorn: %s %q: %w", method, name, err)
	}
	return int(n), nil
}

func (c *Cache) create(r runner, method, name string, length int64, ifMissing bool) error {
	if length < 0 {
		return fmt.Errorf("acorn: %s %q: length %d must not be negative", method, name, length)
	}
	q := c.sql.create
	if ifMissing {
		q = c.sql.createIfMissing
	}
	if _, err := r.exec(q, name, length); err != nil {
		return fmt.Errorf("acorn: %s %q: %w", method, name, err)
	}
	return nil
}

func (c *Cache) delete(r runner, name string) error {
	res, err := r.exec(c.sql.del, name)
	if err != nil {
		return fmt.Errorf("acorn: Delete %q: %w", name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}

func (c *Cache) lastUsed(r runner, name string) (time.Time, error) {
	var ms int64
	if err := r.queryRow(c.sql.lastUsed, name).Scan(&ms); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return time.Time{}, ErrNotFound
		}
		return time.Time{}, fmt.Errorf("acorn: LastUsed %q: %w", name, err)
	}
	return time.UnixMilli(ms), nil
}

func (c *Cache) length(r runner, name string) (int64, error) {
	var n int64
	if err := r.queryRow(c.sql.length, name).Scan(&n); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, ErrNotFound
		}
		return 0, fmt.Errorf("acorn: Length %q: %w", name, err)
	}
	return n, nil
}

func (c *Cache) exists(r runner, name string) error {
	var one int
	if err := r.queryRow(c.sql.exists, name).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		return fmt.Errorf("acorn: %q: %w", name, err)
	}
	return nil
}
