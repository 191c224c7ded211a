#!/usr/bin/python3
"""Crafted files, every column of every shadow table: no statement hangs,
crashes or fails but with a message that says what.

    cache_hostile.py SQLITE3 EXTENSION DIR [VALUES]

Builds a cache table with entries, tags, expiries, recency records and a
feed (DIR/base.db), then for each column of each shadow table and each value
(VALUES: how many of the list below, default all) sets that column of every
row to it, and runs each statement of OPS on its own, in the SQLITE3 shell
as a victim would (trusted_schema OFF, DEFENSIVE on), within 20 s.  Prints
one line per (table, column, value, statement) that hung, died of a signal,
or failed with a message outside what a file edited by hand may bring
(SQLITE_CORRUPT_VTAB naming what is wrong, SQLite's own constraint and type
errors, a refused write), then "checked N runs".  Under tests/long.
"""
import os
import shutil
import sqlite3
import subprocess
import sys

SHELL, EXT, DIR = sys.argv[1], sys.argv[2], sys.argv[3]
VALUES = ["9223372036854775807", "-9223372036854775808", "-1", "0", "NULL", "'zz'", "x'00'",
          "4611686018427387904", "1"]
if len(sys.argv) > 4:
    VALUES = VALUES[:int(sys.argv[4])]
OPS = [
    "SELECT count(*) FROM t;",
    "SELECT value FROM t WHERE key = 'k2';",
    "SELECT cache_get('t', 'k4');",
    "SELECT * FROM cache_stats('t');",
    "SELECT * FROM cache_evictions('t');",
    "SELECT cache_read('t', 'k2', 0, 10);",
    "INSERT INTO t(key, value) VALUES ('new', zeroblob(500));",
    "SELECT cache_set('t', 'k7', zeroblob(400), 60, 'g');",
    "UPDATE t SET ttl = 5 WHERE key = 'k3';",
    "UPDATE t SET tag = 'h' WHERE key = 'k5';",
    "DELETE FROM t WHERE key = 'k6';",
    "DELETE FROM t WHERE tag = 'g';",
    "INSERT INTO t(t, value) VALUES ('capacity', 500);",
    "INSERT INTO t(t) VALUES ('purge');",
    "INSERT INTO t(t) VALUES ('flush');",
    "INSERT INTO t(t) VALUES ('integrity_check');",
    "SELECT key, last_used, hits, tag FROM t;",
    "PRAGMA integrity_check;",
]
# what a failure may say: the cache's corruption reports and refusals,
# SQLite's own errors on values of the wrong type or a broken constraint
ALLOWED = ["(11)", "is not written while", "integrity_check of", "constraint failed",
           "cannot open value of type", "exceeds capacity", "is missing", "out of range",
           "the table never gave", "do not match the entries", "are corrupt",
           "datatype mismatch", "does not exist", "database disk image is malformed",
           "has a minused but no live record", "a size of", "holds the size"]


def base():
    path = os.path.join(DIR, "base.db")
    c = sqlite3.connect(path, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(EXT)
    c.execute("CREATE VIRTUAL TABLE t USING cache(capacity = 3000, feed = 10, max_entries = 20)")
    for i in range(15):
        c.execute("INSERT INTO t(key, value, ttl, tag) VALUES (?, zeroblob(100), ?, ?)",
                  (f"k{i}", 100000 if i % 3 == 0 else None, "g" if i % 2 else None))
    for i in range(0, 15, 2):
        c.execute("SELECT value FROM t WHERE key = ?", (f"k{i}",)).fetchall()
    c.execute("INSERT INTO t(t) VALUES ('flush')")
    cols = {t: [r[1] for r in c.execute(f"PRAGMA table_info({t})")]
            for t in ("t_config", "t_data", "t_expiry", "t_rec", "t_tag", "t_feed")}
    c.close()
    return path, cols


def main():
    path, cols = base()
    bad, runs = [], 0
    for table, names in cols.items():
        for col in names:
            for v in VALUES:
                db = os.path.join(DIR, "x.db")
                shutil.copy(path, db)
                e = sqlite3.connect(db)
                try:
                    e.execute(f"UPDATE {table} SET {col} = {v}")
                    e.commit()
                except sqlite3.Error:
                    continue           # (the column's own constraint refused it)
                finally:
                    e.close()
                for op in OPS:
                    script = (f".load {EXT}\n.output /dev/null\n.dbconfig defensive on\n"
                              f".output stdout\nPRAGMA trusted_schema = OFF;\n{op}\n")
                    runs += 1
                    what = f"{table}.{col} = {v}: {op}"
                    try:
                        r = subprocess.run([SHELL, "-batch", db], input=script, text=True,
                                           capture_output=True, timeout=20)
                    except subprocess.TimeoutExpired:
                        bad.append(f"HANG {what}")
                        continue
                    if r.returncode < 0:
                        bad.append(f"SIGNAL {-r.returncode} {what}")
                    elif r.returncode != 0 and not any(a in r.stderr for a in ALLOWED):
                        bad.append(f"ERROR {what}: {r.stderr.strip()[-200:]}")
    for b in bad:
        print(b)
    print(f"checked {runs} runs")


main()
