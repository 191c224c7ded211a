// bench/footprint.js: one Node process of bench/footprint.py's "node" side
// (bench/footprint.sh sets up the modules).  Gets and sets on a miss
// through sqlite-acorn's Cache on better-sqlite3, WAL, synchronous NORMAL,
// busy timeout 5 s, for SECONDS; prints {requests, hits, failures, error}.
//
// Usage: node footprint.js PATH SECONDS SEED CAPACITY
'use strict';

const Database = require('better-sqlite3');
const { Cache } = require('sqlite-acorn');

const [path, seconds, seed] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const NKEYS = 10000;
const S = 0.99;

// xorshift64*: a seeded generator, numbers in [0, 1)
let state = BigInt(seed) * 0x9E3779B97F4A7C15n & 0xFFFFFFFFFFFFFFFFn || 1n;
function random() {
  state ^= state >> 12n; state ^= (state << 25n) & 0xFFFFFFFFFFFFFFFFn; state ^= state >> 27n;
  return Number(((state * 0x2545F4914F6CDD1Dn) & 0xFFFFFFFFFFFFFFFFn) >> 11n) / 2 ** 53;
}

const cum = new Float64Array(NKEYS);
let total = 0;
for (let i = 0; i < NKEYS; i++) { total += 1 / (i + 1) ** S; cum[i] = total; }
function draw() {
  const x = random() * total;
  let lo = 0, hi = NKEYS - 1;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (cum[mid] < x) lo = mid + 1; else hi = mid; }
  return 'key:' + String(lo).padStart(5, '0');
}

const db = new Database(path, { timeout: 5000 });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
const cache = new Cache(db, 'c');
const value = Buffer.alloc(1024);
for (let i = 0; i < value.length; i++) value[i] = (random() * 256) | 0;

let requests = 0, hits = 0, failures = 0, error = '';
const end = Date.now() + seconds * 1000;
while (Date.now() < end) {
  const k = draw();
  try {
    if (cache.get(k) === undefined) cache.set(k, value); else hits++;
  } catch (e) {
    failures++;
    if (!error) error = String(e && e.message);
  }
  requests++;
}
db.close();
console.log(JSON.stringify({ requests, hits, failures, error }));
