// Command bindings-go loads acorn into Go's mattn/go-sqlite3 driver and calls
// uuid7().  It is built in GOPATH mode against Debian's packages
// golang-go and golang-github-mattn-go-sqlite3-dev (which links the system
// libsqlite3), so it needs no module download:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode:$PWD/build/go go build -o build/bindings-go ./tests/bindings/go
//	build/bindings-go ./dist/acorn
//
// tests/bindings/run does this.  It prints "PASS go ..." or "FAIL go: reason".
package main

import (
	"database/sql"
	"fmt"
	"os"
	"regexp"

	sqlite3 "github.com/mattn/go-sqlite3"
)

const name = "go"

var v7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func check(path string) (string, error) {
	// The driver loads each listed extension on every new connection; the
	// entry point sqlite3_acorn_init is derived from the file name.
	sql.Register("sqlite3_acorn", &sqlite3.SQLiteDriver{Extensions: []string{path}})
	db, err := sql.Open("sqlite3_acorn", ":memory:")
	if err != nil {
		return "", err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	var a, b, libver string
	var ver int64
	if err := db.QueryRow("SELECT uuid7()").Scan(&a); err != nil {
		return "", err
	}
	if err := db.QueryRow("SELECT uuid7()").Scan(&b); err != nil {
		return "", err
	}
	if err := db.QueryRow("SELECT uuid_version(?), sqlite_version()", a).Scan(&ver, &libver); err != nil {
		return "", err
	}
	for _, u := range []string{a, b} {
		if len(u) != 36 || !v7.MatchString(u) {
			return "", fmt.Errorf("uuid7() returned %q, not a version-7 UUID", u)
		}
	}
	if ver != 7 {
		return "", fmt.Errorf("uuid_version(uuid7()) = %d, expected 7", ver)
	}
	if !(a < b) {
		return "", fmt.Errorf("uuid7() not increasing: %s then %s", a, b)
	}
	return fmt.Sprintf("(mattn/go-sqlite3, SQLite %s): %s", libver, a), nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bindings-go PATH_TO_EXTENSION")
		os.Exit(2)
	}
	detail, err := check(os.Args[1])
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", name, err)
		os.Exit(1)
	}
	fmt.Printf("PASS %s %s\n", name, detail)
}
