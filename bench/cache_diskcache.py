#!/usr/bin/python3
"""The cache table against Python's diskcache, in one process.

    /usr/bin/python3 bench/cache_diskcache.py EXTENSION DIR [KEYS] [RUNS]

Four sides, each in its own directory under DIR, all driven from Python
the way a user would drive them, with 1 KiB values:

    lru          acorn's cache table (policy lru, the default), through the
                 sqlite3 module, autocommit (isolation_level=None)
    fifo         the same with policy=fifo
    dc-lrs       diskcache.Cache with its default eviction policy,
                 least-recently-stored (a get writes nothing)
    dc-lru       diskcache.Cache(eviction_policy='least-recently-used')
                 (every get writes its access time)

Both libraries run SQLite in WAL mode with synchronous=NORMAL (diskcache's
defaults; the acorn sides set them).  Phases, each in 10 slices with the
sides taking turns (the first rotating):

    load         KEYS sets of new keys in transactions of 1000 (acorn: BEGIN
                 / COMMIT; diskcache: `with cache.transact()`), nothing
                 evicted
    get          2*KEYS random gets of stored keys (acorn lru: its buffered
                 recency written in the time, a final 'flush')
    evict-auto   KEYS/4 sets of new keys, each on its own; both bounded at
                 half the data loaded (acorn: capacity; diskcache:
                 size_limit, culling up to cull_limit=10 entries a set
                 while its volume is above it)
    evict-txn    KEYS sets of new keys in transactions of 1000

It prints ops/s for each side and each phase, and the ratios lru/dc-lrs,
fifo/dc-lrs (the medians of the per-run ratios).
"""
import os
import random
import shutil
import sqlite3
import statistics
import sys
import time

import diskcache

ext, root = sys.argv[1], sys.argv[2]
nkeys = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
nruns = int(sys.argv[4]) if len(sys.argv) > 4 else 3
NSLICE = 10
VALUE = bytes(range(256)) * 4
SIDES = ["lru", "fifo", "dc-lrs", "dc-lru"]
PHASES = ["load (txn of 1000)", "random gets", "evicting sets, autocommit",
          "evicting sets, txn of 1000"]


class Acorn:
    def __init__(self, path, policy, capacity):
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.enable_load_extension(True)
        self.db.load_extension(ext)
        self.db.enable_load_extension(False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE VIRTUAL TABLE c USING cache(capacity=%d, policy=%s)"
                        % (capacity, policy))
        self.policy = policy

    def sets(self, keys, txn):
        ex = self.db.execute
        for i in range(0, len(keys), txn or 1):
            if txn:
                ex("BEGIN")
            for k in keys[i:i + (txn or 1)]:
                ex("INSERT INTO c(key, value) VALUES(?, ?)", (k, VALUE))
            if txn:
                ex("COMMIT")

    def gets(self, keys, last):
        ex = self.db.execute
        for k in keys:
            if ex("SELECT value FROM c WHERE key=?", (k,)).fetchone() is None:
                raise SystemExit("acorn %s: %s not found" % (self.policy, k))
        if last and self.policy == "lru":
            ex("INSERT INTO c(c) VALUES('flush')")

    def bound(self):
        b = self.db.execute("SELECT bytes FROM cache_stats('c')").fetchone()[0]
        self.db.execute("INSERT INTO c(c, value) VALUES('capacity', ?)", (b // 2,))

    def close(self):
        self.db.execute("INSERT INTO c(c) VALUES('integrity_check')")
        self.db.close()


class Disk:
    def __init__(self, path, policy, capacity):
        self.cache = diskcache.Cache(path, size_limit=capacity,
                                     eviction_policy=policy)

    def sets(self, keys, txn):
        c = self.cache
        if not txn:
            for k in keys:
                c.set(k, VALUE)
            return
        for i in range(0, len(keys), txn):
            with c.transact():
                for k in keys[i:i + txn]:
                    c.set(k, VALUE)

    def gets(self, keys, last):
        c = self.cache
        for k in keys:
            if c.get(k) is None:
                raise SystemExit("diskcache: %s not found" % k)

    def bound(self):
        self.cache.reset("size_limit", self.cache.volume() // 2)

    def close(self):
        self.cache.close()


def run(irun, rates):
    d = os.path.join(root, "run%d" % irun)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    big = 64 * nkeys * (len(VALUE) + 16)
    sides = [Acorn(os.path.join(d, "lru.db"), "lru", big),
             Acorn(os.path.join(d, "fifo.db"), "fifo", big),
             Disk(os.path.join(d, "dc-lrs"), "least-recently-stored", big),
             Disk(os.path.join(d, "dc-lru"), "least-recently-used", big)]
    rng = random.Random(irun)
    loaded = ["key%09d" % i for i in range(nkeys)]
    fresh = iter("new%09d" % i for i in range(10 * nkeys))
    gets = [rng.choice(loaded) for _ in range(2 * nkeys)]
    auto = [next(fresh) for _ in range(nkeys // 4)]
    txn = [next(fresh) for _ in range(nkeys)]
    work = [(loaded, lambda s, ks, last: s.sets(ks, 1000)),
            (gets, lambda s, ks, last: s.gets(ks, last)),
            (auto, lambda s, ks, last: s.sets(ks, 0)),
            (txn, lambda s, ks, last: s.sets(ks, 1000))]
    for iphase, (keys, op) in enumerate(work):
        if iphase == 2:
            for s in sides:
                s.bound()
        spent = [0.0] * len(sides)
        per = len(keys) // NSLICE
        for sl in range(NSLICE):
            part = keys[sl * per:(sl + 1) * per]
            for k in range(len(sides)):
                j = (sl + k) % len(sides)
                t0 = time.perf_counter()
                op(sides[j], part, sl == NSLICE - 1)
                spent[j] += time.perf_counter() - t0
        for j in range(len(sides)):
            rates[iphase][j].append(per * NSLICE / spent[j])
    for s in sides:
        s.close()
    shutil.rmtree(d, ignore_errors=True)


def main():
    rates = [[[] for _ in SIDES] for _ in PHASES]
    for r in range(nruns):
        run(r, rates)
        print("  run %d of %d: %s" % (r + 1, nruns, "  ".join(
            "/".join("%.0f" % rates[p][j][-1] for j in range(len(SIDES)))
            for p in range(len(PHASES)))), file=sys.stderr)
    print("%d keys, 1 KiB values, Python %s, SQLite %s, diskcache %s, median of %d runs"
          % (nkeys, sys.version.split()[0], sqlite3.sqlite_version,
             diskcache.__version__, nruns))
    print("| %-28s | %8s | %8s | %8s | %8s | %13s | %14s |" % (
        "phase", "lru/s", "fifo/s", "dc-lrs/s", "dc-lru/s", "lru / dc-lrs",
        "fifo / dc-lrs"))
    print("|------------------------------|---------:|---------:|---------:"
          "|---------:|--------------:|---------------:|")
    for p, name in enumerate(PHASES):
        med = [statistics.median(rates[p][j]) for j in range(len(SIDES))]
        r_lru = statistics.median(a / b for a, b in zip(rates[p][0], rates[p][2]))
        r_fifo = statistics.median(a / b for a, b in zip(rates[p][1], rates[p][2]))
        print("| %-28s | %8.0f | %8.0f | %8.0f | %8.0f | %13.2f | %14.2f |" % (
            name, med[0], med[1], med[2], med[3], r_lru, r_fifo))


main()
