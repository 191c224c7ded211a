package rawsqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// SQLStore is the same design through database/sql: the baseline of a put
// where both sides pay for the driver.  database/sql has no blob I/O, so a
// Put binds the value in its INSERT where DB writes it by
// sqlite3_blob_write (for a small value the same pages are written).
type SQLStore struct {
	conn *sql.Conn

	begin, commit, rollback                *sql.Stmt
	find, delBlob, delKey, insKey, insBlob *sql.Stmt
}

// OpenSQL takes one connection of db (opened by any SQLite driver, such as
// mattn's "sqlite3"), sets o on it (Capacity is not used), makes the tables
// and prepares the statements.  Close gives the connection back.
func OpenSQL(db *sql.DB, o Options) (*SQLStore, error) {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("rawsqlite: %w", err)
	}
	s := &SQLStore{conn: conn}
	if err := s.init(o); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *SQLStore) init(o Options) error {
	ctx := context.Background()
	if o.BusyTimeout > 0 {
		q := fmt.Sprintf("PRAGMA busy_timeout = %d", o.BusyTimeout.Milliseconds())
		if _, err := s.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("rawsqlite: %s: %w", q, err)
		}
	}
	for _, p := range o.pragmas() {
		if _, err := s.conn.ExecContext(ctx, p); err != nil {
			return fmt.Errorf("rawsqlite: %s: %w", p, err)
		}
	}
	if o.JournalMode != "" {
		var got string
		if err := s.conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&got); err != nil {
			return fmt.Errorf("rawsqlite: PRAGMA journal_mode: %w", err)
		}
		if !strings.EqualFold(got, o.JournalMode) {
			return fmt.Errorf("rawsqlite: journal_mode %s gave %q", o.JournalMode, got)
		}
	}
	if _, err := s.conn.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("rawsqlite: schema: %w", err)
	}
	for _, st := range []struct {
		p **sql.Stmt
		q string
	}{
		{&s.begin, "BEGIN IMMEDIATE"}, {&s.commit, "COMMIT"}, {&s.rollback, "ROLLBACK"},
		{&s.find, sqlFind}, {&s.delBlob, sqlDelBlob}, {&s.delKey, sqlDelKey}, {&s.insKey, sqlInsKey},
		{&s.insBlob, "INSERT INTO blobs(blob_id, blob) VALUES (?1, ?2)"},
	} {
		var err error
		if *st.p, err = s.conn.PrepareContext(ctx, st.q); err != nil {
			return fmt.Errorf("rawsqlite: prepare %s: %w", st.q, err)
		}
	}
	return nil
}

// Close closes the statements and gives the connection back to its pool.
func (s *SQLStore) Close() error {
	for _, st := range []*sql.Stmt{s.begin, s.commit, s.rollback, s.find, s.delBlob, s.delKey, s.insKey, s.insBlob} {
		if st != nil {
			st.Close()
		}
	}
	return s.conn.Close()
}

// Put is DB.Put through database/sql: in one BEGIN IMMEDIATE, the key's old
// row and blob deleted, a new row made, and the value inserted as its blob.
func (s *SQLStore) Put(key string, value []byte) (err error) {
	if _, err = s.begin.Exec(); err != nil {
		return fmt.Errorf("rawsqlite: BEGIN IMMEDIATE: %w", err)
	}
	defer func() {
		if err != nil {
			s.rollback.Exec()
		}
	}()
	var id, length int64
	switch err = s.find.QueryRow(key).Scan(&id, &length); err {
	case nil:
		if _, err = s.delBlob.Exec(id); err != nil {
			return fmt.Errorf("rawsqlite: delete a blob: %w", err)
		}
		if _, err = s.delKey.Exec(id); err != nil {
			return fmt.Errorf("rawsqlite: delete a key: %w", err)
		}
	case sql.ErrNoRows:
	default:
		return fmt.Errorf("rawsqlite: find %q: %w", key, err)
	}
	res, err := s.insKey.Exec(key, len(value), time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("rawsqlite: insert a key: %w", err)
	}
	if id, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("rawsqlite: insert a key: %w", err)
	}
	if value == nil {
		value = []byte{}
	}
	if _, err = s.insBlob.Exec(id, value); err != nil {
		return fmt.Errorf("rawsqlite: insert a blob: %w", err)
	}
	if _, err = s.commit.Exec(); err != nil {
		return fmt.Errorf("rawsqlite: COMMIT: %w", err)
	}
	return nil
}

// Get is key's value; ErrNotFound if it has none.
func (s *SQLStore) Get(key string) ([]byte, error) {
	var v []byte
	err := s.conn.QueryRowContext(context.Background(),
		"SELECT blob FROM blobs JOIN keys ON blob_id = key_id WHERE key = ?1", key).Scan(&v)
	if err == sql.ErrNoRows {
		return nil, ErrNotFound
	}
	return v, err
}
