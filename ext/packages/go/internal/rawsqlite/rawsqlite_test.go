package rawsqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

func openTest(t *testing.T, o Options) *DB {
	d, err := Open(filepath.Join(t.TempDir(), "raw.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestPutAndRead(t *testing.T) {
	d := openTest(t, Options{PageSize: 4096, AutoVacuum: "incremental", JournalMode: "wal", Synchronous: 1})
	if av, err := d.PragmaInt("auto_vacuum"); err != nil || av != 2 {
		t.Fatalf("auto_vacuum %d, %v; want 2", av, err)
	}
	for _, v := range []string{"world", "", "a longer value than the first"} {
		if err := d.Put("hello", []byte(v)); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 64)
		n, err := d.ReadAt("hello", b, 0)
		if err != io.EOF || string(b[:n]) != v {
			t.Fatalf("ReadAt: %q, %v; want %q, EOF", b[:n], err, v)
		}
	}
	if _, err := d.ReadAt("missing", make([]byte, 1), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadAt of a missing key: %v", err)
	}
}

func TestWriteAtPinned(t *testing.T) {
	d := openTest(t, Options{PageSize: 4096, AutoVacuum: "incremental", JournalMode: "wal"})
	const size, block = 1 << 16, 1 << 12
	want := make([]byte, size)
	for off := size - block; off >= 0; off -= block { // backwards: the first write creates
		for i := range want[off : off+block] {
			want[off+i] = byte(off/block + i)
		}
		if n, err := d.WriteAt("piece", size, want[off:off+block], int64(off)); err != nil || n != block {
			t.Fatalf("WriteAt %d: %d, %v", off, n, err)
		}
	}
	if _, err := d.WriteAt("piece", size, make([]byte, 2), size-1); err == nil {
		t.Fatal("a write past the end succeeded")
	}
	if _, err := d.WriteAt("other", -1, make([]byte, 2), 0); err != ErrNotFound {
		t.Fatalf("WriteAt without a length on a missing key: %v", err)
	}
	p, err := d.OpenPinnedReadOnly("piece")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := io.Copy(&got, io.NewSectionReader(p, 0, p.Length())); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatal("the pinned read differs from what was written")
	}
}

func TestCapacityTrims(t *testing.T) {
	d := openTest(t, Options{PageSize: 4096, AutoVacuum: "incremental", Capacity: 5 << 20})
	block := make([]byte, 1<<14)
	for k := 0; k < 4; k++ {
		if _, err := d.WriteAt(string(rune('a'+k)), 2<<20, block, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Two 2 MiB values fit 5 MiB of pages, a third does not: a and b went.
	for k, live := range []bool{false, false, true, true} {
		_, err := d.ReadAt(string(rune('a'+k)), block[:1], 0)
		if (err == nil) != live {
			t.Fatalf("key %c: %v; live %v", 'a'+k, err, live)
		}
	}
}

func TestSQLStore(t *testing.T) {
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "sql.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := OpenSQL(db, Options{PageSize: 4096, JournalMode: "wal", Synchronous: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, v := range []string{"world", "", "again"} {
		if err := s.Put("hello", []byte(v)); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get("hello")
		if err != nil || string(got) != v {
			t.Fatalf("Get: %q, %v; want %q", got, err, v)
		}
	}
	var keys int
	if err := s.conn.QueryRowContext(context.Background(), "SELECT count(*) FROM keys").Scan(&keys); err != nil || keys != 1 {
		t.Fatalf("%d keys, %v; want 1", keys, err)
	}
}
