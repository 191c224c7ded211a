// Package acorn is acorn's face for Go: a database/sql driver that loads the
// acorn SQLite extension into every connection, a Cache with the API of
// squirrel (github.com/anacrolix/squirrel) on acorn's cache virtual table,
// and BenchInsert, acorn's writer experiments with typed parameters.
//
// It is built on mattn/go-sqlite3 (cgo) and needs acorn.so at run time:
// FindExtension says where it looks (ACORN_EXTENSION first).
//
// # Loading
//
//	db, err := sql.Open(acorn.DriverName, "app.db") // uuid7(), cache tables, ...
//
// # The cache
//
// A squirrel user switches by changing the import and keeping the calls:
//
//	var opts acorn.NewCacheOpts
//	opts.Path = "pieces.db"
//	opts.Capacity = 1 << 30
//	cache, err := acorn.NewCache(opts)
//	err = cache.Put("k", []byte("v"))
//	b, err := cache.ReadAll("k", nil)
//	n, err := cache.BlobWithLength("piece", 2<<20).WriteAt(block, 16384)
//
// What acorn decides where squirrel leaves a choice, or where squirrel's
// design and acorn's differ:
//
//   - Entries live in the cache table NewCacheOpts.Table ("cache"), the one
//     Python's, Node's and Ruby's faces open by default: every face, and
//     SQL, sees the same entries.  Several processes may open one file; a
//     write waits up to BusyTimeout (5 s) for another's lock.
//   - Capacity counts the bytes of keys and values (squirrel: the pages of
//     the whole file).  Eviction is exact LRU (or FIFO) and happens in the
//     transaction that overflows.  Capacity 0 makes an unbounded table.
//   - A value is one BLOB.  WriteAt and ReadAt are cache_write and
//     cache_read: only the pages the bytes fall on are written or read.  A
//     value keeps the size it was made with; a write past its end is an
//     error, never a silent extension.
//   - SetJournalMode "" is WAL for a file (squirrel leaves the mode as it
//     is).  SetSynchronous is always set, and its zero value is OFF, as in
//     squirrel.
//   - ReadAll gives BLOB and TEXT values as bytes.  A number, or a value
//     another language's face marked as its own, is a *ForeignValueError,
//     never bytes that mean something else.
//   - squirrel's named per-key tags (SetTag, GetTag) are not built: an
//     entry has one tag (PutWith), and SetTag fails with ErrNotSupported.
//     squirrel's connection-pool options are database/sql's here (DB()).
//   - acorn's own: PutWith (TTL, tag), Stats, Evictions (the eviction feed),
//     DeleteTag, Purge, Flush, and NewCacheOpts' Policy, DefaultTTL,
//     MaxEntries, Feed, BusyTimeout.
//
// docs/go.md has every call with its output.
package acorn
