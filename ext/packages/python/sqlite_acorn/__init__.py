"""acorn, a loadable SQLite extension, for Python's sqlite3 module.

    import sqlite3, sqlite_acorn
    conn = sqlite3.connect("app.db")
    sqlite_acorn.load(conn)
    conn.execute("SELECT uuid7()").fetchone()

loadable_path() is the path of the bundled shared object without its
suffix (SQLite adds ".so"), for hosts that load extensions themselves.
load(conn) turns extension loading on for the one call and off again, so
SQL's load_extension() stays disabled on the connection afterwards.

Cache(path, ...) is acorn's cache table as an object with the methods of
diskcache.Cache (get, set, add, delete, touch, incr, memoize, ...), and
sqlite_acorn.django.AcornCache a Django cache backend on it.
"""

import os
import platform
import sqlite3
import sys

__version__ = "@VERSION@"
__all__ = ["loadable_path", "load", "Cache", "CacheStats", "ForeignValueError", "__version__"]

# (sys.platform prefix, platform.machine()) pairs this wheel has a binary for.
_PLATFORMS = (("linux", "x86_64"),)


def loadable_path() -> str:
    """Absolute path of acorn's shared object, without the ".so" suffix.

    Raises OSError naming the platform and arch when there is no binary
    for them.
    """
    machine = platform.machine()
    if not any(sys.platform.startswith(p) and machine == m for p, m in _PLATFORMS):
        raise OSError(
            f"sqlite_acorn: no acorn binary for platform {sys.platform}, arch {machine}; "
            "this package has one for "
            + ", ".join(f"{p}-{m}" for p, m in _PLATFORMS)
            + ". Build acorn from source (make) and load its acorn.so with "
            "conn.load_extension()."
        )
    base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "acorn")
    if not os.path.exists(base + ".so"):
        raise OSError(f"sqlite_acorn: {base}.so is missing; reinstall sqlite-acorn")
    return base


def load(conn: sqlite3.Connection) -> None:
    """Load acorn into conn, a sqlite3.Connection.

    Raises TypeError for anything but a sqlite3.Connection, and
    sqlite3.NotSupportedError when this Python's sqlite3 module was built
    without extension loading.
    """
    if not isinstance(conn, sqlite3.Connection):
        t = type(conn)
        raise TypeError(
            "sqlite_acorn.load: expected a sqlite3.Connection, got "
            + (t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}")
            + "; with another driver, load the file sqlite_acorn.loadable_path() names"
            " with that driver's own call")
    enable = getattr(conn, "enable_load_extension", None)
    if enable is None:
        raise sqlite3.NotSupportedError(
            "sqlite_acorn: this Python's sqlite3 module cannot load extensions "
            f"({sys.executable} was built without --enable-loadable-sqlite-extensions, "
            "so sqlite3.Connection has no enable_load_extension). Use a Python "
            "built with it, such as Debian's or Ubuntu's /usr/bin/python3, or "
            "build this one again with that configure option."
        )
    path = loadable_path()
    enable(True)
    try:
        conn.load_extension(path)
    finally:
        enable(False)


from ._cache import Cache, CacheStats, ForeignValueError  # noqa: E402  (it uses loadable_path)
