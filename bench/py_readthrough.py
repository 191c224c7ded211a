"""bench/py_readthrough.py: sqlite_acorn.Cache as a read-through cache under
Zipf traffic, against diskcache.Cache, all sides interleaved in this one
process (bench/py_readthrough.sh runs it).

Usage: py_readthrough.py DIR [KEYS...]
For each number of keys (default 10000 100000) and Zipf exponent s = 0.99
and 0.7: 1 KiB values (bytes), a capacity of 10% of all keys' bytes (key +
value), each request a get and, on a miss, a set of the key's value.  Sides:
  acorn        sqlite_acorn.Cache(policy lru), capacity in bytes
  dc-default   diskcache.Cache, its default eviction (least-recently-stored),
               size_limit the same bytes
  dc-lru       diskcache.Cache(eviction_policy='least-recently-used'), the same
All in WAL with synchronous NORMAL (both libraries' defaults here).  Each side
first serves WARMUP requests (not measured), then the measured requests in
rounds of ROUND: round i of every side, in turn (the order rotating), runs
the same slice of one request stream, so machine noise falls on all sides
alike.  Prints requests/s and hit ratio per side, and ratios.

Then the wrapper's own cost: Cache.get against conn.execute("SELECT
cache_get(?, ?)", (table, key)).fetchone()[0] on the same connection
(cache._db()), over the same Zipf keys of a full table, interleaved in rounds.

Environment: PY_READTHROUGH_REQUESTS (measured per side and point, default
20000), PY_READTHROUGH_WARMUP (default 20000), PY_READTHROUGH_ROUND (1000),
PY_READTHROUGH_GETS (gets per side of the wrapper test, default 200000).
"""

import bisect
import itertools
import os
import random
import sys
import time

import diskcache
from sqlite_acorn import Cache

VALUE = 1024


def zipf_stream(n, s, count, seed):
    cum = list(itertools.accumulate(1.0 / (i ** s) for i in range(1, n + 1)))
    total = cum[-1]
    rng = random.Random(seed)
    # rank r -> key number: a fixed shuffle, so popular keys are spread over the key space
    perm = list(range(n))
    random.Random(seed + 1).shuffle(perm)
    return [perm[bisect.bisect_left(cum, rng.random() * total)] for _ in range(count)]


def key_of(i):
    return f"key:{i:08d}"


def value_of(i):
    return i.to_bytes(8, "little") * (VALUE // 8)


class Side:
    def __init__(self, name, get, set_):
        self.name, self.get, self.set = name, get, set_
        self.seconds = 0.0
        self.requests = 0
        self.hits = 0

    def serve(self, keys, measure):
        get, set_ = self.get, self.set
        hits = 0
        t0 = time.perf_counter()
        for k in keys:
            if get(k) is None:
                set_(k)
            else:
                hits += 1
        t = time.perf_counter() - t0
        if measure:
            self.seconds += t
            self.requests += len(keys)
            self.hits += hits


def point(d, n, s, requests, warmup, rnd):
    cap = int(n * (len(key_of(0)) + VALUE) * 0.10)
    tag = f"{n}-{s}"
    acorn = Cache(os.path.join(d, f"acorn-{tag}.db"), capacity=cap)
    dc = diskcache.Cache(os.path.join(d, f"dc-{tag}"), size_limit=cap)
    dl = diskcache.Cache(os.path.join(d, f"dclru-{tag}"), size_limit=cap,
                         eviction_policy="least-recently-used")
    keys = [key_of(i) for i in range(n)]
    vals = {k: value_of(i) for i, k in enumerate(keys)}
    sides = [
        Side("acorn", acorn.get, lambda k: acorn.set(k, vals[k])),
        Side("dc-default", dc.get, lambda k: dc.set(k, vals[k])),
        Side("dc-lru", dl.get, lambda k: dl.set(k, vals[k])),
    ]
    stream = [keys[i] for i in zipf_stream(n, s, warmup + requests, seed=n + int(s * 100))]
    for side in sides:
        side.serve(stream[:warmup], False)
    for r, i in enumerate(range(warmup, warmup + requests, rnd)):
        sl = stream[i:i + rnd]
        for j in range(len(sides)):
            sides[(r + j) % len(sides)].serve(sl, True)
    print(f"\n{n} keys, Zipf s={s}, capacity {cap} bytes (10%), {VALUE}-byte values,"
          f" {requests} requests per side after {warmup} of warm-up")
    print("| side | requests/s | hit ratio |")
    print("|---|--:|--:|")
    rate = {}
    for side in sides:
        rate[side.name] = side.requests / side.seconds
        print(f"| {side.name} | {rate[side.name]:,.0f} | {side.hits / side.requests:.3f} |")
    a = rate["acorn"]
    print(f"ratios: acorn/dc-default {a / rate['dc-default']:.2f},"
          f" acorn/dc-lru {a / rate['dc-lru']:.2f}")
    acorn.close()
    dc.close()
    dl.close()
    return n, s, a / rate["dc-default"], a / rate["dc-lru"]


def wrapper_cost(d, n, gets, rnd):
    """Cache.get against the raw SELECT cache_get(?, ?) on the same connection."""
    cache = Cache(os.path.join(d, "wrapper.db"))
    c = cache._db()
    with cache.transact():
        for i in range(n):
            cache.set(key_of(i), value_of(i))
    stream = [key_of(i) for i in zipf_stream(n, 0.99, gets, seed=7)]
    table = cache.table
    sql = "SELECT cache_get(?, ?)"

    def raw(keys):
        ex = c.execute
        for k in keys:
            ex(sql, (table, k)).fetchone()[0]

    def wrapped(keys):
        get = cache.get
        for k in keys:
            get(k)

    t = {"raw": 0.0, "get": 0.0}
    for fn in (raw, wrapped):
        fn(stream[:rnd])                 # statements prepared, pages read
    for r, i in enumerate(range(0, gets, rnd)):
        sl = stream[i:i + rnd]
        order = [("raw", raw), ("get", wrapped)]
        if r % 2:
            order.reverse()
        for name, fn in order:
            t0 = time.perf_counter()
            fn(sl)
            t[name] += time.perf_counter() - t0
    print(f"\nThe wrapper's cost: {gets} gets each, {n} keys of 1 KiB, Zipf s=0.99, one connection")
    print("| form | gets/s |")
    print("|---|--:|")
    print(f"| conn.execute('SELECT cache_get(?, ?)').fetchone()[0] | {gets / t['raw']:,.0f} |")
    print(f"| Cache.get(key) | {gets / t['get']:,.0f} |")
    print(f"ratio: Cache.get / raw SELECT cache_get {t['raw'] / t['get']:.2f} (aim >= 0.85)")
    cache.close()
    return t["raw"] / t["get"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    sizes = [int(x) for x in sys.argv[2:]] or [10000, 100000]
    env = os.environ.get
    requests = int(env("PY_READTHROUGH_REQUESTS", "20000"))
    warmup = int(env("PY_READTHROUGH_WARMUP", "20000"))
    rnd = int(env("PY_READTHROUGH_ROUND", "1000"))
    gets = int(env("PY_READTHROUGH_GETS", "200000"))
    print(f"bench/py_readthrough.py: Python {sys.version.split()[0]}, diskcache"
          f" {diskcache.__version__}, sqlite_acorn {__import__('sqlite_acorn').__version__},"
          f" SQLite {__import__('sqlite3').sqlite_version}")
    rows = [point(d, n, s, requests, warmup, rnd) for n in sizes for s in (0.99, 0.7)]
    w = wrapper_cost(d, sizes[0], gets, rnd)
    print("\nSummary: requests/s of acorn over each diskcache side")
    print("| keys | s | acorn/dc-default | acorn/dc-lru |")
    print("|--:|--:|--:|--:|")
    for n, s, r1, r2 in rows:
        print(f"| {n} | {s} | {r1:.2f} | {r2:.2f} |")
    print(f"Cache.get / raw SELECT cache_get: {w:.2f}")


if __name__ == "__main__":
    main()
