#!/usr/bin/python3
"""Model-based test of the cache table's LRU: random operations, a reference
model, and the exact output the sqlite3 shell must print.

    cache_model.py SEED NOPS BUFFER OUTDIR [JOURNAL] [POLICY]

writes OUTDIR/script.sql (to run in the sqlite3 shell after .load), and
OUTDIR/expected.out / OUTDIR/expected.err: the shell's stdout, and its
stderr with "near line N: " removed.  After every operation the script lists
the stored keys (a listing is not a use) and the counters of cache_stats, so
any difference from the model shows up at the operation that caused it.

The model is a plain LRU over entry ids: a set puts the key at the most
recent end (after removing the old entry of the key, then evicting from the
least recent end until the new entry fits), with a new id; a get (a SELECT
of value, or cache_get) or cache_read that finds the key moves its id to
the most recent end; an UPDATE of the value is a set that keeps created,
hits and the tag; an UPDATE of only ttl, expires or tag (a renewal) keeps
the entry (its id, size, created and hits) and, under lru, moves it to the
most recent end; DDL on another table (a schema reset) changes nothing.
Tags: sets give one of a few tags or none, UPDATE ... SET tag changes it,
DELETE ... WHERE tag = ? removes the live entries that have it (the
application's own delete: no row of the feed), and the check lists the
entries of each tag and counts them.
Expiry without timing: a set with ttl 0 (or expires 1) makes an entry that
is expired at once, one with ttl 10^9 one that never expires in the test.
A renewal with ttl 0 expires the entry at the time of the write (ordered
after every entry set before it); one that could tie in time with an
entry set before it and expired the same way (whose id is higher: the
table orders a tie by id) sets expires 1 instead.
An expired entry is invisible to reads (a get of it is a miss) and to
DELETE and UPDATE (no row: no write), and still counts in entries and bytes
until a write (a set, a DELETE or UPDATE that finds a row, a command)
reclaims every expired entry.
With POLICY fifo, a get or cache_read does not move the entry and counts
no hit or miss (cache_stats shows NULL); eviction is in order of set.
With max_entries (at CREATE, 0 or a few; changed by its command), a set
also evicts from the least recent end until the entries fit.  With feed
(at CREATE and by its command), every eviction (reason capacity or
entries) and every expired entry reclaimed (in order of expires, then id)
is a row of the feed, which keeps the newest feed rows; after every
operation the script reads cache_evictions after the last seq it saw.
Transactions and savepoints: ROLLBACK / ROLLBACK TO put
back the entries, capacity and eviction count as they were, and replay the
uses made since (reads are not undone; uses of ids that no longer exist are
dropped), which is what the table's rollback of its flushed recency gives.
"""
import os
import random
import sys
from collections import OrderedDict


class Model:
    def __init__(self, capacity, fifo=False, max_entries=0, feed=0):
        self.fifo = fifo
        self.max_entries = max_entries   # 0: no bound
        # key -> (id, size, value hex, expired, tag); LRU first.  expired: 0
        # no, (1, 0) expires = 1, (2, n) ttl 0 (expires = the time of the
        # set or renewal, the nth such): reclaimed in order of expires, then
        # id; tag: text or None
        self.entries = OrderedDict()
        self.nexp = 0
        self.feed_n = feed             # removals the feed keeps, 0: off
        self.feed = []                 # (seq, key, size, reason), oldest first
        self.fseq = 0
        self.capacity = capacity
        self.next_id = 1
        self.hits = self.misses = self.evictions = 0
        self.uses = []                 # log of used ids, for rollback replay
        self.stack = []                # open savepoints: (name, snapshot, len(uses))
        # what the run did, for the test to require (tests/cache.bash)
        self.covered = {"tag deletes": 0, "tagged in feed": 0, "renewals": 0,
                        "tag updates": 0}

    def total(self):
        return sum(e[1] for e in self.entries.values())

    def live(self, key):
        return key in self.entries and not self.entries[key][3]

    def gone(self, key, e, reason):
        # a removal the application did not ask for: a row of the feed
        if self.feed_n:
            self.covered["tagged in feed"] += e[4] is not None
            self.fseq += 1
            self.feed.append((self.fseq, key, e[1], reason))
            del self.feed[:-self.feed_n]

    def reclaim(self):
        for _, _, k in sorted((e[3], e[0], k) for k, e in self.entries.items() if e[3]):
            self.gone(k, self.entries.pop(k), "expired")

    def evict_until(self, need, adding=0):
        # (adding: an entry is about to be set, after the eviction)
        while self.entries and (self.total() + need > self.capacity or (
                self.max_entries and len(self.entries) + adding > self.max_entries)):
            reason = "capacity" if self.total() + need > self.capacity else "entries"
            k, e = self.entries.popitem(last=False)
            self.gone(k, e, reason)
            self.evictions += 1

    def expiry(self, kind):
        # kind 0 live, 1 expires = 1, 2 ttl 0 now
        if kind == 2:
            self.nexp += 1
            return (2, self.nexp)
        return (1, 0) if kind == 1 else 0

    def set(self, key, size, value, expired=0, tag=None):
        if size > self.capacity:
            return "cache: entry of %d bytes exceeds capacity of %d bytes" % (
                size, self.capacity)
        self.reclaim()
        self.entries.pop(key, None)
        self.evict_until(size, 1)
        # every set makes a new entry, with a new id (a stored key's old
        # entry goes): uses of the old id replayed after a rollback that
        # keeps the old entry apply to it, uses of the new id are dropped
        self.entries[key] = (self.next_id, size, value, self.expiry(expired), tag)
        self.next_id += 1
        return None

    def renew(self, key, expired=None, tag=False):
        # an UPDATE of ttl, expires or tag alone, of a live entry: expired
        # (None: kept) and tag (False: kept) change, nothing else
        self.reclaim()
        i, size, value, exp, t = self.entries[key]
        self.entries[key] = (i, size, value,
                             exp if expired is None else self.expiry(expired),
                             t if tag is False else tag)
        if not self.fifo:
            self.entries.move_to_end(key)

    def renew_may_expire(self, key):
        # may key be renewed with ttl 0, its order in reclaim certain?
        i = self.entries[key][0]
        return not any(e[3] and e[3][0] == 2 and e[0] > i
                       for k, e in self.entries.items() if k != key)

    def delete_tag(self, tag):
        # DELETE ... WHERE tag = ?: the application's own delete
        gone = [k for k, e in self.entries.items() if e[4] == tag and not e[3]]
        for k in gone:
            del self.entries[k]
        if gone:
            self.reclaim()
        return len(gone)

    def use(self, key):
        if self.fifo:
            return self.entries[key] if self.live(key) else None
        if self.live(key):
            self.entries.move_to_end(key)
            self.hits += 1
            self.uses.append(self.entries[key][0])
            return self.entries[key]
        self.misses += 1
        return None

    def snapshot(self):
        return (OrderedDict(self.entries), self.capacity, self.evictions,
                self.next_id, self.max_entries, list(self.feed), self.fseq,
                self.feed_n, self.nexp)

    def restore(self, snap, since):
        (self.entries, self.capacity, self.evictions, _, self.max_entries,
         self.feed, self.fseq, self.feed_n, _) = snap
        self.feed = list(self.feed)
        self.entries = OrderedDict(self.entries)
        by_id = {e[0]: k for k, e in self.entries.items()}
        for i in self.uses[since:]:
            if i in by_id:
                self.entries.move_to_end(by_id[i])


def sql_key(k):
    if isinstance(k, int):
        return str(k)
    if isinstance(k, bytes):
        return "x'%s'" % k.hex()
    return "'%s'" % k.replace("'", "''")


def sqlite_order(x):
    # how SQLite orders keys: integers, then text by its bytes, then blobs
    if isinstance(x, int):
        return (0, x, b"")
    if isinstance(x, str):
        return (1, 0, x.encode())
    return (2, 0, x)


TAGS = ["user:1", "user:2", "page"]


def sql_tag(t):
    return "NULL" if t is None else "'%s'" % t


def key_bytes(k):
    if isinstance(k, int):
        return 8
    if isinstance(k, bytes):
        return len(k)
    return len(k.encode())


def main():
    seed, nops, buf, outdir = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    journal, policy = None, "lru"
    for a in sys.argv[5:]:
        if a in ("lru", "fifo"):
            policy = a
        else:
            journal = a
    rnd = random.Random(seed)
    keys = ["k%d" % i for i in range(14)] + [i * 7 for i in range(1, 10)] \
        + [bytes([i, 255 - i]) for i in range(8)] + ["é%d" % i for i in range(4)]
    cap = rnd.randint(1500, 4000)
    maxent = rnd.choice([0, 0, rnd.randint(2, 12)])
    feed = rnd.choice([0, 4, 1000])
    m = Model(cap, policy == "fifo", maxent, feed)
    script, out, err = [], [], []
    if journal:
        script.append("PRAGMA journal_mode=%s;" % journal)
        out.append(journal.lower())
    script.append("CREATE VIRTUAL TABLE c USING cache(capacity=%d, recency_buffer=%d,"
                  " policy=%s, max_entries=%d, feed=%d);" % (cap, buf, policy, maxent,
                                                              feed))
    check = ("SELECT count(*), coalesce(group_concat(k, ','), '') FROM"
             " (SELECT quote(key) AS k FROM c ORDER BY 1);"
             "SELECT capacity, entries, bytes, hits, misses, evictions FROM cache_stats('c');"
             "SELECT count(*), coalesce(group_concat(r, ','), '') FROM (SELECT seq || ':'"
             " || quote(key) || ':' || size || ':' || reason AS r FROM cache_evictions('c')"
             " WHERE seq > %d);"
             "SELECT coalesce(group_concat(t || ':' || n, ','), '') FROM (SELECT tag AS t,"
             " count(*) AS n FROM c WHERE tag IS NOT NULL GROUP BY tag ORDER BY tag);")

    feed_seen = [0]      # the newest seq printed: the check polls after it

    def check_sql():
        return check % feed_seen[0]

    def expect_check():
        # quote() text sorts by its UTF-8 bytes, as Python sorts str
        ks = sorted((sql_quote(k) for k in m.entries if m.live(k)))
        out.append("%d|%s" % (len(ks), ",".join(ks)))
        if m.fifo:
            out.append("%d|%d|%d|||%d" % (m.capacity, len(m.entries), m.total(),
                                          m.evictions))
        else:
            out.append("%d|%d|%d|%d|%d|%d" % (m.capacity, len(m.entries), m.total(),
                                              m.hits, m.misses, m.evictions))
        # the feed after the last seq the previous check saw (a rollback may
        # have taken rows back: then the feed is read again from the start)
        rows = [r for r in m.feed if r[0] > feed_seen[0]]
        out.append("%d|%s" % (len(rows), ",".join(
            "%d:%s:%d:%s" % (q, sql_quote(k), size, why) for q, k, size, why in rows)))
        feed_seen[0] = m.feed[-1][0] if rows else min(feed_seen[0], m.fseq)
        # the live entries of each tag
        n = {}
        for e in m.entries.values():
            if e[4] is not None and not e[3]:
                n[e[4]] = n.get(e[4], 0) + 1
        out.append(",".join("%s:%d" % (t, n[t]) for t in sorted(n)))

    def sql_quote(k):
        if isinstance(k, int):
            return str(k)
        if isinstance(k, bytes):
            return "X'%s'" % k.hex().upper()
        return "'%s'" % k

    sp = ddl = 0
    for step in range(nops):
        r = rnd.random()
        k = rnd.choice(keys)
        if r < 0.33:
            n = rnd.choice([rnd.randint(1, 60), rnd.randint(1, 400), rnd.randint(cap // 3, cap + 50)])
            value = bytes(rnd.getrandbits(8) for _ in range(min(n, 8))).hex()
            # value: 8 random bytes (or fewer) then zeros, n bytes in all
            vsql = "CAST(x'%s' || zeroblob(%d) AS BLOB)" % (value, n - len(value) // 2)
            size = key_bytes(k) + n
            t = rnd.random()
            # ttl 0 and expires 1: expired at once; ttl 10^9: never here
            col, arg, dead = [("ttl", ", 0", 2), ("ttl", ", 1000000000", 0),
                              ("expires", ", 1", 1), ("ttl", ", 0.0", 2),
                              ("", "", 0), ("", "", 0)][min(int(t * 12), 5)]
            tag = rnd.choice(TAGS + [None, None])
            e = m.set(k, size, value, dead, tag)
            if col != "expires" and step % 2:
                # every other set without expires as cache_set(), which
                # sets as INSERT does (its errors named cache_set)
                script.append("SELECT typeof(cache_set('c', %s, %s, %s, %s));" % (
                    sql_key(k), vsql, arg[2:] if arg else "NULL", sql_tag(tag)))
                if e:
                    err.append("Runtime error: " + e.replace("cache:", "cache_set:", 1))
                else:
                    out.append("integer")
            else:
                script.append("INSERT INTO c(key, value%s, tag) VALUES(%s, %s%s, %s);" % (
                    ", " + col if col else "", sql_key(k), vsql, arg, sql_tag(tag)))
                if e:
                    err.append("Runtime error: " + e)
        elif r < 0.58 and step % 3 == 2:
            # a get as cache_get (the same draws as the SELECT below)
            script.append("SELECT quote(substr(cache_get('c', %s), 1, 8));" % sql_key(k))
            e = m.use(k)
            out.append("X'%s'" % e[2].upper() if e else "NULL")
        elif r < 0.58:
            script.append("SELECT length(value), hex(substr(value, 1, 8)) FROM c WHERE key=%s;" % sql_key(k))
            e = m.use(k)
            if e:
                out.append("%d|%s" % (e[1] - key_bytes(k), e[2].upper()))
        elif r < 0.66:
            off = rnd.randint(0, 6)
            script.append("SELECT quote(cache_read('c', %s, %d, 3));" % (sql_key(k), off))
            e = m.use(k)
            if e:
                full = bytes.fromhex(e[2]) + bytes(e[1] - key_bytes(k) - len(e[2]) // 2)
                out.append("X'%s'" % full[off:off + 3].hex().upper())
            else:
                out.append("NULL")
        elif r < 0.70:
            ks = rnd.sample(keys, 3)
            script.append("SELECT count(value) FROM c WHERE key IN (%s);" % ",".join(sql_key(x) for x in ks))
            n = 0
            # IN values are visited in SQLite's order; the uses that matter
            # for LRU are made in that order too: sort like SQLite (ints, text, blobs)
            for x in sorted(ks, key=sqlite_order):
                if m.use(x):
                    n += 1
            out.append(str(n))
        elif r < 0.77:
            script.append("DELETE FROM c WHERE key=%s;" % sql_key(k))
            if m.live(k):
                m.entries.pop(k)
                m.reclaim()
        elif r < 0.81:
            u = rnd.random()
            live = [x for x in keys if m.live(x)]
            if live and rnd.random() < 0.7:
                k = rnd.choice(live)     # (most UPDATEs find their row)
            was_live = m.live(k)
            if u < 0.4:
                # a new value: a set that keeps created, hits, expires, tag
                n = rnd.randint(1, 300)
                value = bytes(rnd.getrandbits(8) for _ in range(min(n, 8))).hex()
                vsql = "CAST(x'%s' || zeroblob(%d) AS BLOB)" % (value, n - len(value) // 2)
                script.append("UPDATE c SET value=%s WHERE key=%s;" % (vsql, sql_key(k)))
                if m.live(k):
                    e = m.set(k, key_bytes(k) + n, value, 0, m.entries[k][4])
                    if e:
                        err.append("Runtime error: " + e)
            elif u < 0.85:
                # a renewal: a new lifetime (ttl 0 or expires 1: expired at
                # once), the same entry
                ttl = rnd.choice([0, 86400, 86400, "far", 1])
                if ttl == 0 and m.live(k) and not m.renew_may_expire(k):
                    ttl = 1
                if ttl == 1:
                    script.append("UPDATE c SET expires=1 WHERE key=%s;" % sql_key(k))
                elif ttl == "far":
                    script.append("UPDATE c SET expires=4102444800000 WHERE key=%s;" % sql_key(k))
                else:
                    script.append("UPDATE c SET ttl=%d WHERE key=%s;" % (ttl, sql_key(k)))
                if m.live(k):
                    m.renew(k, expired={0: 2, 1: 1}.get(ttl, 0))
                    m.covered["renewals"] += 1
            else:
                tag = rnd.choice(TAGS + [None])
                script.append("UPDATE c SET tag=%s WHERE key=%s;" % (sql_tag(tag), sql_key(k)))
                if m.live(k):
                    m.renew(k, tag=tag)
                    m.covered["tag updates"] += 1
            if not was_live and not m.fifo:
                m.misses += 1     # the UPDATE's lookup reads value: a miss
        elif r < 0.83:
            if rnd.random() < 0.7:
                c = rnd.randint(300, 4000)
                script.append("INSERT INTO c(c, value) VALUES('capacity', %d);" % c)
                m.capacity = c
            elif rnd.random() < 0.6:
                c = rnd.choice([0, rnd.randint(1, 15)])
                script.append("INSERT INTO c(c, value) VALUES('max_entries', %d);" % c)
                m.max_entries = c
            else:
                # the feed keeps the newest c rows from now on (0: off, emptied)
                c = rnd.choice([0, 1, 3, 1000])
                script.append("INSERT INTO c(c, value) VALUES('feed', %d);" % c)
                m.feed_n = c
                m.feed = m.feed[-c:] if c else []
            m.reclaim()
            m.evict_until(0)
        elif r < 0.86:
            script.append("INSERT INTO c(c) VALUES('flush');")
            m.reclaim()
        elif r < 0.95:
            # transaction control
            t = rnd.random()
            if t < 0.4 and len(m.stack) < 3:
                if not m.stack:
                    script.append("BEGIN;")
                    name = "BEGIN"
                else:
                    sp += 1
                    name = "s%d" % sp
                    script.append("SAVEPOINT %s;" % name)
                m.stack.append((name, m.snapshot(), len(m.uses)))
            elif m.stack:
                name, snap, since = m.stack[-1]
                if rnd.random() < 0.5:
                    if name == "BEGIN":
                        script.append("ROLLBACK;")
                        m.restore(snap, since)
                        m.stack.pop()
                    else:
                        script.append("ROLLBACK TO %s;" % name)
                        m.restore(snap, since)
                        if rnd.random() < 0.5:
                            script.append("RELEASE %s;" % name)
                            m.stack.pop()
                else:
                    if name == "BEGIN":
                        script.append("COMMIT;")
                    else:
                        script.append("RELEASE %s;" % name)
                    m.stack.pop()
            else:
                continue
        elif r < 0.97:
            # DDL on another table resets the schema: SQLite connects the
            # cache table again, and the buffered uses must follow it
            ddl += 1
            script.append("CREATE TABLE ddl%d(x);" % ddl)
        elif r < 1.0:
            # one tag's entries: listed (not a use), or deleted
            tag = rnd.choice(TAGS)
            if rnd.random() < 0.5:
                script.append("SELECT count(*), coalesce(group_concat(k, ','), '') FROM"
                              " (SELECT quote(key) AS k FROM c WHERE tag = %s ORDER BY key);"
                              % sql_tag(tag))
                ks = sorted((x for x, e in m.entries.items() if e[4] == tag and not e[3]),
                            key=sqlite_order)
                out.append("%d|%s" % (len(ks), ",".join(sql_quote(x) for x in ks)))
            else:
                script.append("DELETE FROM c WHERE tag = %s;" % sql_tag(tag))
                m.covered["tag deletes"] += m.delete_tag(tag) > 0
        script.append(check_sql())
        expect_check()
    while m.stack:
        name, _, _ = m.stack.pop()
        script.append("COMMIT;" if name == "BEGIN" else "RELEASE %s;" % name)
    script.append(check_sql())
    expect_check()
    with open(os.path.join(outdir, "script.sql"), "w") as f:
        f.write("\n".join(script) + "\n")
    with open(os.path.join(outdir, "expected.out"), "w") as f:
        f.write("\n".join(out) + "\n")
    with open(os.path.join(outdir, "expected.err"), "w") as f:
        f.write("".join(e + "\n" for e in err))
    with open(os.path.join(outdir, "covered"), "w") as f:
        f.write("".join("%s: %d\n" % kv for kv in m.covered.items()))


if __name__ == "__main__":
    main()
