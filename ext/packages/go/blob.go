package acorn

// Blobs: a value read and written at offsets (cache_read, cache_write).

import (
	"fmt"
	"time"
)

// Blob names a value, and its length if it is to be made by a WriteAt.
// Making one reads and writes nothing.  Each call is a transaction of its own.
type Blob struct {
	name   string
	length int64 // -1: unknown (NewBlobRef): WriteAt does not create
	cache  *Cache
}

// NewBlobRef names a value that must exist to be written.
func (c *Cache) NewBlobRef(name string) Blob { return Blob{name: name, length: -1, cache: c} }

// BlobWithLength names a value of length bytes: a WriteAt to it when it has
// no live entry first sets it to length zero bytes, in the same transaction.
func (c *Cache) BlobWithLength(name string, length int64) Blob {
	return Blob{name: name, length: length, cache: c}
}

// OpenWithLength is BlobWithLength (squirrel's older name).
func (c *Cache) OpenWithLength(name string, length int64) Blob { return c.BlobWithLength(name, length) }

// ReadAt reads len(b) bytes of the value at off, as io.ReaderAt: n < len(b)
// only with an error, io.EOF where the value ends.  A use, as a get is.
// ErrNotFound if there is no live entry.
func (p Blob) ReadAt(b []byte, off int64) (int, error) {
	r, err := p.cache.pool()
	if err != nil {
		return 0, err
	}
	return p.cache.readAt(r, "ReadAt", p.name, b, off)
}

// WriteAt writes b into the value at off, in place: only the pages the bytes
// fall on are written.  A value keeps the size it was made with: a write
// past its end is refused whole (n = 0).  With no live entry: ErrNotFound
// for a NewBlobRef; for a BlobWithLength, the entry is made first.
func (p Blob) WriteAt(b []byte, off int64) (int, error) {
	c := p.cache
	r, err := c.pool()
	if err != nil {
		return 0, err
	}
	n, err := c.writeAt(r, "WriteAt", p.name, b, off)
	if err != ErrNotFound || p.length < 0 {
		return n, err
	}
	err = c.TxImmediate(func(tx *Tx) error {
		if err := c.create(tx.r, "WriteAt", p.name, p.length, true); err != nil {
			return err
		}
		n, err = c.writeAt(tx.r, "WriteAt", p.name, b, off)
		return err
	})
	return n, err
}

// Size is the value's length in bytes (what it was set with); ErrNotFound
// if there is no live entry.  It reads no value and is not a use.
func (p Blob) Size() (int64, error) {
	r, err := p.cache.pool()
	if err != nil {
		return 0, err
	}
	return p.cache.length(r, p.name)
}

// Delete removes the entry; ErrNotFound if it had none.
func (p Blob) Delete() error { return p.cache.Delete(p.name) }

// LastUsed is Cache.LastUsed of the blob's name.
func (p Blob) LastUsed() (time.Time, error) { return p.cache.LastUsed(p.name) }

// SetTag fails as Cache.SetTag does.
func (p Blob) SetTag(name string, value any) error { return p.cache.SetTag(p.name, name, value) }

// PinnedBlob is a value inside a transaction: its reads see one snapshot of
// the file, and its writes commit with the transaction.
type PinnedBlob struct {
	key   string
	write bool
	tx    *Tx // nil once closed
}

// live is the blob's transaction, or ErrClosed once the blob is closed or
// its transaction has ended.
func (pb *PinnedBlob) live() (*Tx, error) {
	if pb.tx == nil || pb.tx.done {
		return nil, ErrClosed
	}
	return pb.tx, nil
}

// Length is the value's length, or -1 on an error (LengthErr gives it).
func (pb *PinnedBlob) Length() int64 {
	n, err := pb.LengthErr()
	if err != nil {
		return -1
	}
	return n
}

// LengthErr is the value's length in bytes.
func (pb *PinnedBlob) LengthErr() (int64, error) {
	tx, err := pb.live()
	if err != nil {
		return 0, err
	}
	return tx.c.length(tx.r, pb.key)
}

// ReadAt is Blob.ReadAt in the transaction.
func (pb *PinnedBlob) ReadAt(b []byte, off int64) (int, error) {
	tx, err := pb.live()
	if err != nil {
		return 0, err
	}
	return tx.c.readAt(tx.r, "ReadAt", pb.key, b, off)
}

// WriteAt is Blob.WriteAt in the transaction (never creating); refused for a
// blob opened read-only.
func (pb *PinnedBlob) WriteAt(b []byte, off int64) (int, error) {
	tx, err := pb.live()
	if err != nil {
		return 0, err
	}
	if !pb.write {
		return 0, fmt.Errorf("acorn: WriteAt %q: the blob was opened read-only (OpenPinnedReadOnly)", pb.key)
	}
	return tx.c.writeAt(tx.r, "WriteAt", pb.key, b, off)
}

// LastUsed is Cache.LastUsed in the transaction.
func (pb *PinnedBlob) LastUsed() (time.Time, error) {
	tx, err := pb.live()
	if err != nil {
		return time.Time{}, err
	}
	return tx.c.lastUsed(tx.r, pb.key)
}

// Close ends the blob's use (not its transaction); later calls give ErrClosed.
func (pb *PinnedBlob) Close() error {
	pb.tx = nil
	return nil
}

// CachePinnedBlob is a PinnedBlob with a transaction of its own, which its
// Close commits.  Until then it holds one connection, and its snapshot: in
// WAL mode writers go on; with a rollback journal, their commits wait for it.
type CachePinnedBlob struct {
	*PinnedBlob
	tx *Tx
}

// Close closes the blob and commits its transaction.
func (cb CachePinnedBlob) Close() error {
	// cb is a copy: the closed mark is the shared PinnedBlob's.
	if cb.tx == nil || cb.PinnedBlob.tx == nil {
		return ErrClosed
	}
	cb.PinnedBlob.Close()
	return cb.tx.end(false)
}

func (c *Cache) pinned(stmt string, open func(tx *Tx) (*PinnedBlob, error)) (CachePinnedBlob, error) {
	tx, err := c.begin(stmt)
	if err != nil {
		return CachePinnedBlob{}, err
	}
	pb, err := open(tx)
	if err != nil {
		return CachePinnedBlob{}, joinErr(err, tx.end(true))
	}
	return CachePinnedBlob{PinnedBlob: pb, tx: tx}, nil
}

// OpenPinnedReadOnly returns name's value for ReadAt in a read transaction
// of its own: one snapshot until Close.  ErrNotFound if it has no live entry.
func (c *Cache) OpenPinnedReadOnly(name string) (CachePinnedBlob, error) {
	return c.pinned("BEGIN", func(tx *Tx) (*PinnedBlob, error) { return tx.OpenPinnedReadOnly(name) })
}

// OpenPinned returns name's value for ReadAt and WriteAt in a write
// transaction of its own (BEGIN IMMEDIATE), committed by Close.
func (c *Cache) OpenPinned(name string) (CachePinnedBlob, error) {
	return c.pinned("BEGIN IMMEDIATE", func(tx *Tx) (*PinnedBlob, error) { return tx.OpenPinned(name) })
}

// Create sets name to opts.Length zero bytes and returns it for writing in
// a write transaction of its own (BEGIN IMMEDIATE), committed by Close.
func (c *Cache) Create(name string, opts CreateOpts) (CachePinnedBlob, error) {
	return c.pinned("BEGIN IMMEDIATE", func(tx *Tx) (*PinnedBlob, error) { return tx.Create(name, opts) })
}
