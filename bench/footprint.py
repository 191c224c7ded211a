"""bench/footprint.py: many processes on one file, get-then-set on a miss,
and what that leaves on disk (bench/footprint.sh runs it and sets up the
packages).

Usage: footprint.py DIR NODE_SCRIPT            (the driver)
       footprint.py --worker SIDE PATH SECONDS THREADS SEED   (one process)

Every request draws a key (Zipf, s = 0.99, over 10,000 keys), gets it, and
on a miss sets it (1 KiB of bytes).  Every side keeps about 200 KB:
  plain      a plain table written by hand: kv(id INTEGER PRIMARY KEY, key
             TEXT UNIQUE, value BLOB); a get is SELECT value WHERE key = ?,
             a set BEGIN IMMEDIATE, INSERT OR REPLACE, DELETE of the rows
             older than the newest 190 (a FIFO of ~200 KB), COMMIT
  sql        a cache table (capacity 200000) through Python's sqlite3 module:
             SELECT cache_get('c', ?) and INSERT INTO c(key, value) in
             autocommit mode
  python     sqlite_acorn.Cache(path, 'c', capacity=200000): get, set
  node       sqlite-acorn's Cache on better-sqlite3: get, set (one thread a
             process: Node runs JavaScript on one)
  diskcache  diskcache.Cache(dir, size_limit=200000): get, set
Every connection is WAL, synchronous NORMAL, with a busy timeout of 5 s (as
a user would set; sqlite_acorn.Cache and diskcache set theirs).

With FOOTPRINT_OLD (a directory holding another build's Python package, as
bench/footprint.sh lays it out for FOOTPRINT_OLD_SO) two more sides,
sql-old and python-old, run the sql and python sides on that build.

For each number of processes (FOOTPRINT_PROCS, default "1 4 16") the sides
run in FOOTPRINT_ROUNDS rounds (default 3), each side once a round, in an
order that rotates, for FOOTPRINT_SECONDS/FOOTPRINT_ROUNDS seconds each
(default 60 in all), on a file of its own that the rounds go on using.
Each Python process runs FOOTPRINT_THREADS threads (default 4), each with
its own connection.  The driver samples the size of the side's -wal file
every 2 ms.  A row per side and process count: requests a second, failed
requests (any exception: database is locked, ...), the peak size of the
-wal file, the size of the database file at the end, and the peak -wal
against the plain table's at the same process count.
"""

import bisect
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time

NKEYS = 10000
ZIPF_S = 0.99
VALUE = 1024
CAPACITY = 200000
PLAIN_ROWS = 190            # ~ CAPACITY / (VALUE + key)
BUSY_MS = 5000
SIDES = ("plain", "sql", "python", "node", "diskcache")


def zipf_cum():
    return list(itertools.accumulate(1.0 / (i ** ZIPF_S) for i in range(1, NKEYS + 1)))


def files(side, path):
    """(database file, its -wal file) of a side's store at path."""
    if side == "diskcache":
        return os.path.join(path, "cache.db"), os.path.join(path, "cache.db-wal")
    return path, path + "-wal"


# ------------------------------------------------------------------ worker
def connect(path, ext):
    import sqlite3
    c = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None,
                        check_same_thread=False)
    if ext:
        c.enable_load_extension(True)
        c.load_extension(ext)
        c.enable_load_extension(False)
    c.execute("PRAGMA journal_mode=WAL").fetchall()
    c.execute("PRAGMA synchronous=NORMAL")
    return c


def base(side):
    """The side a side runs as: sql-old runs as sql, on the old build."""
    return side[:-4] if side.endswith("-old") else side


def side_ops(side, path, shared):
    """(get, set) for one thread of a side."""
    if side == "python":
        c = shared
        return c.get, c.set
    if side == "diskcache":
        c = shared
        return c.get, c.set
    if side == "sql":
        from sqlite_acorn import loadable_path
        db = connect(path, loadable_path())

        def get(k):
            return db.execute("SELECT cache_get('c', ?)", (k,)).fetchone()[0]

        def put(k, v):
            db.execute("INSERT INTO c(key, value) VALUES (?, ?)", (k, v))
        return get, put
    db = connect(path, None)

    def get(k):
        r = db.execute("SELECT value FROM kv WHERE key = ?", (k,)).fetchone()
        return r[0] if r else None

    def put(k, v):
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("INSERT OR REPLACE INTO kv(key, value) VALUES (?, ?)", (k, v))
            db.execute("DELETE FROM kv WHERE id <= (SELECT max(id) FROM kv) - ?", (PLAIN_ROWS,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return get, put


def worker(side, path, seconds, threads, seed):
    side = base(side)
    shared = None
    if side == "python":
        from sqlite_acorn import Cache
        shared = Cache(path, "c", timeout=BUSY_MS / 1000)
    elif side == "diskcache":
        import diskcache
        shared = diskcache.Cache(path, timeout=BUSY_MS / 1000)
    cum = zipf_cum()
    total = cum[-1]
    counts = [[0, 0, 0, ""] for _ in range(threads)]   # requests, hits, failures, an error
    start = threading.Barrier(threads + 1)

    def run(i):
        rng = random.Random(seed * 1000 + i)
        value = rng.randbytes(VALUE)
        get, put = side_ops(side, path, shared)
        n = hits = fails = 0
        err = ""
        start.wait()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            k = "key:%05d" % bisect.bisect_left(cum, rng.random() * total)
            try:
                if get(k) is None:
                    put(k, value)
                else:
                    hits += 1
            except Exception as e:      # noqa: BLE001: every failure is counted
                fails += 1
                err = err or f"{type(e).__name__}: {e}"
            n += 1
        counts[i] = [n, hits, fails, err]

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    start.wait()
    for t in ts:
        t.join()
    print(json.dumps({"requests": sum(c[0] for c in counts), "hits": sum(c[1] for c in counts),
                      "failures": sum(c[2] for c in counts),
                      "error": next((c[3] for c in counts if c[3]), "")}), flush=True)


# ------------------------------------------------------------------ driver
def create(side, path):
    side = base(side)
    if side in ("sql", "python", "node"):
        from sqlite_acorn import Cache
        Cache(path, "c", capacity=CAPACITY).close()
    elif side == "plain":
        c = connect(path, None)
        c.execute("CREATE TABLE kv(id INTEGER PRIMARY KEY, key TEXT UNIQUE, value BLOB)")
        c.close()
    else:
        import diskcache
        diskcache.Cache(path, size_limit=CAPACITY).close()


def run_side(side, path, procs, seconds, threads, node_script):
    cmds = []
    for p in range(procs):
        if side == "node":
            cmds.append(["node", node_script, path, str(seconds), str(p + 1), str(CAPACITY)])
        else:
            cmds.append([sys.executable, __file__, "--worker", side, path, str(seconds),
                         str(threads), str(p + 1)])
    db, wal = files(side, path)
    env = dict(os.environ)
    if side.endswith("-old"):
        env["PYTHONPATH"] = os.environ["FOOTPRINT_OLD"]
    ps = [subprocess.Popen(c, stdout=subprocess.PIPE, text=True, env=env) for c in cmds]
    peak = 0
    while any(p.poll() is None for p in ps):
        try:
            peak = max(peak, os.path.getsize(wal))
        except OSError:
            pass
        time.sleep(0.002)
    out = {"requests": 0, "hits": 0, "failures": 0, "error": ""}
    for p in ps:
        text = p.stdout.read()
        if p.returncode != 0:
            raise SystemExit(f"footprint: a {side} worker failed (exit {p.returncode}): {text}")
        r = json.loads(text.strip().splitlines()[-1])
        for k in ("requests", "hits", "failures"):
            out[k] += r[k]
        out["error"] = out["error"] or r["error"]
    try:
        peak = max(peak, os.path.getsize(wal))
    except OSError:
        pass
    out["peak_wal"] = peak
    out["db"] = os.path.getsize(db)
    return out


def main():
    if sys.argv[1] == "--worker":
        side, path, seconds, threads, seed = sys.argv[2:7]
        worker(side, path, float(seconds), int(threads), int(seed))
        return
    if sys.argv[1] == "--create":
        create(sys.argv[2], sys.argv[3])
        return
    top, node_script = sys.argv[1], sys.argv[2]
    procs_list = [int(x) for x in os.environ.get("FOOTPRINT_PROCS", "1 4 16").split()]
    rounds = int(os.environ.get("FOOTPRINT_ROUNDS", "3"))
    seconds = float(os.environ.get("FOOTPRINT_SECONDS", "60")) / rounds
    threads = int(os.environ.get("FOOTPRINT_THREADS", "4"))
    sides = os.environ.get("FOOTPRINT_SIDES", " ".join(SIDES)).split()
    if os.environ.get("FOOTPRINT_OLD") and "FOOTPRINT_SIDES" not in os.environ:
        sides += ["sql-old", "python-old"]
    print(f"Zipf s={ZIPF_S} over {NKEYS} keys, {VALUE} B values, ~{CAPACITY} B kept;"
          f" {rounds} rounds of {seconds:g} s a side; {threads} threads a Python process")
    rows = []
    for procs in procs_list:
        where = os.path.join(top, f"p{procs}")
        os.makedirs(where)
        paths = {s: os.path.join(where, s if s == "diskcache" else s + ".db") for s in sides}
        for s in sides:
            if s.endswith("-old"):
                subprocess.run([sys.executable, __file__, "--create", s, paths[s]], check=True,
                               env=dict(os.environ, PYTHONPATH=os.environ["FOOTPRINT_OLD"]))
            else:
                create(s, paths[s])
        tot = {s: {"requests": 0, "hits": 0, "failures": 0, "error": "", "peak_wal": 0, "db": 0}
               for s in sides}
        for r in range(rounds):
            order = sides[r % len(sides):] + sides[:r % len(sides)]
            for s in order:
                res = run_side(s, paths[s], procs, seconds, threads, node_script)
                t = tot[s]
                for k in ("requests", "hits", "failures"):
                    t[k] += res[k]
                t["error"] = t["error"] or res["error"]
                t["peak_wal"] = max(t["peak_wal"], res["peak_wal"])
                t["db"] = res["db"]
        base = tot.get("plain", {}).get("peak_wal") or None
        print()
        print(f"{procs} process{'es' if procs > 1 else ''}"
              f" ({threads} threads each, node 1):")
        print("| side | requests/s | hit ratio | failed | peak -wal MiB | database MiB |"
              " peak -wal / plain's |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for s in sides:
            t = tot[s]
            rate = t["requests"] / (seconds * rounds)
            ratio = f"{t['peak_wal'] / base:.2f}" if base else "-"
            print(f"| {s} | {rate:,.0f} | {t['hits'] / max(t['requests'], 1):.3f} |"
                  f" {t['failures']} | {t['peak_wal'] / 2**20:.1f} | {t['db'] / 2**20:.2f} |"
                  f" {ratio} |")
            rows.append((procs, s, rate, t["failures"], t["peak_wal"], t["db"]))
            if t["error"]:
                print(f"  ({s}: first failure: {t['error']})")
        shutil.rmtree(where)
    with open(os.path.join(top, "footprint.csv"), "w") as f:
        f.write("processes,side,requests_per_sec,failed,peak_wal_bytes,db_bytes\n")
        for r in rows:
            f.write("%d,%s,%.0f,%d,%d,%d\n" % r)


if __name__ == "__main__":
    main()
