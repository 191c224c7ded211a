#!/usr/bin/python3
"""Several connections on one file: what each sees of the others' uses.

    cache_multi.py EXTENSION DBFILE JOURNAL_MODE

Prints one line per check; tests/cache_multi.bats compares them."""
import sqlite3
import sys

ext, path, journal = sys.argv[1], sys.argv[2], sys.argv[3]


def connect(timeout):
    c = sqlite3.connect(path, isolation_level=None, timeout=timeout)
    c.enable_load_extension(True)
    c.load_extension(ext)
    c.execute("PRAGMA journal_mode=%s" % journal).fetchall()
    return c


def keys(c):
    return ",".join(r[0] for r in c.execute("SELECT key FROM t ORDER BY key"))


a = connect(5)
b = connect(0)          # B never waits: any lock it needed would fail at once
a.execute("CREATE VIRTUAL TABLE t USING cache(capacity = 30, recency_buffer = 2)")
a.execute("INSERT INTO t(key, value) VALUES ('a', zeroblob(9)), ('b', zeroblob(9)), ('c', zeroblob(9))")

# 1. B's use of 'a' is buffered in B: A does not see it yet and evicts 'a'.
b.execute("SELECT value FROM t WHERE key = 'a'").fetchall()
a.execute("INSERT INTO t(key, value) VALUES ('d', zeroblob(9))")
print("late:", keys(a))

# 2. After B flushes, A's eviction sees B's use.
b.execute("SELECT value FROM t WHERE key = 'b'").fetchall()
b.execute("INSERT INTO t(t) VALUES ('flush')")
a.execute("INSERT INTO t(key, value) VALUES ('e', zeroblob(9))")
print("flushed:", keys(a))

# 3. Gets never take the write lock: A holds it, B reads on, even past its
#    recency_buffer (the flush it would like to do is put off).
a.execute("BEGIN IMMEDIATE")
a.execute("INSERT INTO t(key, value) VALUES ('f', zeroblob(9))")
n = 0
for i in range(50):
    for k in ("b", "d", "e"):
        n += len(b.execute("SELECT value FROM t WHERE key = ?", (k,)).fetchall())
print("gets while A writes:", n, "B's hits", b.execute("SELECT hits FROM cache_stats('t')").fetchone()[0])
a.execute("COMMIT")
print("after A commits:", keys(b))

# 4. B's buffered uses reach the file when B closes.
b.execute("SELECT value FROM t WHERE key = 'b'").fetchall()
b.close()
print("hits after B closed:", a.execute("SELECT group_concat(key || '=' || hits) FROM t").fetchone()[0])
print("stats:", a.execute("SELECT capacity, entries, bytes, hits, misses, evictions FROM cache_stats('t')").fetchone())
a.close()
