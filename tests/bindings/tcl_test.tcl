# Load acorn from Tcl's sqlite3 package (Debian: libsqlite3-tcl) and call
# uuid7().  Usage: tclsh tcl_test.tcl PATH  (PATH without .so).
# Prints "PASS tcl ..." or "FAIL tcl: reason".
set name tcl
proc fail {msg} {
    puts "FAIL $::name: $msg"
    exit 1
}
if {$argc != 1} { fail "usage: tclsh tcl_test.tcl PATH_TO_EXTENSION" }
set path [lindex $argv 0]
if {[catch {package require sqlite3} pkgver]} {
    fail "package require sqlite3: $pkgver (apt-get install libsqlite3-tcl)"
}
set re {^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$}
if {[catch {
    sqlite3 db :memory:
    db enable_load_extension 1
    db eval {SELECT load_extension($path)}
    db enable_load_extension 0
    set a [db onecolumn {SELECT uuid7()}]
    set b [db onecolumn {SELECT uuid7()}]
    set ver [db onecolumn {SELECT uuid_version($a)}]
    set libver [db onecolumn {SELECT sqlite_version()}]
    db close
} err]} {
    fail $err
}
foreach u [list $a $b] {
    if {[string length $u] != 36 || ![regexp $re $u]} {
        fail "uuid7() returned '$u', not a version-7 UUID"
    }
}
if {$ver != 7} { fail "uuid_version(uuid7()) = $ver, expected 7" }
if {[string compare $a $b] >= 0} { fail "uuid7() not increasing: $a then $b" }
puts "PASS $name (Tcl [info patchlevel], sqlite3 package $pkgver, SQLite $libver): $a"
