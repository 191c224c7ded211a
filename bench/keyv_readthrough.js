// bench/keyv_readthrough.js (run by bench/keyv_readthrough.sh, which sets up
// the modules): Keyv as a read-through cache under Zipf traffic, on acorn's
// Keyv store (sqlite-acorn/keyv over better-sqlite3) against Keyv's own
// SQLite store, @keyv/sqlite (over node-sqlite3); then what the Cache
// object costs over a bare cache_get statement.
//
// Part 1, for each N keys and Zipf exponent s: every request draws a key
// (rank r with probability ~ 1/r^s, from a seeded generator, the same
// sequence for both sides), gets it through Keyv, and on a miss sets it
// (a 1 KiB string).  acorn's table holds 10% of the keys' bytes (capacity =
// 0.1 * N * the bytes one entry counts for, measured); @keyv/sqlite has no
// bound on bytes or entries, so it keeps every key it was given, and its
// size is reported.  Both databases are files in DIR, WAL, synchronous =
// NORMAL (set on @keyv/sqlite's connection through its query()).  Each
// side first runs WARMUP requests (not measured), then REQUESTS measured
// ones, in chunks of CHUNK alternating between the sides, so both see the
// same machine load.
//
// Part 2: gets of 10^4 stored keys (1 KiB values, all hits, uniform keys):
// a bare `SELECT cache_get('t', ?)` statement (better-sqlite3, pluck), then
// Cache.get, KeyvAcorn.get (a Promise) and Keyv.get (Keyv's key prefix,
// hooks, stats and JSON), interleaved in chunks; the ratio to the bare
// statement is each layer's cost.
//
// Usage: node keyv_readthrough.js DIR [N...]   environment:
//   KEYV_REQUESTS (default 40000), KEYV_WARMUP (20000), KEYV_CHUNK (1000),
//   KEYV_GETS (part 2 gets per side, 200000)
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const Database = require('better-sqlite3');
const { Keyv } = require('keyv');
const KeyvSqlite = require('@keyv/sqlite').default || require('@keyv/sqlite');
const { Cache } = require('sqlite-acorn');
const KeyvAcorn = require('sqlite-acorn/keyv');

const dir = process.argv[2];
const sizes = process.argv.slice(3).map(Number);
const REQUESTS = Number(process.env.KEYV_REQUESTS || 40000);
const WARMUP = Number(process.env.KEYV_WARMUP || 20000);
const CHUNK = Number(process.env.KEYV_CHUNK || 1000);
const GETS = Number(process.env.KEYV_GETS || 200000);
if (GETS % CHUNK || REQUESTS % CHUNK || WARMUP % CHUNK) {
  throw new Error(`KEYV_GETS, KEYV_REQUESTS and KEYV_WARMUP must be multiples of KEYV_CHUNK (${CHUNK})`);
}
const VALUE = 'v'.repeat(1024);

// A seeded 32-bit generator (mulberry32): enough to draw ranks, the same
// sequence on every run.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Ranks 0..n-1 drawn with P(r) ~ 1/(r+1)^s: a cumulative table and a binary
// search.
function zipf(n, s, seed) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) { sum += 1 / Math.pow(i + 1, s); cdf[i] = sum; }
  const u = rng(seed);
  return () => {
    const x = u() * sum;
    let lo = 0, hi = n - 1;
    while (lo < hi) { const m = (lo + hi) >>> 1; if (cdf[m] < x) lo = m + 1; else hi = m; }
    return lo;
  };
}

const fileBytes = (f) => ['', '-wal'].reduce((t, x) => t + (fs.existsSync(f + x) ? fs.statSync(f + x).size : 0), 0);
const mib = (b) => (b / 1048576).toFixed(1);
const fmt = (x) => Math.round(x).toLocaleString('en-US');

// A side: its Keyv, its place in the key sequence, what it measured.
const side = (name, keyv, keys) => ({ name, keyv, hits: 0, gets: 0, ns: 0n, keys, pos: 0 });

// Runs the next n requests of the side's key sequence, counting them when
// measured.
async function run(st, n, measured) {
  const t0 = process.hrtime.bigint();
  let hits = 0;
  for (let i = 0; i < n; i++) {
    const k = `k${st.keys[st.pos++]}`;
    const v = await st.keyv.get(k);
    if (v === undefined) await st.keyv.set(k, VALUE);
    else hits++;
  }
  if (measured) {
    st.ns += process.hrtime.bigint() - t0;
    st.hits += hits;
    st.gets += n;
  }
}

async function readthrough(n, s) {
  const keys = new Uint32Array(WARMUP + REQUESTS);
  const draw = zipf(n, s, 20260101 + n + Math.round(s * 100));
  for (let i = 0; i < keys.length; i++) keys[i] = draw();

  // acorn: the bytes of one entry as the table counts it, for the capacity
  const fa = path.join(dir, `acorn-${n}-${s}.db`);
  const db = new Database(fa);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const probe = new Keyv({ store: new KeyvAcorn(db, { table: 'probe' }) });
  await probe.set('k0', VALUE);
  const entry = db.prepare("SELECT size FROM probe WHERE key = 'keyv:k0'").pluck().get();
  db.exec('DROP TABLE probe');
  const capacity = Math.round(0.1 * n * entry);
  const a = side('acorn (sqlite-acorn/keyv)',
                       new Keyv({ store: new KeyvAcorn(db, { table: 'keyv', capacity }) }), keys);

  const fb = path.join(dir, `keyv-sqlite-${n}-${s}.db`);
  const ks = new KeyvSqlite({ uri: `sqlite://${fb}` });
  await ks.query('PRAGMA journal_mode = WAL');
  await ks.query('PRAGMA synchronous = NORMAL');
  const b = side('@keyv/sqlite', new Keyv({ store: ks }), keys);

  for (let done = 0; done < WARMUP; done += CHUNK) {
    const c = Math.min(CHUNK, WARMUP - done);
    await run(a, c, false);
    await run(b, c, false);
  }
  for (let done = 0; done < REQUESTS; done += CHUNK) {
    const c = Math.min(CHUNK, REQUESTS - done);
    // alternate which side goes first
    if ((done / CHUNK) % 2 === 0) { await run(a, c, true); await run(b, c, true); }
    else { await run(b, c, true); await run(a, c, true); }
  }

  const stats = a.keyv.store.cache.stats();
  const brow = (await ks.query('SELECT count(*) AS n, sum(length(key) + length(value)) AS bytes FROM keyv'))[0];
  await ks.disconnect();
  db.close();
  const rate = (x) => x.gets / (Number(x.ns) / 1e9);
  console.log(`\n${fmt(n)} keys, Zipf s = ${s}, 1 KiB values, ${fmt(WARMUP)} requests of warm-up then ` +
              `${fmt(REQUESTS)} measured per side, chunks of ${CHUNK} interleaved`);
  console.log('| side | requests/s | hit ratio | entries | bytes of keys+values | file (db+wal) |');
  console.log('|---|--:|--:|--:|--:|--:|');
  console.log(`| ${a.name}, capacity ${fmt(capacity)} B (10% of ${fmt(n)} x ${entry} B) | ${fmt(rate(a))} | ` +
              `${(a.hits / a.gets).toFixed(3)} | ${fmt(stats.entries)} | ${fmt(stats.bytes)} | ${mib(fileBytes(fa))} MiB |`);
  console.log(`| ${b.name}, no bound | ${fmt(rate(b))} | ${(b.hits / b.gets).toFixed(3)} | ` +
              `${fmt(brow.n)} | ${fmt(brow.bytes)} | ${mib(fileBytes(fb))} MiB |`);
  console.log(`ratio acorn/@keyv/sqlite: requests/s ${(rate(a) / rate(b)).toFixed(2)}, ` +
              `hit ratio ${(a.hits / a.gets / (b.hits / b.gets)).toFixed(2)}`);
  return [n, s, rate(a) / rate(b)];
}

async function wrapperCost() {
  const n = 10000;
  const f = path.join(dir, 'wrapper.db');
  const db = new Database(f);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const cache = new Cache(db, 't', { capacity: '1GiB' });
  db.transaction(() => { for (let i = 0; i < n; i++) cache.set(`k${i}`, VALUE); })();
  const store = new KeyvAcorn(cache);
  // Keyv.get needs Keyv's serialized form: a second table written by Keyv
  const kdb = new Keyv({ store: new KeyvAcorn(db, { table: 'kv' }), namespace: undefined, useKeyPrefix: false });
  for (let i = 0; i < n; i++) await kdb.set(`k${i}`, VALUE);
  const raw = db.prepare("SELECT cache_get('t', ?)").pluck();
  const u = rng(7);
  const order = new Uint32Array(GETS);
  for (let i = 0; i < GETS; i++) order[i] = Math.floor(u() * n);
  // KeyvAcorn.get hands Keyv its serialized form of the value (the JSON of
  // { value }), so its length is that of the form, the same for every key
  const envelope = (await store.get('k0')).length;
  const sides = [
    { name: "bare statement SELECT cache_get('t', ?) (pluck)", ns: 0n, sync: (k) => raw.get(k), len: 1024 },
    { name: 'Cache.get', ns: 0n, sync: (k) => cache.get(k), len: 1024 },
    { name: 'KeyvAcorn.get (await)', ns: 0n, f: (k) => store.get(k), len: envelope },
    { name: 'Keyv.get over KeyvAcorn (await; JSON)', ns: 0n, f: (k) => kdb.get(k), len: 1024 },
  ];
  let check = 0;
  for (let done = 0; done < GETS; done += CHUNK) {
    // each chunk starts with the next side, so none is always first
    const c = done / CHUNK;
    for (let j = 0; j < sides.length; j++) {
      const sd = sides[(c + j) % sides.length];
      const t0 = process.hrtime.bigint();
      if (sd.sync) {
        for (let i = done; i < done + CHUNK; i++) check += sd.sync(`k${order[i]}`).length;
      } else {
        for (let i = done; i < done + CHUNK; i++) check += (await sd.f(`k${order[i]}`)).length;
      }
      sd.ns += process.hrtime.bigint() - t0;
    }
  }
  const want = sides.reduce((a, sd) => a + GETS * sd.len, 0);
  if (envelope <= 1024 || check !== want) throw new Error(`wrong values read: ${check}, not ${want}`);
  db.close();
  const per = (sd) => Number(sd.ns) / GETS;
  console.log(`\nGets of ${fmt(n)} stored keys (1 KiB values, all hits, uniform), ${fmt(GETS)} per side, ` +
              `chunks of ${CHUNK} interleaved, better-sqlite3, WAL, synchronous = NORMAL`);
  console.log('| side | ns per get | gets/s | over the bare statement |');
  console.log('|---|--:|--:|--:|');
  for (const sd of sides) {
    console.log(`| ${sd.name} | ${fmt(per(sd))} | ${fmt(1e9 / per(sd))} | ${(per(sd) / per(sides[0])).toFixed(2)} |`);
  }
}

async function main() {
  console.log(`Node ${process.version}, better-sqlite3 ${require('better-sqlite3/package.json').version} ` +
              `(SQLite ${new Database(':memory:').prepare('SELECT sqlite_version()').pluck().get()}), ` +
              `keyv ${JSON.parse(fs.readFileSync(require.resolve('keyv').replace(/dist\/.*$/, 'package.json'))).version}`);
  const summary = [];
  for (const n of sizes) {
    for (const s of [0.99, 0.7]) summary.push(await readthrough(n, s));
  }
  console.log('\nSummary: requests/s of acorn over @keyv/sqlite (acorn holds 10% of the keys\' bytes, @keyv/sqlite all)');
  console.log('| keys | s | ratio |');
  console.log('|--:|--:|--:|');
  for (const [n, s, r] of summary) console.log(`| ${fmt(n)} | ${s} | ${r.toFixed(2)} |`);
  await wrapperCost();
}

main().catch((e) => { console.error(e); process.exit(1); });
