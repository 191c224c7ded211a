#!/usr/bin/python3
"""A connection's own flush of its buffered uses meets a reader that keeps
the rollback journal's commit from happening (SQLITE_BUSY).

    cache_busy.py EXTENSION DBFILE

Prints one line per check; tests/cache_fault.bats compares them."""
import sqlite3
import sys

ext, path = sys.argv[1], sys.argv[2]


def connect(timeout):
    c = sqlite3.connect(path, isolation_level=None, timeout=timeout)
    c.enable_load_extension(True)
    c.load_extension(ext)
    return c


a = connect(0)          # A never waits: its flushes fail at once
b = connect(0)
a.execute("PRAGMA journal_mode=DELETE").fetchall()
a.execute("CREATE VIRTUAL TABLE t USING cache(recency_buffer = 2)")
a.execute("WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<20)"
          " INSERT INTO t(key, value) SELECT x, zeroblob(x) FROM s")

# B reads in a transaction: it holds the shared lock A's commit needs.
b.execute("BEGIN")
b.execute("SELECT count(*) FROM t_data").fetchall()

# A's scan reads every value: its buffer fills again and again, and each
# flush fails busy.  The scan goes on, and A is left in no transaction.
rows = a.execute("SELECT key, length(value) FROM t").fetchall()
print("scan while B reads:", len(rows), sum(r[1] for r in rows), "in a transaction:", a.in_transaction)
b.execute("COMMIT")

# A's next set is a transaction of its own, committed.
a.execute("INSERT INTO t(key, value) VALUES ('after', x'01')")
print("set after: in a transaction:", a.in_transaction)
c = connect(5)
print("another connection sees it:", c.execute("SELECT count(*) FROM t WHERE key = 'after'").fetchone()[0])

# A closes with uses buffered while B reads again: the flush at close fails
# busy, the close does not.
a.execute("SELECT value FROM t WHERE key = 1").fetchall()
b.execute("BEGIN")
b.execute("SELECT count(*) FROM t_data").fetchall()
a.close()
b.execute("COMMIT")
c.execute("INSERT INTO t(t) VALUES ('integrity_check')")
print("after A closed:", c.execute("SELECT entries, hits FROM cache_stats('t')").fetchone(),
      c.execute("PRAGMA integrity_check").fetchone()[0])
