"""Load acorn from Python's sqlite3 module and call uuid7().

Run with Debian's /usr/bin/python3: a Python built without
--enable-loadable-sqlite-extensions (pyenv's default) has no
enable_load_extension.  Usage: python_test.py PATH  (PATH without .so; the
entry point sqlite3_acorn_init is derived from the file name, which Python 3.11
needs because it has no entrypoint= argument).
"""
import re
import sqlite3
import sys

NAME = "python"
V7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def main(path):
    db = sqlite3.connect(":memory:")
    if not hasattr(db, "enable_load_extension"):
        return "this Python's sqlite3 cannot load extensions (%s)" % sys.executable
    db.enable_load_extension(True)
    db.load_extension(path)
    db.enable_load_extension(False)
    a = db.execute("SELECT uuid7()").fetchone()[0]
    b = db.execute("SELECT uuid7()").fetchone()[0]
    ver = db.execute("SELECT uuid_version(?)", (a,)).fetchone()[0]
    for u in (a, b):
        if not isinstance(u, str) or len(u) != 36 or not V7.match(u):
            return "uuid7() returned %r, not a version-7 UUID" % (u,)
    if ver != 7:
        return "uuid_version(uuid7()) = %r, expected 7" % (ver,)
    if not a < b:
        return "uuid7() not increasing: %s then %s" % (a, b)
    print("PASS %s (Python %s, SQLite %s): %s"
          % (NAME, sys.version.split()[0], sqlite3.sqlite_version, a))
    return None


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python_test.py PATH_TO_EXTENSION")
    try:
        err = main(sys.argv[1])
    except Exception as e:  # any error is a FAIL with its message
        err = "%s: %s" % (type(e).__name__, e)
    if err:
        print("FAIL %s: %s" % (NAME, err))
        sys.exit(1)
