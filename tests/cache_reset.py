#!/usr/bin/python3
"""Schema resets caused by another connection's DDL: a connection's buffered
uses must follow its table, and only its table.

    cache_reset.py EXTENSION DIR

Prints one line per check; tests/cache_multi.bats compares them."""
import os
import sqlite3
import sys

ext, d = sys.argv[1], sys.argv[2]


def connect(path):
    c = sqlite3.connect(path, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(ext)
    return c


def keys(c):
    return ",".join(r[0] for r in c.execute("SELECT key FROM t ORDER BY key"))


def fill(c, ks):
    for k in ks:
        c.execute("INSERT INTO t(key, value) VALUES (?, 'xxxxxxxx')", (k,))


# 1. B reads 'a'; A changes the schema (an unrelated table); B's own insert
#    must not evict the 'a' it just read.
a = connect(os.path.join(d, "r1.db"))
b = connect(os.path.join(d, "r1.db"))
a.execute("CREATE VIRTUAL TABLE t USING cache(capacity = 30)")
fill(a, "abc")
b.execute("SELECT value FROM t WHERE key = 'a'").fetchall()
a.execute("CREATE TABLE unrelated(x)")
b.execute("INSERT INTO t(key, value) VALUES ('d', 'xxxxxxxx')")
print("other's DDL:", keys(b))
# the same with B's next write inside a transaction, and B's use made by
# cache_read after the DDL
b.execute("SELECT value FROM t WHERE key = 'c'").fetchall()
a.execute("CREATE TABLE unrelated2(x)")
b.execute("SELECT cache_read('t', 'a', 0, 1)").fetchall()
b.execute("BEGIN")
b.execute("INSERT INTO t(key, value) VALUES ('e', 'xxxxxxxx')")
b.execute("COMMIT")
print("other's DDL, write in BEGIN:", keys(b),
      b.execute("SELECT hits FROM cache_stats('t')").fetchone()[0])
b.close()
print("hits after B closed:",
      ",".join("%s=%d" % r for r in a.execute("SELECT key, hits FROM t ORDER BY key")))
a.close()

# 2. B reads 'a' and 'b'; A drops t and creates it again (ids restart):
#    B's uses belong to the old table and must not land on the new one.
a = connect(os.path.join(d, "r2.db"))
b = connect(os.path.join(d, "r2.db"))
a.execute("CREATE VIRTUAL TABLE t USING cache(capacity = 30)")
fill(a, "ab")
b.execute("SELECT value FROM t WHERE key IN ('a', 'b')").fetchall()
a.execute("DROP TABLE t")
a.execute("CREATE VIRTUAL TABLE t USING cache(capacity = 30)")
fill(a, "pqr")
print("B's stats after re-create:",
      b.execute("SELECT entries, hits FROM cache_stats('t')").fetchone())
b.close()
print("A's listing after B closed:",
      ",".join("%s=%d" % r for r in a.execute("SELECT key, hits FROM t ORDER BY key")))
# 3. dropped and not re-created: cache_read and cache_stats say so
b = connect(os.path.join(d, "r2.db"))
b.execute("SELECT value FROM t WHERE key = 'p'").fetchall()
a.execute("DROP TABLE t")
for q in ("SELECT cache_read('t', 'p', 0, 1)", "SELECT * FROM cache_stats('t')"):
    try:
        b.execute(q).fetchall()
        print("no error")
    except sqlite3.Error as e:
        print("after DROP:", e)
b.close()
a.close()

# 4. the same with cache_get, which remembers what a name names: B's uses
#    follow the table the name names now, and a dropped table is no table.
a = connect(os.path.join(d, "r4.db"))
b = connect(os.path.join(d, "r4.db"))
a.execute("CREATE VIRTUAL TABLE t USING cache(capacity = 30)")
fill(a, "ab")
print("cache_get before:", b.execute("SELECT cache_get('t', 'a'), cache_get('t', 'b')").fetchone())
a.execute("DROP TABLE t")
a.execute("CREATE VIRTUAL TABLE t USING cache(capacity = 30)")
a.execute("INSERT INTO t(key, value) VALUES ('a', 'new')")
print("cache_get after re-create:",
      b.execute("SELECT cache_get('t', 'a'), cache_get('t', 'b')").fetchone(),
      b.execute("SELECT entries, hits, misses FROM cache_stats('t')").fetchone())
b.close()
print("A's listing after B closed:",
      ",".join("%s=%d" % r for r in a.execute("SELECT key, hits FROM t ORDER BY key")),
      a.execute("SELECT misses FROM cache_stats('t')").fetchone()[0])
b = connect(os.path.join(d, "r4.db"))
b.execute("SELECT cache_get('t', 'a')").fetchall()
a.execute("ALTER TABLE t RENAME TO u")      # B's name 't' names nothing now
for q in ("SELECT cache_get('t', 'a')", "SELECT cache_get('u', 'a')"):
    try:
        print("after RENAME:", b.execute(q).fetchone())
    except sqlite3.Error as e:
        print("after RENAME:", e)
a.execute("DROP TABLE u")
try:
    b.execute("SELECT cache_get('u', 'a')").fetchall()
    print("no error")
except sqlite3.Error as e:
    print("after DROP:", e)
b.close()
a.close()
