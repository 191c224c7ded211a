"""The installed sqlite_acorn wheel, used as a user would.

Usage: python python_test.py load       load(conn) and call the extension
       python python_test.py noext      on a Python whose sqlite3 cannot load
                                        extensions: the error load() gives
Prints "PASS wheel-<mode> ..." or "FAIL wheel-<mode>: reason"; exits 0 or 1.
"""

import importlib.metadata
import os
import platform
import re
import sqlite3
import sys

V7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def load():
    import sqlite_acorn

    version = importlib.metadata.version("sqlite-acorn")
    check(sqlite_acorn.__version__ == version, f"__version__ {sqlite_acorn.__version__} != {version}")
    path = sqlite_acorn.loadable_path()
    check(os.path.isabs(path) and os.path.basename(path) == "acorn", f"loadable_path() {path}")
    check(os.path.isfile(path + ".so"), f"{path}.so is not a file")
    check(sys.prefix in path, f"{path} is not inside the venv {sys.prefix}")

    conn = sqlite3.connect(":memory:")
    sqlite_acorn.load(conn)
    one = lambda sql, *args: conn.execute(sql, args).fetchone()[0]
    a, b = one("SELECT uuid7()"), one("SELECT uuid7()")
    check(V7.match(a) is not None, f"uuid7() returned {a!r}")
    check(a < b, f"uuid7() not increasing: {a} then {b}")
    check(one("SELECT acorn_version()") == "v" + version,
          f"acorn_version() {one('SELECT acorn_version()')} != v{version}")

    # load() leaves SQL's load_extension() disabled.
    try:
        conn.execute("SELECT load_extension('nothing')")
        raise AssertionError("load_extension() is still enabled after load()")
    except sqlite3.OperationalError as e:
        check("not authorized" in str(e), f"load_extension() after load(): {e}")

    conn.execute("CREATE VIRTUAL TABLE c USING cache(capacity = '1MiB')")
    conn.execute("INSERT INTO c(key, value, expires) VALUES (?, ?, ?)",
                 ("greeting", b"hello, world", 4102444800000))
    check(one("SELECT value FROM c WHERE key = ?", "greeting") == b"hello, world", "cache get")
    check(one("SELECT cache_read('c', 'greeting', 7, 5)") == b"world", "cache_read")
    conn.execute("INSERT INTO c(c) VALUES ('integrity_check')")

    rows, batch = conn.execute(
        "SELECT rows_written, batch FROM bench_insert"
        " WHERE rows = ? AND threads = ? AND batch = ? AND storage = ?",
        (500, 1, 50, "memory")).fetchone()
    check((rows, batch) == (500, 50), f"bench_insert: rows_written {rows}, batch {batch}")

    # The error on a platform without a binary names it.
    real = sys.platform, platform.machine
    sys.platform, platform.machine = "darwin", lambda: "arm64"
    try:
        sqlite_acorn.loadable_path()
        raise AssertionError("loadable_path() on darwin-arm64 did not fail")
    except OSError as e:
        want = ("sqlite_acorn: no acorn binary for platform darwin, arch arm64; this package has "
                "one for linux-x86_64. Build acorn from source (make) and load its acorn.so with "
                "conn.load_extension().")
        check(str(e) == want, f"unsupported platform message: {e}")
    finally:
        sys.platform, platform.machine = real

    return (f"(Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}): "
            f"acorn_version() v{version} = package {version}, {a}")


def noext():
    import sqlite_acorn

    conn = sqlite3.connect(":memory:")
    check(not hasattr(conn, "enable_load_extension"),
          f"{sys.executable} can load extensions: not the interpreter this test needs")
    try:
        sqlite_acorn.load(conn)
    except sqlite3.NotSupportedError as e:
        want = (f"sqlite_acorn: this Python's sqlite3 module cannot load extensions "
                f"({sys.executable} was built without --enable-loadable-sqlite-extensions, "
                "so sqlite3.Connection has no enable_load_extension). Use a Python built with "
                "it, such as Debian's or Ubuntu's /usr/bin/python3, or build this one again "
                "with that configure option.")
        check(str(e) == want, f"message: {e}")
        return f"(Python {platform.python_version()} at {sys.executable}): {e}"
    raise AssertionError("load() did not raise sqlite3.NotSupportedError")


def main():
    modes = {"load": load, "noext": noext}
    if len(sys.argv) != 2 or sys.argv[1] not in modes:
        print("usage: python_test.py load|noext", file=sys.stderr)
        return 2
    name = "wheel-" + sys.argv[1]
    try:
        print(f"PASS {name} {modes[sys.argv[1]]()}")
    except Exception as e:  # one line per failure, whatever it is
        print(f"FAIL {name}: {type(e).__name__}: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
