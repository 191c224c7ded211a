"""sqlite_acorn.Cache and sqlite_acorn.django.AcornCache, used as their users would.

Usage: python python_cache_test.py cache|memoize|django DIR
       (DIR: an empty scratch directory)
  cache    every method of Cache, the stored form of each type of value,
           options on a new and an existing table, threads, fork
  memoize  one caller computes while threads and processes wait (the order
           made certain with pipes), a computer killed while it holds the
           lock, a lock of another machine, an exception, a result larger
           than the capacity (the waiters compute at once)
  django   AcornCache through django.core.cache.caches: every method, each
           timeout case, versions, KEY_PREFIX, KEY_FUNCTION, key warnings
Prints "PASS wheel-<mode> ..." or "FAIL wheel-<mode>: reason"; exits 0 or 1.
Run by tests/dist/run (the wheel in a venv) and tests/python.bats (the
package from the source tree).
"""

import math
import os
import select
import signal
import sqlite3
import sys
import threading
import time
import warnings


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def eq(got, want, what):
    if got != want or type(got) is not type(want):
        raise AssertionError(f"{what}: got {got!r}, expected {want!r}")


def raises(exc, message, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        if message is not None and str(e) != message:
            raise AssertionError(f"{fn.__name__}: message {str(e)!r}, expected {message!r}")
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)}{args} did not raise {exc.__name__}")


def now_ms():
    return int(time.time() * 1000)


def lifetime_set_by(fn, path, table, key, ttl):
    """Call fn(); the entry's expires must be ttl seconds after a time
    within the call (acorn reads the clock once per write)."""
    t0 = now_ms()
    fn()
    t1 = now_ms()
    (e,), = sql(path, f"SELECT expires FROM {table} WHERE key = ?", key)
    check(t0 + ttl * 1000 <= e <= t1 + ttl * 1000 + 1,
          f"{key}: expires {e}, expected {ttl} s after a time in {t0}..{t1}")


def sql(path, q, *args):
    """One query on a connection of its own (acorn loaded), all rows."""
    import sqlite_acorn
    c = sqlite3.connect(path, isolation_level=None)
    sqlite_acorn.load(c)
    c.text_factory = bytes
    try:
        return c.execute(q, args).fetchall()
    finally:
        c.close()


# --------------------------------------------------------------------- cache
def cache_values(d):
    from sqlite_acorn import Cache
    db = os.path.join(d, "values.db")
    c = Cache(db)
    values = [b"", b"\x00\xff", b"\xffp not a pickle", "", "h\u00e9llo \u2603", "\xff",
              "\x00nul", 0, -7, 2**100, -(2**70), 1.5, -0.0, math.inf, None, True, False,
              {"k": [1, 2.5]}, [], bytearray(b"ba"), memoryview(b"mv")]
    for i, v in enumerate(values):
        check(c.set(i, v) is True, "set returns True")
    for i, v in enumerate(values):
        got = c.get(i)
        want = bytes(v) if type(v) in (bytearray, memoryview) else v
        eq(got, want, f"value {v!r} read back")
    eq(math.copysign(1, c.get(12)), -1.0, "-0.0 keeps its sign")
    check(math.isnan(c.get(c.set("nan", math.nan) and "nan")), "nan read back")
    # the convention of docs/cache.md (tests/python.bats checks every row)
    rows = dict((k, (t, v)) for k, t, v in sql(
        db, "SELECT key, typeof(value), CAST(value AS BLOB) FROM cache WHERE typeof(key) = 'integer'"))
    eq(rows[0], (b"blob", b""), "b'' stored")
    eq(rows[1], (b"blob", b"\x00\xff"), "bytes stored")
    eq(rows[4], (b"text", "h\u00e9llo \u2603".encode()), "str stored")
    eq(rows[7], (b"integer", b"0"), "int stored")
    eq(rows[9], (b"text", b"\xffi" + str(2**100).encode()), "big int stored")
    eq(rows[11], (b"real", b"1.5"), "float stored")
    eq(rows[14], (b"text", b"\xffjnull"), "None stored")
    eq(rows[15], (b"text", b"\xffjtrue"), "True stored")
    eq(rows[17], (b"text", b'\xffj{"k":[1,2.5]}'), "dict stored")
    eq(rows[19], (b"blob", b"ba"), "bytearray stored")
    # other values need pickle=True, and then read back in any Cache
    for v in [(1, "a"), frozenset({3}), {1: "a"}, [2**53], {"a": (1,)}, [math.inf],
              {"a": math.nan}]:
        raises(TypeError, None, c.set, "p", v)
        check("p" not in c, "nothing stored")
    e = raises(TypeError, None, c.add, "p", (1, "a"))
    eq(str(e), "sqlite_acorn.Cache.add: a tuple is not among the values every language reads"
       " (str, bytes, int, float, bool, None, and lists and str-keyed dicts of them); pass"
       " Cache(..., pickle=True) to store it pickled, for Python alone", "add's TypeError")
    e = raises(TypeError, None, c.set, "p", {"a": [1, {"b": 2**60}]})
    eq(str(e), "sqlite_acorn.Cache.set: this dict holds the int 1152921504606846976, beyond"
       " 2**53-1, which JSON does not keep for every language; pass Cache(..., pickle=True) to"
       " store it pickled, for Python alone", "set's TypeError inside a dict")
    p = Cache(db, pickle=True)
    for v in [(1, "a"), frozenset({3}), {1: "a"}, [2**53], {"a": math.inf}]:
        p.set("p", v)
        eq(c.get("p"), v, f"pickled {v!r} read back without pickle=True")
        eq(sql(db, "SELECT substr(CAST(value AS BLOB), 1, 2) FROM cache WHERE key = 'p'"),
           [(b"\xffp",)], f"{v!r} pickled")
    p.set("p", [1, "a"])
    eq(sql(db, "SELECT CAST(value AS BLOB) FROM cache WHERE key = 'p'"), [(b'\xffj[1,"a"]',)],
       "pickle=True stores a portable value as JSON still")
    raises(TypeError, "sqlite_acorn.Cache: pickle must be True or False, got 1", Cache, db,
           pickle=1)
    # what SQL stores is read as str, bytes, int and float
    sql(db, "INSERT INTO cache(key, value) VALUES ('from-sql', 'text'), ('blob-sql', x'ff01'),"
        " ('int-sql', 5), ('real-sql', 5.0)")
    eq(c.get("from-sql"), "text", "TEXT from SQL")
    eq(c.get("blob-sql"), b"\xff\x01", "BLOB from SQL")
    eq((c.get("int-sql"), c.get("real-sql")), (5, 5.0), "INTEGER and REAL from SQL")
    # keys: str, bytes and int are three keys; others are refused
    c.set("1", "s")
    c.set(b"1", "b")
    c.set(1, "i")
    eq((c["1"], c[b"1"], c[1]), ("s", "b", "i"), "keys '1', b'1', 1")
    raises(TypeError, "sqlite_acorn.Cache.set: key must be str, bytes or int, got float",
           c.set, 1.0, "x")
    raises(TypeError, "sqlite_acorn.Cache.get: key must be str, bytes or int, got tuple",
           c.get, (1,))
    raises(TypeError, "sqlite_acorn.Cache.get: key must be str, bytes or int, got bool",
           c.get, True)
    raises(ValueError, "sqlite_acorn.Cache.set: an int key must be in -2**63..2**63-1, got "
           + str(2**63), c.set, 2**63, "x")
    eq(c.get(-(2**63), "none"), "none", "smallest int key")
    c.close()


def cache_methods(d):
    from sqlite_acorn import Cache, CacheStats
    db = os.path.join(d, "methods.db")
    with Cache(db, capacity="1MiB") as c:
        eq(c.get("k"), None, "get of a missing key")
        eq(c.get("k", 5), 5, "get's default")
        raises(KeyError, "'k'", lambda: c["k"])
        c["k"] = "v"
        eq(c["k"], "v", "c[k] after c[k] = v")
        check("k" in c and "x" not in c, "in")
        eq(len(c), 1, "len")
        del c["k"]
        raises(KeyError, "'k'", c.__delitem__, "k")
        eq((c.delete("k"), c.set("k", 1), c.delete("k")), (False, True, True), "delete")
        # add
        eq(c.add("a", "first"), True, "add of a new key")
        eq(c.add("a", "second"), False, "add of a live key")
        eq(c["a"], "first", "add kept the value")
        c.set("gone", "x", expire=0)
        eq(c.add("gone", "again"), True, "add over an expired entry")
        eq(c["gone"], "again", "add over an expired entry stored")
        # expire is the ttl column; expire 0 is expired at once
        c.set("e", "x", expire=30)
        c.set("f", "x", expire=0.25)
        c.set("z", "x", expire=0)
        rows = dict(sql(db, "SELECT key, expires - created FROM cache WHERE key IN ('e', 'f', 'a')"))
        eq(rows, {b"e": 30000, b"f": 250, b"a": None}, "expires - created")
        eq(c.get("z", "none"), "none", "expire=0")
        check("z" not in c, "expire=0 not in")
        raises(ValueError, "sqlite_acorn.Cache.set: expire must be None or a number of seconds"
               " from 0 to 1000000000000, got -1", c.set, "k", "v", expire=-1)
        raises(ValueError, "sqlite_acorn.Cache.set: expire must be None or a number of seconds"
               " from 0 to 1000000000000, got '1h'", c.set, "k", "v", expire="1h")
        # touch
        lifetime_set_by(lambda: eq(c.touch("e", 100), True, "touch"), db, "cache", "e", 100)
        eq(c.touch("e"), True, "touch for ever")
        eq(sql(db, "SELECT expires FROM cache WHERE key = 'e'"), [(None,)], "touch(None)")
        eq(c.touch("nope", 5), False, "touch of a missing key")
        eq(c.touch("e", 0), True, "touch(0)")
        check("e" not in c, "touch(0) expires it")
        # incr / decr
        eq(c.incr("n"), 1, "incr of a missing key")
        eq(c.incr("n", 10), 11, "incr by 10")
        eq(c.decr("n", 2), 9, "decr")
        eq(c["n"], 9, "the stored count")
        eq(sql(db, "SELECT typeof(value), value FROM cache WHERE key = 'n'"), [(b"integer", 9)],
           "a count is an INTEGER")
        c.set("max", 2**63 - 1)
        eq(c.incr("max"), 2**63, "incr past 64 bits")
        eq(sql(db, "SELECT CAST(value AS BLOB) FROM cache WHERE key = 'max'"),
           [(b"\xffi9223372036854775808",)], "stored as a marked TEXT past 64 bits")
        eq(c.decr("max"), 2**63 - 1, "decr back into 64 bits")
        eq(sql(db, "SELECT typeof(value) FROM cache WHERE key = 'max'"), [(b"integer",)],
           "an INTEGER again")
        eq(c.incr("n", 2**70), 9 + 2**70, "incr by more than 64 bits")
        sql(db, "UPDATE cache SET value = value + 1 WHERE key = 'm'")
        c.set("sqlcount", 1)
        sql(db, "UPDATE cache SET value = value + 1 WHERE key = 'sqlcount'")
        eq(c.incr("sqlcount"), 3, "SQL and incr count together")
        eq(c.decr("m", 1, default=10), 9, "decr's default")
        c.set("b", True)
        raises(TypeError, "sqlite_acorn.Cache.incr: the value of 'b' is a bool, not an int",
               c.incr, "b")
        raises(KeyError, "'none'", c.incr, "none", default=None)
        c.set("s", "text")
        raises(TypeError, "sqlite_acorn.Cache.incr: the value of 's' is a str, not an int",
               c.incr, "s")
        c.set("t", 5, expire=100)
        before = sql(db, "SELECT expires FROM cache WHERE key = 't'")
        eq(c.incr("t"), 6, "incr of an entry with a lifetime")
        eq(sql(db, "SELECT expires FROM cache WHERE key = 't'"), before, "incr keeps expires")
        raises(TypeError, "sqlite_acorn.Cache.incr: delta must be an int, got float",
               c.incr, "n", 1.5)
        # decr's errors name decr
        raises(TypeError, "sqlite_acorn.Cache.decr: key must be str, bytes or int, got NoneType",
               c.decr, None)
        raises(TypeError, "sqlite_acorn.Cache.decr: default must be an int or None, got str",
               c.decr, "n", 1, "0")
        raises(TypeError, "sqlite_acorn.Cache.decr: the value of 's' is a str, not an int",
               c.decr, "s")
        # tags and evict
        c.set("u1/a", "x", tag="user:1")
        c.set("u1/b", "y", tag="user:1")
        c.set("u2/a", "z", tag="user:2")
        eq(sql(db, "SELECT key FROM cache WHERE tag = 'user:1' ORDER BY key"),
           [(b"u1/a",), (b"u1/b",)], "tags stored")
        eq(c.evict("user:1"), 2, "evict")
        eq(c.evict("user:1"), 0, "evict again")
        check("u2/a" in c and "u1/a" not in c, "evict took one tag")
        raises(TypeError, "sqlite_acorn.Cache.set: tag must be a str or None, got int",
               c.set, "k", "v", tag=1)
        # stats: contains and len are not uses, get is
        s0 = c.stats()
        check(isinstance(s0, CacheStats), "stats() is a CacheStats")
        "u2/a" in c
        len(c)
        eq(c.stats().hits, s0.hits, "in and len count no hit")
        c.get("u2/a")
        c.get("missing")
        s1 = c.stats()
        eq((s1.hits - s0.hits, s1.misses - s0.misses), (1, 1), "get counts a hit and a miss")
        eq(s1.capacity, 1048576, "stats capacity")
        live = len(c)
        eq(c.clear(), live, "clear returns the live entries")
        eq(len(c), 0, "len after clear")
        # iteration: the live keys, not a use
        c.set("b", 1, expire=60, tag="t")
        c.set("a", b"xy")
        c.set(3, "x")
        c.set(b"k", "y")
        c.set("gone", "z", expire=0)
        s0 = c.stats()
        eq(list(c), ["b", "a", 3, b"k"], "iter: the live keys in the order set")
        eq(list(reversed(c)), [b"k", 3, "a", "b"], "reversed")
        eq(list(c.iterkeys()), [3, "a", "b", b"k"], "iterkeys in SQLite's order")
        eq(list(c.iterkeys(reverse=True)), [b"k", "b", "a", 3], "iterkeys reversed")
        eq((c.stats().hits, c.stats().misses), (s0.hits, s0.misses), "iteration is no use")
        eq(sorted(map(str, c)), sorted(map(str, c.iterkeys())), "the same keys")
        # get with expire_time, tag, read
        t0 = time.time()
        v, when = c.get("b", expire_time=True)
        check(v == 1 and type(when) is float and t0 + 58 < when < t0 + 61,
              f"get expire_time: {when!r}")
        eq(c.get("b", tag=True), (1, "t"), "get tag")
        eq(c.get("b", expire_time=True, tag=True), (1, when, "t"), "get expire_time and tag")
        eq(c.get("a", expire_time=True, tag=True), (b"xy", None, None), "no expiry, no tag")
        eq(c.get("nope", 5, expire_time=True, tag=True), (5, None, None), "a miss")
        eq(c.get("nope", tag=True), (None, None), "a miss with tag")
        f = c.get("a", read=True)
        check(hasattr(f, "read") and f.read() == b"xy", "read=True gives a file of the bytes")
        eq(c.get("nope", 0, read=True), 0, "read=True of a missing key")
        raises(TypeError, "sqlite_acorn.Cache.get: read=True reads a bytes value, and the value"
               " of 3 is a str", c.get, 3, read=True)
        raises(TypeError, None, c.get, "a", retry=True)
        s1 = c.stats()
        eq((s1.hits - s0.hits, s1.misses - s0.misses), (6, 3), "gets with flags count uses")
        # pop: the value and the entry's lifetime and tag, then it is gone
        eq(c.pop("b", expire_time=True, tag=True), (1, when, "t"), "pop with both")
        eq(("b" in c, c.pop("b"), c.pop("b", 7, tag=True)), (False, None, (7, None)),
           "pop of a missing key")
        eq(c.pop("a"), b"xy", "pop")
        eq(len(c), 2, "pop deleted")
        # expire: removes the expired entries, says how many
        # (each write reclaims what has expired before it: one is left)
        c.set("x1", 1, expire=0)
        eq(sql(db, "SELECT entries FROM cache_stats('cache')"), [(3,)], "one expired stays")
        eq(c.expire(), 1, "expire removed it")
        eq((c.expire(), sql(db, "SELECT entries FROM cache_stats('cache')")), (0, [(2,)]),
           "none left")
        # volume: pages and the -wal file
        pages = sql(db, "PRAGMA page_count")[0][0] * sql(db, "PRAGMA page_size")[0][0]
        eq(c.volume(), pages + os.path.getsize(db + "-wal"), "volume")
        # check: empty when all is well, else the broken invariant
        eq(c.check(), [], "check of a good table")
        raises(ValueError, None, c.check, fix=True)
        sql(db, "UPDATE cache_config SET bytes = bytes + 1")
        eq(c.check(), ["cache: integrity_check of \"cache\": bytes is 12 but the entries' sizes"
                       " sum to 11"], "check of a broken table")
        sql(db, "UPDATE cache_config SET bytes = bytes - 1")
        eq(c.check(), [], "mended")


def cache_options(d):
    from sqlite_acorn import Cache
    db = os.path.join(d, "options.db")
    # eviction in LRU order within capacity; an entry larger than it is refused
    c = Cache(db, table="small", capacity=100)
    for k in ("a", "b", "c"):
        c.set(k, b"x" * 29)
    c.get("a")
    c.set("d", b"x" * 29)
    eq(sql(db, "SELECT key FROM small"), [(b"a",), (b"c",), (b"d",)], "lru eviction")
    raises(ValueError, "sqlite_acorn.Cache.set: cache: entry of 104 bytes exceeds capacity of"
           " 100 bytes", c.set, "big", b"x" * 101)
    # an existing table: capacity applied by its command, fixed options checked
    c2 = Cache(db, table="small", capacity=1000)
    eq(c2.stats().capacity, 1000, "capacity applied to the existing table")
    eq(c2["a"], b"x" * 29, "existing entries kept")
    raises(ValueError, "sqlite_acorn.Cache: the table 'small' was created with policy 'lru',"
           " not 'fifo'; policy is fixed when a table is created", Cache, db, "small",
           policy="fifo")
    f = Cache(db, table="f", policy="fifo", recency_buffer=10, max_entries=2, feed=5,
              default_ttl="15m")
    eq(Cache(db, table="f").stats().hits, None, "fifo reopened without options")
    raises(ValueError, "sqlite_acorn.Cache: the table 'f' was created with recency_buffer '10',"
           " not '20'; recency_buffer is fixed when a table is created", Cache, db, "f",
           recency_buffer=20)
    for k in "abc":
        f.set(k, "v")
    eq(sql(db, "SELECT key, expires - created FROM f"), [(b"b", 900000), (b"c", 900000)],
       "max_entries and default_ttl")
    eq(sql(db, "SELECT key, reason FROM cache_evictions('f')"), [(b"a", b"entries")], "feed")
    Cache(db, table="f", default_ttl=0, max_entries=3)
    f.set("d", "v")
    eq(sql(db, "SELECT key, expires IS NULL FROM f"), [(b"b", 0), (b"c", 0), (b"d", 1)],
       "default_ttl and max_entries changed on an existing table")
    # bad input
    raises(TypeError, "sqlite_acorn.Cache: unknown option 'capacty'; accepted options are"
           " timeout, journal_mode, synchronous, wal_limit, pickle, capacity, recency_buffer,"
           " policy, autoflush, default_ttl, max_entries, feed", Cache, db, capacty=1)
    raises(ValueError, "sqlite_acorn.Cache: cache: bad capacity '0'; expected a positive number"
           " of bytes, optionally with a unit B, kB, MB, GB, KiB, MiB or GiB (e.g. 1048576,"
           " '64MiB' or '1.5GiB'; a fraction needs a unit above B), at most"
           " 4611686018427387904 bytes", Cache, db, "t0", capacity=0)
    raises(ValueError, "sqlite_acorn.Cache: bad capacity \"1'; DROP TABLE x\"; expected a whole"
           " number or a value such as '64MiB', '64 MiB', '15m', 'lru' (letters, digits, spaces,"
           " '_', '.', '+' and '-')", Cache, db, "t0", capacity="1'; DROP TABLE x")
    # whatever SQL's options take, with a space before the unit too
    eq(Cache(db, "sp", capacity="64 MB").stats().capacity, 64000000, "capacity '64 MB'")
    eq(Cache(db, "sp", capacity="64 MiB", default_ttl="15 m").stats().capacity, 67108864,
       "capacity '64 MiB' on an existing table")
    Cache(db, "sp").set("k", "v")
    eq(sql(db, "SELECT expires - created FROM sp"), [(900000,)], "default_ttl '15 m'")
    raises(ValueError, "sqlite_acorn.Cache: cache: bad capacity '64 MiB '; expected a positive"
           " number of bytes, optionally with a unit B, kB, MB, GB, KiB, MiB or GiB (e.g."
           " 1048576, '64MiB' or '1.5GiB'; a fraction needs a unit above B), at most"
           " 4611686018427387904 bytes", Cache, db, "t0", capacity="64 MiB ")
    # a path that cannot be opened is named
    raises(sqlite3.OperationalError, "sqlite_acorn.Cache: cannot open /nonexistent/dir/x.db"
           " (unable to open database file): the directory /nonexistent/dir does not exist",
           Cache, "/nonexistent/dir/x.db")
    raises(sqlite3.OperationalError, f"sqlite_acorn.Cache: cannot open {d} (unable to open"
           " database file): it is a directory", Cache, d)
    # load() wants a sqlite3.Connection
    import sqlite_acorn
    raises(TypeError, "sqlite_acorn.load: expected a sqlite3.Connection, got str; with another"
           " driver, load the file sqlite_acorn.loadable_path() names with that driver's own"
           " call", sqlite_acorn.load, "app.db")
    raises(TypeError, None, sqlite_acorn.load, sqlite3.connect(":memory:").cursor())
    raises(ValueError, "sqlite_acorn.Cache: path must name a file: each thread opens its own"
           " connection to it, and ':memory:' would give each its own empty database",
           Cache, ":memory:")
    raises(ValueError, "sqlite_acorn.Cache: table must be a name of letters, digits and '_'"
           " that does not start with a digit, got 'a.b'", Cache, db, "a.b")
    sql(db, "CREATE TABLE plain(x)")
    raises(ValueError, f"sqlite_acorn.Cache: {db} has a table 'plain' that is not a cache table",
           Cache, db, "plain")
    raises(ValueError, "sqlite_acorn.Cache: bad journal_mode 'wall'; expected None (the"
           " file's) or one of wal, delete, truncate, persist, memory", Cache, db,
           journal_mode="wall")
    eq(sql(db, "PRAGMA journal_mode"), [(b"wal",)], "journal_mode")
    # journal_mode None leaves the file's; wal_limit is each connection's bound
    j = os.path.join(d, "journal.db")
    Cache(j, journal_mode="delete").set("k", "v")
    c = Cache(j, journal_mode=None, wal_limit="1MiB")
    eq(c.get("k"), "v", "a get with the file's journal mode")
    eq(sql(j, "PRAGMA journal_mode"), [(b"delete",)], "journal_mode=None left it")
    eq(c._db().execute("SELECT cache_wal_limit()").fetchone()[0], 1048576, "wal_limit")
    raises(ValueError, "sqlite_acorn.Cache: cache_wal_limit: bad bound; expected 0 (no bound)"
           " or a number of bytes, optionally with a unit B, kB, MB, GB, KiB, MiB or GiB (e.g."
           " 67108864 or '64MiB'), at most 4611686018427387904 bytes", Cache, j, wal_limit="1XB")


def cache_threads_fork(d):
    from sqlite_acorn import Cache
    db = os.path.join(d, "threads.db")
    c = Cache(db)
    conns, errors = {}, []
    barrier = threading.Barrier(4)

    def work(i):
        try:
            barrier.wait()
            for j in range(200):
                c.set(f"{i}/{j}", j)
                eq(c.get(f"{i}/{j}"), j, "a thread reads its own set")
            conns[i] = id(c._db())
        except Exception as e:
            errors.append(e)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(not errors, f"threads: {errors}")
    eq(len(set(conns.values())), 4, "one connection per thread")
    eq(len(c), 800, "every thread's sets")
    # a child of fork() opens its own connection and leaves the parent's
    mine = c._db()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if c._db() is not mine and c.get("0/5") == 5 and c.set("child", "yes"):
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    eq(os.waitstatus_to_exitcode(status), 0, "the child's get and set")
    check(c._db() is mine, "the parent keeps its connection")
    eq(c.get("child"), "yes", "the parent reads the child's set")
    # close() closes every thread's connection; the next call opens another
    c.close()
    eq(c.get("child"), "yes", "a get after close")
    check(c._db() is not mine, "a new connection after close")
    c.close()
    # twelve processes start at once on one table, each giving a capacity
    # other than the stored one: none fails (its write waits for the lock)
    start = os.path.join(d, "start.db")
    Cache(start, capacity=50000).close()
    go_r, go_w = os.pipe()

    def starter(i):
        def run():
            os.read(go_r, 1)
            s = Cache(start, capacity=100000 + i * 1000)
            return 0 if s.set(f"k{i}", i) and s.get(f"k{i}") == i else 3
        return run
    pids = [fork(starter(i)) for i in range(12)]
    os.write(go_w, b"g" * 12)
    eq([exit_code(p) for p in pids], [0] * 12, "twelve processes started at once")


def cache_pieces(d):
    from sqlite_acorn import Cache
    db = os.path.join(d, "pieces.db")
    with Cache(db, capacity="1MiB") as c:
        eq(c.reserve("p", 65536, expire=60, tag="torrent"), True, "reserve")
        eq(sql(db, "SELECT tag, expires - created, size FROM cache"), [(b"torrent", 60000, 65537)],
           "reserve's tag, lifetime and size")
        for b in (3, 0, 2, 1):
            eq(c.write_at("p", b * 16384, bytes([b + 1]) * 16384), 16384, "write_at of a block")
        eq(c.read_at("p", 16383, 3), b"\x01\x02\x02", "read_at across blocks")
        eq((len(c.read_at("p", 65535, 10)), c.read_at("p", 70000, 1), c.read_at("x", 0, 1)),
           (1, b"", None), "read_at at the end, past it, of a missing key")
        eq(c.write_at("p", 0, bytearray(b"\x09")), 1, "write_at of a bytearray")
        eq(c.write_at("p", 1, memoryview(b"\x08")), 1, "write_at of a memoryview")
        eq(c.read_at("p", 0, 3), b"\x09\x08\x01", "what they wrote")
        raises(KeyError, "'x'", c.write_at, "x", 0, b"a")
        raises(ValueError, "sqlite_acorn.Cache.write_at: cannot write 1 bytes at offset 65536: the"
               " value holds 65536 bytes (a value keeps the size it was set with)",
               c.write_at, "p", 65536, b"a")
        raises(TypeError, "sqlite_acorn.Cache.write_at: data must be bytes, bytearray or"
               " memoryview, got str", c.write_at, "p", 0, "a")
        raises(ValueError, "sqlite_acorn.Cache.write_at: offset must be an int >= 0, got -1",
               c.write_at, "p", -1, b"a")
        raises(ValueError, "sqlite_acorn.Cache.read_at: length must be an int >= 0, got 1.5",
               c.read_at, "p", 0, 1.5)
        raises(ValueError, "sqlite_acorn.Cache.reserve: size must be an int from 0 to 2147483647"
               " (SQLite's largest value), got -1", c.reserve, "q", -1)
        raises(ValueError, "sqlite_acorn.Cache.reserve: cache: entry of 2097153 bytes exceeds"
               " capacity of 1048576 bytes", c.reserve, "q", 2 << 20)
        c.set("s", "text")
        raises(ValueError, "sqlite_acorn.Cache.write_at: the value is TEXT; only a BLOB value is"
               " written in place", c.write_at, "s", 0, b"a")
        eq(c.read_at("s", 1, 2), b"ex", "read_at of a str value: its bytes")
    # four processes write blocks of the same two pieces at once, each block
    # in its own write: every one waits for the others and lands
    for mode in ("wal", "delete"):
        path = os.path.join(d, f"pieces-{mode}.db")
        s = sqlite3.connect(path)
        s.execute("PRAGMA auto_vacuum = INCREMENTAL")
        s.close()
        with Cache(path, capacity="4MiB", journal_mode=mode) as c:
            c.reserve(0, 65536)
            c.reserve(1, 65536)
        go_r, go_w = os.pipe()

        def writer(i):
            def run():
                os.read(go_r, 1)
                w = Cache(path, journal_mode=mode)
                for p in (0, 1):
                    for b in range(i, 16, 4):
                        if w.write_at(p, b * 4096, bytes([p * 16 + b + 1]) * 4096) != 4096:
                            return 3
                return 0
            return run
        pids = [fork(writer(i)) for i in range(4)]
        os.write(go_w, b"g" * 4)
        eq([exit_code(p) for p in pids], [0] * 4, f"{mode}: four writers at once")
        with Cache(path, journal_mode=mode) as c:
            for p in (0, 1):
                for b in range(16):
                    eq(c.read_at(p, b * 4096, 4096), bytes([p * 16 + b + 1]) * 4096,
                       f"{mode}: piece {p} block {b}")
        eq(sql(path, "SELECT count(*) FROM cache"), [(2,)], f"{mode}: the pieces")


def wait_in_busy_handler(pid):
    """Return once process pid sleeps in SQLite's busy handler (its busy
    timeout sleeps in nanosleep: /proc/PID/wchan names it), or has ended
    (it failed instead of waiting: its exit code says so).  No bound of its
    own: the process gives up after its busy timeout anyway."""
    while True:
        try:
            with open(f"/proc/{pid}/wchan") as f:
                if "nanosleep" in f.read():
                    return
        except FileNotFoundError:
            return
        if open(f"/proc/{pid}/stat").read().split(") ")[1][:1] in "ZX":
            return
        time.sleep(0.0001)


def cache_transact(d):
    from sqlite_acorn import Cache
    db = os.path.join(d, "transact.db")
    c = Cache(db, capacity=1000)
    # the writes of the block are committed together, and read inside it
    with c.transact():
        c.set("a", 1)
        eq(c.incr("a"), 2, "incr inside transact")
        eq(c.get("a"), 2, "a get inside sees the block's writes")
        eq(sql(db, "SELECT count(*) FROM cache"), [(0,)], "another connection sees nothing yet")
    eq(sql(db, "SELECT key, value FROM cache"), [(b"a", 2)], "committed at the end")
    # an exception rolls back every write of the block
    try:
        with c.transact():
            c.set("b", 1)
            c.delete("a")
            raise RuntimeError("stop")
    except RuntimeError:
        pass
    eq((c.get("a"), c.get("b")), (2, None), "rolled back")
    # a method that fails inside takes back its own writes only
    with c.transact():
        c.set("b", 1)
        raises(ValueError, None, c.set, "big", b"x" * 2000)
        raises(TypeError, None, c.set, "t", (1,))
        c.set("c", 3)
    eq(sql(db, "SELECT key FROM cache ORDER BY key"), [(b"a",), (b"b",), (b"c",)],
       "the block's other writes kept")
    # nested: the inner block is a savepoint of the outer
    with c.transact():
        c.set("d", 4)
        try:
            with c.transact():
                c.set("e", 5)
                raise RuntimeError("inner")
        except RuntimeError:
            pass
        with c.transact():
            c.set("f", 6)
    eq([c.get(k) for k in "def"], [4, None, 6], "nested transact")
    eq(c._db().in_transaction, False, "no transaction left open")
    # memoize inside transact does not wait for a lock held elsewhere: the
    # holder could not store its result before the block ends
    @c.memoize(name="m")
    def m(x):
        return x + 1
    c.add(b"\x00lock" + m.__cache_key__(1), b"other-host 1 1 1-x", expire=3600)
    with c.transact():
        eq(m(1), 2, "computed at once inside transact")

    # two processes: b's reads see nothing of a's open block, and b's write
    # waits for it (b is seen asleep in the busy handler before a goes on)
    for mode in ("wal", "delete"):
        path = os.path.join(d, f"transact-{mode}.db")
        Cache(path, journal_mode=mode).close()
        in_r, in_w = os.pipe()
        go_r, go_w = os.pipe()
        read_r, read_w = os.pipe()

        def a():
            x = Cache(path, journal_mode=mode)
            with x.transact():
                x.set("a", 1)
                x.incr("n")
                os.write(in_w, b"1")
                os.read(go_r, 1)
                x.set("b", 2)
                x.incr("n")
            return 0

        def b():
            y = Cache(path, journal_mode=mode)
            seen = (y.get("a"), y.get("n"), len(y))
            os.write(read_w, b"r")
            n = y.incr("n")
            return 0 if (seen, n, y.get("a"), y.get("b")) == ((None, None, 0), 3, 1, 2) else 3

        pa = fork(a)
        read_n(in_r, 1, f"{mode}: a inside its block")
        pb = fork(b)
        read_n(read_r, 1, f"{mode}: b read")
        wait_in_busy_handler(pb)
        os.write(go_w, b"g")
        eq([exit_code(pa), exit_code(pb)], [0, 0],
           f"{mode}: b saw nothing of a's block, then waited for it and counted after it")
        for fd in (in_r, in_w, go_r, go_w, read_r, read_w):
            os.close(fd)


def run_cache(d):
    cache_values(d)
    cache_methods(d)
    cache_options(d)
    cache_threads_fork(d)
    cache_pieces(d)
    cache_transact(d)
    return "values, every method, options, threads and fork, pieces, transact"


# ------------------------------------------------------------------- memoize
class Waits:
    """Replaces sqlite_acorn._cache._pause: the first pause of each thread
    writes a byte to a pipe, so the test knows that caller found the lock
    taken and waits."""

    def __init__(self, fd):
        import sqlite_acorn._cache as m
        self.fd, self.local, self.real = fd, threading.local(), m._pause
        m._pause = self

    def __call__(self, seconds):
        if not getattr(self.local, "told", False):
            self.local.told = True
            os.write(self.fd, b"w")
        self.real(seconds)


def read_n(fd, n, what):
    """Read n bytes from the pipe fd: n callers reached a point.  A caller
    that never gets there fails the test after 60 s instead of hanging it
    (the bound only ends a failing run: a passing one never waits on it)."""
    got = b""
    deadline = time.monotonic() + 60
    while len(got) < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"{what}: {len(got)} of {n} after 60 s")
        b = os.read(fd, n - len(got))
        check(b, "a pipe closed early")
        got += b
    return got


def fork(fn):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = fn()
        except BaseException as e:
            print(f"child {os.getpid()}: {type(e).__name__}: {e}", file=sys.stderr)
        finally:
            os._exit(code)
    return pid


def exit_code(pid):
    """The exit code of child pid; one still running after 60 s is killed
    and fails the test (again only a bound for a failing run)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"process {pid} still ran after 60 s")


def run_memoize(d):
    import sqlite_acorn._cache as m
    from sqlite_acorn import Cache
    db = os.path.join(d, "memo.db")
    calls = os.path.join(d, "calls")
    cache = Cache(db)
    started_r, started_w = os.pipe()
    go_r, go_w = os.pipe()
    wait_r, wait_w = os.pipe()
    blocker = [None]

    @cache.memoize(lock_expire=3600)
    def slow(x):
        with open(calls, "a") as f:
            f.write(f"{os.getpid()} {x}\n")
        if os.getpid() == blocker[0]:
            os.write(started_w, b"s")
            os.read(go_r, 1)
        return x * 2

    def computer(x):
        def run():
            blocker[0] = os.getpid()
            return 0 if slow(x) == x * 2 else 3
        return run

    def lines():
        with open(calls) as f:
            return f.read().splitlines()

    # 1. one computer; 3 processes and 4 threads wait for its value
    c = fork(computer(21))
    read_n(started_r, 1, "the computer started")
    real = m._pause
    Waits(wait_w)
    procs = [fork(lambda: 0 if slow(21) == 42 else 3) for _ in range(3)]
    results = []
    ts = [threading.Thread(target=lambda: results.append(slow(21))) for _ in range(4)]
    for t in ts:
        t.start()
    read_n(wait_r, 7, "callers waiting on the lock")
    os.write(go_w, b"g")
    for t in ts:
        t.join()
    eq(results, [42] * 4, "the threads got the computer's value")
    eq([exit_code(p) for p in procs + [c]], [0] * 4, "the processes got the computer's value")
    eq(lines(), [f"{c} 21"], "computed once")
    eq(slow(21), 42, "then a hit")
    check(b"\x00lock" + slow.__cache_key__(21) not in cache, "the lock is gone")

    # 2. the computer is killed while it holds the lock: a waiter sees its
    # process gone (a zombie: not yet reaped) and computes, long before the
    # lock's hour is up
    c = fork(computer(5))
    read_n(started_r, 1, "the computer started")
    w = fork(lambda: 0 if slow(5) == 10 else 3)
    read_n(wait_r, 1, "a caller waiting on the lock")
    os.kill(c, signal.SIGKILL)
    eq(exit_code(w), 0, "the waiter computed after the kill")
    eq(exit_code(c), -signal.SIGKILL, "the computer was killed")
    eq(lines()[1:], [f"{c} 5", f"{w} 5"], "computed by the killed one, then the waiter")

    # 3. a lock of another machine: waited on while it lasts, taken once it
    # is gone; one whose lifetime is over is taken at once
    m._pause = real
    Waits(wait_w)
    lock = b"\x00lock" + slow.__cache_key__(7)
    cache.add(lock, b"other-host 1 1 1-x", expire=3600)
    out = []
    t = threading.Thread(target=lambda: out.append(slow(7)))
    t.start()
    read_n(wait_r, 1, "a caller waiting on another machine's lock")
    eq(lines()[3:], [], "nothing computed while the other machine holds the lock")
    cache.delete(lock)
    t.join()
    eq((out, lines()[3:]), ([14], [f"{os.getpid()} 7"]), "computed once the lock went")
    cache.add(b"\x00lock" + slow.__cache_key__(8), b"other-host 1 1 1-x", expire=0)
    eq(slow(8), 16, "an expired lock is taken")

    # 4. an exception reaches the caller, the lock is released, and the
    # next call computes again; None is a result like any other
    n = []

    @cache.memoize(name="flaky", expire=60, tag="memo")
    def flaky(x):
        n.append(x)
        if len(n) == 1:
            raise RuntimeError("first call fails")
        return None
    raises(RuntimeError, "first call fails", flaky, 1)
    check(b"\x00lock" + flaky.__cache_key__(1) not in cache, "released after an exception")
    eq((flaky(1), flaky(1), n), (None, None, [1, 1]), "None is cached")
    eq(sql(db, "SELECT expires - created, tag FROM cache WHERE key = ?", flaky.__cache_key__(1)),
       [(60000, b"memo")], "memoize's expire and tag")
    eq(cache.evict("memo"), 1, "memoized results evicted by tag")
    raises(TypeError, "sqlite_acorn.Cache.memoize: name cannot be callable; write"
           " @cache.memoize() with parentheses", cache.memoize, flaky)
    raises(TypeError, "sqlite_acorn.Cache.memoize: name must be a str or None, got int",
           cache.memoize, name=5)
    check(slow.__cache_key__(1) != slow.__cache_key__(1.5), "keys of other arguments differ")
    # ignore: positions and keyword names left out of the key
    seen = []

    @cache.memoize(name="ign", ignore={0, "verbose"})
    def ign(conn, x, verbose=False):
        seen.append(x)
        return x * 3
    eq((ign("conn1", 2), ign("conn2", 2, verbose=True), ign("conn1", 3), seen), (6, 6, 9, [2, 3]),
       "ignored arguments make no other key")
    eq(ign.__cache_key__("a", 2), ign.__cache_key__("b", 2, verbose=True), "the same key")
    check(ign.__cache_key__("a", 2) != ign.__cache_key__("a", x=2), "x by keyword is another key")
    raises(TypeError, "sqlite_acorn.Cache.memoize: ignore must be a set or tuple of argument"
           " positions and keyword names, got str", cache.memoize, ignore="verbose")
    raises(TypeError, "sqlite_acorn.Cache.memoize: ignore holds argument positions (int) and"
           " keyword names (str), not 1.5", cache.memoize, ignore=(1.5,))
    # a result that not every language reads is pickled, in a Cache without
    # pickle=True: memoize's keys are pickles, only Python reads them anyway
    @cache.memoize()
    def pair(x):
        return (x, {x})
    eq((pair(3), pair(3)), ((3, {3}), (3, {3})), "a tuple memoized")
    eq(sql(db, "SELECT substr(CAST(value AS BLOB), 1, 2) FROM cache WHERE key = ?",
           pair.__cache_key__(3)), [(b"\xffp",)], "pickled")
    raises(TypeError, None, cache.set, "t", (3, {3}))

    # 5. a result larger than the capacity is not kept: the callers waiting
    # on its computer then compute at once, side by side (both are inside
    # the function before either is let go), not one after the other
    small = Cache(os.path.join(d, "small.db"), capacity=1000)
    m._pause = real
    Waits(wait_w)
    entered = []

    @small.memoize(lock_expire=3600)
    def big(x):
        entered.append(threading.get_ident())
        os.write(started_w, b"s")
        os.read(go_r, 1)
        return b"x" * 5000

    out = []
    first = threading.Thread(target=lambda: out.append(big(1)), daemon=True)
    first.start()
    read_n(started_r, 1, "the first computer started")
    ws = [threading.Thread(target=lambda: out.append(big(1)), daemon=True) for _ in range(2)]
    for t in ws:
        t.start()
    read_n(wait_r, 2, "two callers waiting on the lock")
    os.write(go_w, b"g")
    first.join()
    read_n(started_r, 2, "both waiters computing at once after the result could not be kept")
    os.write(go_w, b"gg")
    for t in ws:
        t.join()
    eq((len(out), len(entered), set(map(len, out))), (3, 3, {5000}),
       "every caller got the result, each computed it")
    check(big.__cache_key__(1) not in small, "the result was not kept")
    return "threads and processes wait for one computer; a killed computer, a lock of another" \
           " machine, an expired lock, an exception, a result too large to keep"


# -------------------------------------------------------------------- django
SETTINGS = """
SECRET_KEY = "test"
USE_TZ = True
INSTALLED_APPS = ["sqlite_acorn.django.AcornConfig", "acorn_test_app"]
DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": {app_db!r}}}}}
CACHES = {{
    "default": {{
        "BACKEND": "sqlite_acorn.django.AcornCache",
        "LOCATION": {db!r},
        "TIMEOUT": 120,
        "OPTIONS": {{"capacity": "1MiB"}},
    }},
    "other": {{
        "BACKEND": "sqlite_acorn.django.AcornCache",
        "LOCATION": {db!r},
        "TIMEOUT": None,
        "KEY_PREFIX": "site",
        "VERSION": 3,
        "KEY_FUNCTION": "acorn_test_settings.key_func",
        "OPTIONS": {{"table": "other", "MAX_ENTRIES": 3, "capacity": 300}},
    }},
    "bad": {{
        "BACKEND": "sqlite_acorn.django.AcornCache",
        "LOCATION": {db!r},
        "OPTIONS": {{"CULL_FREQUENCY": 3}},
    }},
}}


def key_func(key, key_prefix, version):
    return "%s|%s|%s" % (key_prefix, version, key)
"""


MODELS = """
from django.db import models


class Event(models.Model):
    name = models.CharField(max_length=20)
    ref = models.CharField(max_length=36, blank=True)
    uid = models.UUIDField(null=True)
"""


def django_models(d):
    """acorn in Django's own connections (AcornConfig in INSTALLED_APPS):
    uuid7() in a model's queries, on Django 3.2, and the column default that
    Django 5's db_default writes."""
    import uuid
    from django.db import connection, connections, models
    from django.db.models import Func
    from acorn_test_app.models import Event
    from sqlite_acorn.django import load_acorn
    with connection.schema_editor() as editor:
        editor.create_model(Event)
    with connection.cursor() as cur:
        cur.execute("SELECT uuid_version(uuid7())")
        eq(cur.fetchone(), (7,), "uuid7() in Django's connection")
    # an expression in create(), read back by refresh_from_db()
    e = Event.objects.create(name="a", ref=Func(function="uuid7", output_field=models.CharField()))
    e.refresh_from_db(fields=["ref"])
    eq(uuid.UUID(e.ref).version, 7, "create() with Func('uuid7')")
    eq(len(e.ref), 36, "uuid7()'s text form")
    # update() and annotate(); a UUIDField holds 32 hex digits on SQLite
    Event.objects.create(name="b")
    n = Event.objects.filter(uid=None).update(
        uid=Func(template="replace(uuid7(), '-', '')", output_field=models.UUIDField()))
    eq(n, 2, "update() of a UUIDField with uuid7()")
    e.refresh_from_db()
    eq((e.uid.version, Event.objects.get(uid=e.uid).pk), (7, e.pk), "found by its UUID")
    refs = list(Event.objects.annotate(
        u=Func(function="uuid7", output_field=models.CharField())).values_list("u", flat=True))
    eq([uuid.UUID(r).version for r in refs], [7, 7], "annotate()")
    # the column default Django 5's db_default=Func(function="uuid7") makes
    with connection.cursor() as cur:
        cur.execute("CREATE TABLE app_doc (id INTEGER PRIMARY KEY, ref TEXT NOT NULL"
                    " DEFAULT (uuid7()))")
        cur.execute("INSERT INTO app_doc (id) VALUES (1)")
        cur.execute("SELECT uuid_version(ref) FROM app_doc")
        eq(cur.fetchone(), (7,), "DEFAULT (uuid7())")
    # every connection Django opens has it: another thread's
    got = []

    def other():
        try:
            with connections["default"].cursor() as cur:
                cur.execute("INSERT INTO app_doc (id) VALUES (2)")
                cur.execute("SELECT uuid_version(ref) FROM app_doc WHERE id = 2")
                got.append(cur.fetchone())
        finally:
            connections.close_all()
    t = threading.Thread(target=other)
    t.start()
    t.join()
    eq(got, [(7,)], "another thread's connection")

    class Other:
        vendor = "postgresql"
        connection = object()
    eq(load_acorn(sender=None, connection=Other()), None, "other vendors left alone")


def run_django(d):
    os.mkdir(os.path.join(d, "acorn_test_app"))
    open(os.path.join(d, "acorn_test_app", "__init__.py"), "w").close()
    with open(os.path.join(d, "acorn_test_app", "models.py"), "w") as f:
        f.write(MODELS)
    with open(os.path.join(d, "acorn_test_settings.py"), "w") as f:
        f.write(SETTINGS.format(db=os.path.join(d, "django.db"),
                                app_db=os.path.join(d, "app.db")))
    sys.path.insert(0, d)
    os.environ["DJANGO_SETTINGS_MODULE"] = "acorn_test_settings"
    import django
    django.setup()
    from django.core.cache import caches, cache
    from django.core.cache.backends.base import CacheKeyWarning
    from django.core.exceptions import ImproperlyConfigured
    from sqlite_acorn.django import AcornCache
    db = os.path.join(d, "django.db")

    check(isinstance(caches["default"], AcornCache), "caches['default'] is an AcornCache")
    life = lambda k: sql(db, f"SELECT expires - created FROM {k[0]} WHERE key = ?", k[1])

    # get, set, add, delete
    eq(cache.get("k"), None, "get of a missing key")
    eq(cache.get("k", "dflt"), "dflt", "get's default")
    eq(cache.set("k", {"a": [1, 2]}), None, "set returns None")
    eq(cache.get("k"), {"a": [1, 2]}, "get after set")
    # any picklable value, as Django's backends take
    import datetime
    when = datetime.datetime(2026, 12, 2, 6, 55, tzinfo=datetime.timezone.utc)
    cache.set("obj", (when, {1: "a"}))
    eq(cache.get("obj"), (when, {1: "a"}), "a tuple of a datetime and an int-keyed dict")
    eq(sql(db, "SELECT substr(CAST(value AS BLOB), 1, 2), typeof(value) FROM django_cache"
           " WHERE key IN (':1:k', ':1:obj') ORDER BY key"),
       [(b"\xffj", b"text"), (b"\xffp", b"text")], "JSON where it is exact, else a pickle")
    cache.delete("obj")
    # a value that only another language reads is an error, never a miss
    from sqlite_acorn import ForeignValueError
    sql(db, "INSERT INTO django_cache(key, value) VALUES (':1:rb', CAST(x'ff6d0408' AS TEXT))")
    raises(ForeignValueError, "sqlite_acorn.Cache.get: the value of ':1:rb' was written by Ruby"
           " (Marshal); Python cannot read it", cache.get, "rb")
    raises(ForeignValueError, "sqlite_acorn.Cache.get_many: the value of ':1:rb' was written by"
           " Ruby (Marshal); Python cannot read it", cache.get_many, ["k", "rb"])
    cache.delete("rb")
    eq(cache.add("k", "other"), False, "add of a live key")
    eq(cache.add("n", 10), True, "add of a new key")
    eq(cache.get("n"), 10, "add stored")
    eq(cache.delete("n"), True, "delete")
    eq(cache.delete("n"), False, "delete of a missing key")
    eq(cache.has_key("k"), True, "has_key")
    eq(cache.has_key("n"), False, "has_key of a missing key")
    check("k" in cache, "in")
    # KEY_PREFIX (empty) and version 1 make the stored key
    eq(sql(db, "SELECT key FROM django_cache WHERE key LIKE '%k'"), [(b":1:k",)], "stored key")

    # timeouts: the default (TIMEOUT 120), a number, None for ever, 0 and
    # less expire at once
    cache.set("t-default", 1)
    cache.set("t-5", 1, 5)
    cache.set("t-none", 1, None)
    eq(life(("django_cache", ":1:t-default")), [(120000,)], "TIMEOUT is the default")
    eq(life(("django_cache", ":1:t-5")), [(5000,)], "timeout=5")
    eq(life(("django_cache", ":1:t-none")), [(10**15,)], "timeout=None: the longest ttl")
    cache.set("t-zero", 1, 0)
    eq(cache.get("t-zero", "expired"), "expired", "set with timeout 0")
    cache.set("t-neg", 1, -1)
    eq(cache.get("t-neg", "expired"), "expired", "set with a negative timeout")
    cache.set("k2", "old")
    cache.set("k2", "new", 0)
    eq(cache.get("k2"), None, "set with timeout 0 removes the old value")
    eq(cache.add("t-add0", 1, 0), True, "add with timeout 0")
    eq(cache.get("t-add0"), None, "added with timeout 0: expired")
    eq(cache.add("t-add0", 2), True, "add over the expired one")
    # touch
    touch = lambda *a: lambda: eq(cache.touch(*a), True, f"touch{a}")
    lifetime_set_by(touch("t-5", 50), db, "django_cache", ":1:t-5", 50)
    lifetime_set_by(touch("t-5"), db, "django_cache", ":1:t-5", 120)
    lifetime_set_by(touch("t-5", None), db, "django_cache", ":1:t-5", 10**12)
    eq(cache.touch("missing", 5), False, "touch of a missing key")
    eq(cache.touch("t-5", 0), True, "touch with 0")
    eq(cache.get("t-5"), None, "touch with 0 expires it")

    # many keys
    eq(cache.set_many({"a": 1, "b": "two", "c": b"3"}), [], "set_many")
    eq(cache.get_many(["a", "b", "c", "missing"]), {"a": 1, "b": "two", "c": b"3"}, "get_many")
    keys = [f"many{i}" for i in range(1203)]
    cache.set_many({k: i for i, k in enumerate(keys)}, 30)
    got = cache.get_many(keys)
    eq(len(got), 1203, "get_many of more keys than one statement takes")
    eq(got["many1202"], 1202, "get_many's values")
    eq(life(("django_cache", ":1:many7")), [(30000,)], "set_many's timeout")
    cache.delete_many(["a", "b"] + keys)
    eq(cache.get_many(["a", "b", "c", "many1"]), {"c": b"3"}, "delete_many")
    # get_or_set
    eq(cache.get_or_set("g", "value"), "value", "get_or_set of a missing key")
    eq(cache.get_or_set("g", "other"), "value", "get_or_set of a live key")
    eq(cache.get_or_set("g2", lambda: "called", 7), "called", "get_or_set with a callable")
    eq(life(("django_cache", ":1:g2")), [(7000,)], "get_or_set's timeout")
    # incr and decr
    cache.set("num", 1)
    eq(cache.incr("num"), 2, "incr")
    eq(cache.incr("num", 10), 12, "incr by 10")
    eq(cache.decr("num"), 11, "decr")
    eq(cache.decr("num", 20), -9, "decr by 20")
    cache.set("fl", 1.5)
    eq(cache.incr("fl"), 2.5, "incr of a float")
    raises(ValueError, "Key 'nothing' not found", cache.incr, "nothing")
    raises(ValueError, "Key 'nothing' not found", cache.decr, "nothing")
    # versions
    cache.set("v", "one", version=2)
    eq((cache.get("v"), cache.get("v", version=2)), (None, "one"), "version 2")
    eq(cache.incr_version("v", version=2), 3, "incr_version")
    eq((cache.get("v", version=2), cache.get("v", version=3)), (None, "one"), "moved to 3")
    eq(cache.decr_version("v", version=3), 2, "decr_version")
    eq(cache.get("v", version=2), "one", "back at 2")
    # clear
    cache.clear()
    eq(cache.get_many(["k", "g", "num"]), {}, "clear")

    # the other alias: KEY_PREFIX, VERSION, KEY_FUNCTION, TIMEOUT None,
    # MAX_ENTRIES and a capacity, its own table
    o = caches["other"]
    o.set("x", "1")
    eq(sql(db, "SELECT key, expires - created FROM other"), [(b"site|3|x", 10**15)],
       "KEY_FUNCTION, KEY_PREFIX, VERSION and TIMEOUT None")
    for k in "abcd":
        o.set(k, k)
    eq(sql(db, "SELECT key FROM other"), [(b"site|3|b",), (b"site|3|c",), (b"site|3|d",)],
       "MAX_ENTRIES")
    o.set("b", b"x" * 400)
    eq(o.get("b"), None, "a set larger than the capacity drops the old value")
    eq(o.set_many({"c": b"x" * 400, "e": "e"}), ["c"], "set_many returns the keys not stored")
    eq(o.get_many(["c", "d", "e"]), {"d": "d", "e": "e"}, "set_many stored the others")
    eq(o.add("f", b"x" * 400), False, "add larger than the capacity")

    # key warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cache.set("with space", 1)
        cache.get("x" * 260)
    eq([(x.category, str(x.message)) for x in w],
       [(CacheKeyWarning, "Cache key contains characters that will cause errors if used with"
         " memcached: ':1:with space'"),
        (CacheKeyWarning, "Cache key will cause errors if used with memcached: %r (longer"
         " than 250)" % (":1:" + "x" * 260))], "CacheKeyWarning")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheKeyWarning)
        eq(cache.get("with space"), 1, "a key with a space still works")
        cache.close()
        eq(cache.get("with space"), 1, "close() keeps the connection")

    # one Cache per LOCATION and OPTIONS, shared by the threads' backends
    other_thread = []
    t = threading.Thread(target=lambda: other_thread.append(caches["default"]))
    t.start()
    t.join()
    check(other_thread[0] is not caches["default"], "Django gives each thread its backend")
    check(other_thread[0].cache is caches["default"].cache, "the backends share one Cache")

    # bad options
    raises(ImproperlyConfigured, "sqlite_acorn.django.AcornCache: CULL_FREQUENCY does not apply:"
           " acorn evicts the least recently used entries, exactly as many as it must",
           lambda: caches["bad"])
    raises(ImproperlyConfigured, "sqlite_acorn.django.AcornCache: unknown option 'capacty';"
           " accepted options are table, capacity, policy, recency_buffer, autoflush,"
           " max_entries, feed, journal_mode, synchronous, busy_timeout, MAX_ENTRIES",
           AcornCache, db, {"OPTIONS": {"capacty": 1}})
    raises(ImproperlyConfigured, "sqlite_acorn.django.AcornCache: default_ttl is not an option"
           " here: Django's TIMEOUT sets the default lifetime",
           AcornCache, db, {"OPTIONS": {"default_ttl": 1}})
    raises(ImproperlyConfigured, "sqlite_acorn.django.AcornCache: sqlite_acorn.Cache: cache:"
           " bad policy 'random'; expected lru or fifo",
           AcornCache, db, {"OPTIONS": {"policy": "random", "table": "p"}})
    django_models(d)
    return f"(Django {django.get_version()}): every method, timeouts default/5/None/0/-1," \
           " versions, KEY_PREFIX, KEY_FUNCTION, MAX_ENTRIES, key warnings; uuid7() in a model"


def main():
    modes = {"cache": run_cache, "memoize": run_memoize, "django": run_django}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        print("usage: python_cache_test.py cache|memoize|django DIR", file=sys.stderr)
        return 2
    name = "wheel-" + sys.argv[1]
    try:
        print(f"PASS {name} {modes[sys.argv[1]](sys.argv[2])}")
    except Exception as e:  # one line per failure, whatever it is
        import traceback
        traceback.print_exc()
        print(f"FAIL {name}: {type(e).__name__}: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
