package acorn

// Loading: a database/sql driver that loads acorn into every connection.
//
// DriverName is registered when the package is imported.  The extension is
// found by FindExtension the first time a connection is opened, so a program
// may set ACORN_EXTENSION in main() before its first sql.Open.

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// DriverName is the database/sql driver that loads acorn into each connection
// it opens: sql.Open(acorn.DriverName, "app.db").  Its DSNs are mattn's
// (https://github.com/mattn/go-sqlite3#connection-string).
const DriverName = "sqlite3_acorn"

// Version is the acorn release this package is, the VERSION of its
// repository (a test holds them together).
const Version = "0.3.0"

// ExtensionEnv names the environment variable that gives acorn.so's path.
const ExtensionEnv = "ACORN_EXTENSION"

func init() {
	sql.Register(DriverName, &Driver{})
}

// Driver is mattn's SQLiteDriver with acorn loaded into every connection.
type Driver struct {
	// Extension is the path of acorn.so; empty, FindExtension finds it.
	Extension string
	// ConnectHook, if set, runs on each new connection after acorn is loaded.
	ConnectHook func(*sqlite3.SQLiteConn) error
}

// Open opens a connection with acorn loaded: the database/sql driver method.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	ext := d.Extension
	if ext == "" {
		var err error
		if ext, err = FindExtension(); err != nil {
			return nil, err
		}
	}
	inner := &sqlite3.SQLiteDriver{Extensions: []string{ext}, ConnectHook: d.ConnectHook}
	return inner.Open(dsn)
}

// Register registers a driver under name that loads the acorn.so at
// extension (empty: found by FindExtension).  It fails, rather than panics
// as sql.Register does, if name is taken.
func Register(name, extension string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("acorn: Register: %v", r)
		}
	}()
	sql.Register(name, &Driver{Extension: extension})
	return nil
}

var found struct {
	sync.Mutex
	path string
}

// FindExtension returns the path of acorn.so, looking in this order:
//
//  1. the file the environment variable ACORN_EXTENSION names (if it is set,
//     nowhere else: a wrong setting is an error, not a fallback);
//  2. next to the package: acorn.so in this package's source directory, then
//     dist/acorn.so of the repository the package sits in (ext/packages/go);
//     not in a program built with -trimpath, which does not know that
//     directory;
//  3. acorn.so next to the running executable;
//  4. where the Debian package acorn installs it: the multiarch library
//     directory (/usr/lib/x86_64-linux-gnu/acorn.so on amd64), then
//     /usr/local/lib and /usr/lib.
//
// The error names every place it looked.  A path found is remembered for the
// life of the process.
func FindExtension() (string, error) {
	found.Lock()
	defer found.Unlock()
	if found.path != "" {
		return found.path, nil
	}
	p, err := findExtension(os.Getenv(ExtensionEnv), extensionPlaces())
	if err == nil {
		found.path = p
	}
	return p, err
}

// extensionPlaces lists the candidate files of steps 2 to 4.
func extensionPlaces() []string {
	var places []string
	// Built with -trimpath, the file's name is relative
	// ("sqlite-acorn/acorn@v0.0.0/driver.go"): places made from it would be
	// looked up in the working directory, so there are none.
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Dir(file)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real // a GOPATH entry may be a link to ext/packages/go
		}
		places = append(places, filepath.Join(dir, "acorn.so"),
			filepath.Join(dir, "..", "..", "..", "dist", "acorn.so"))
	}
	if exe, err := os.Executable(); err == nil {
		places = append(places, filepath.Join(filepath.Dir(exe), "acorn.so"))
	}
	if t, ok := multiarch[runtime.GOARCH]; ok {
		places = append(places, "/usr/lib/"+t+"/acorn.so")
	}
	return append(places, "/usr/local/lib/acorn.so", "/usr/lib/acorn.so")
}

var multiarch = map[string]string{
	"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu", "386": "i386-linux-gnu",
	"arm": "arm-linux-gnueabihf", "riscv64": "riscv64-linux-gnu", "ppc64le": "powerpc64le-linux-gnu",
	"s390x": "s390x-linux-gnu",
}

func findExtension(env string, places []string) (string, error) {
	if env != "" {
		if isFile(env) {
			return env, nil
		}
		return "", fmt.Errorf("acorn: %s=%q, and that is not a file; unset it to search %s",
			ExtensionEnv, env, strings.Join(places, ", "))
	}
	for _, p := range places {
		if isFile(p) {
			return filepath.Clean(p), nil
		}
	}
	return "", fmt.Errorf("acorn: acorn.so not found: %s is not set, and none of %s exists; "+
		"set %s to its path or install the Debian package acorn",
		ExtensionEnv, strings.Join(places, ", "), ExtensionEnv)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
