package acorn

import (
	"errors"
	"fmt"
	"io/fs"
)

// errNotFound is ErrNotFound's type: it is fs.ErrNotExist to errors.Is, as
// squirrel's is.
type errNotFound struct{}

func (errNotFound) Error() string { return "not found" }

func (errNotFound) Is(target error) bool { return target == fs.ErrNotExist }

// ErrNotFound is returned for a key with no live entry (missing, expired or
// evicted).  errors.Is(err, fs.ErrNotExist) is true of it.
var ErrNotFound error = errNotFound{}

// errClosed is ErrClosed's type: it is fs.ErrClosed to errors.Is, as
// squirrel's ErrClosed (which is fs.ErrClosed) is.
type errClosed struct{}

func (errClosed) Error() string { return "acorn: closed" }

func (errClosed) Is(target error) bool { return target == fs.ErrClosed }

// ErrClosed is returned by a method of a closed Cache, or of a Tx or
// PinnedBlob whose transaction has ended.  errors.Is(err, fs.ErrClosed) is
// true of it.
var ErrClosed error = errClosed{}

// ErrNotSupported is wrapped by the errors of squirrel's calls that have no
// meaning on acorn (named per-key tags): they fail, never do nothing.
var ErrNotSupported = errors.New("not supported by acorn")

// ForeignValueError is returned by ReadAll (ReadFull and ReadAt, which read
// stored bytes, return a marked TEXT's bytes as they are; of a number they
// return it too) for a value that is not bytes in any language: a number, or a value a face
// of another language marked as its own (docs/cache.md, "Values across
// languages").  Read it with SQL, or with the face that wrote it.
type ForeignValueError struct {
	Key  string
	Kind string // "INTEGER", "REAL", or the mark's format: "a Python pickle", ...
}

func (e *ForeignValueError) Error() string {
	return fmt.Sprintf("acorn: the value of %q is %s, not bytes", e.Key, e.Kind)
}

// joinErr keeps both errors' messages (Go 1.19 has no errors.Join); the first
// is the one errors.Is and errors.As see.
func joinErr(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &joined{a, b}
}

type joined struct{ a, b error }

func (j *joined) Error() string { return j.a.Error() + "; then: " + j.b.Error() }
func (j *joined) Unwrap() error { return j.a }
