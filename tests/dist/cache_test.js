// The installed sqlite-acorn package's Cache and Keyv store, used as a user
// would (docs/node.md specifies them).  Usage, from the project it is
// installed in:
//   node cache_test.js better-sqlite3
//   node cache_test.js node:sqlite        (Node 22.13+)
//   node cache_test.js HOST TEXT          only the checks whose name holds TEXT
// Prints "PASS npm-cache-<host> N checks: ..." or "FAIL npm-cache-<host>:
// <check>: reason"; exits 0 or 1.  No check depends on time passing: an
// expired entry is made with expires = 1 (1970), a ttl is checked as
// expires - created, which acorn computes from one clock reading.
'use strict';

const assert = require('node:assert/strict');
const { Cache } = require('sqlite-acorn');
const KeyvAcorn = require('sqlite-acorn/keyv');

const host = process.argv[2];

function open(path = ':memory:') {
  if (host === 'node:sqlite') {
    const { DatabaseSync } = require('node:sqlite');
    return new DatabaseSync(path, { allowExtension: true });
  }
  const Database = require('better-sqlite3');
  return new Database(path);
}

// The start of a child process's script: sqlite-acorn's Cache, and db, a
// connection of this host to file.
function childOpen(file) {
  return `const { Cache } = require('sqlite-acorn');
    const db = ${JSON.stringify(host)} === 'node:sqlite'
      ? new (require('node:sqlite').DatabaseSync)(${JSON.stringify(file)}, { allowExtension: true })
      : new (require('better-sqlite3'))(${JSON.stringify(file)});`;
}

// runChild(code, ...args): run code in a node process of its own; resolves
// with its exit code and what it printed.
function runChild(code, ...args) {
  const { spawn } = require('node:child_process');
  return new Promise((resolve) => {
    const pr = spawn(process.execPath, ['-e', code, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    pr.stdout.on('data', (d) => { out += d; });
    pr.stderr.on('data', (d) => { err += d; });
    pr.on('close', (status) => resolve({ status, out, err }));
  });
}

// The first column of the first row (both hosts).
const one = (db, sql, ...args) => {
  const r = db.prepare(sql).get(...args);
  return r === undefined ? undefined : Object.values(r)[0];
};
const rows = (db, sql, ...args) => db.prepare(sql).all(...args).map((r) => Object.values(r).join('|'));
const throwsExactly = (fn, text) => assert.throws(fn, (e) => {
  assert.equal(String(e.message), text);
  return true;
});

const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const VALUES = 'a string, bytes (a Buffer or Uint8Array), a number, a bigint, true, false, null, ' +
  'or a plain object or array of strings, finite numbers, true, false and null';

check('the constructor loads acorn into a connection that lacks it, once', () => {
  const db = open();
  let loads = 0;
  const real = db.loadExtension.bind(db);
  db.loadExtension = (...a) => { loads += 1; return real(...a); };
  const c = new Cache(db, 'thumbs');
  assert.equal(loads, 1);
  assert.match(one(db, 'SELECT acorn_version()'), /^v/);
  new Cache(db, 'thumbs');
  new Cache(db, 'other');
  assert.equal(loads, 1, 'acorn loaded again');
  assert.equal(c.name, 'thumbs');
  assert.equal(c.db, db);
  db.close();
});

check('the constructor creates the table with every option, and takes an existing one', () => {
  const db = open();
  new Cache(db, 'c', { capacity: '1MiB', policy: 'fifo', defaultTtl: '15m', maxEntries: 2, feed: 10,
                       recencyBuffer: 500, autoflush: false });
  assert.match(one(db, "SELECT sql FROM sqlite_schema WHERE name = 'c'"),
               /USING cache\(capacity = '1MiB', policy = fifo, default_ttl = '15m', max_entries = 2, feed = 10, recency_buffer = 500, autoflush = off\)$/);
  const c = new Cache(db, 'c');
  c.set('a', 'x').set('b', 'y').set('c', 'z');
  assert.deepEqual(rows(db, 'SELECT key, expires - created FROM c'), ['b|900000', 'c|900000']);
  assert.deepEqual(rows(db, "SELECT key, reason FROM cache_evictions('c')"), ['a|entries']);
  assert.deepEqual(c.stats(), { capacity: 1048576, entries: 2, bytes: 4, hits: null, misses: null,
                                evictions: 1, expired: 0 });
  // a number of bytes, and defaultTtl in ms
  const d = new Cache(db, 'd', { capacity: 4096, defaultTtl: 90000 });
  d.set('k', 'v');
  assert.equal(one(db, "SELECT expires - created FROM d WHERE key = 'k'"), 90000);
  assert.equal(d.stats().capacity, 4096);
  db.close();
});

check('on an existing table the stored settings given are set, those fixed at creation must agree', () => {
  const db = open();
  const c = new Cache(db, 't', { capacity: '1MiB' });
  for (const k of ['a', 'b', 'c']) c.set(k, 'v');
  new Cache(db, 't', { capacity: 5000, maxEntries: 1, defaultTtl: '2h', feed: 3 });
  assert.deepEqual(rows(db, 'SELECT key FROM t'), ['c']);
  assert.equal(c.stats().capacity, 5000);
  c.set('n', 'v');
  assert.equal(one(db, "SELECT expires - created FROM t WHERE key = 'n'"), 7200000);
  assert.deepEqual(rows(db, "SELECT key, reason FROM cache_evictions('t')"), ['c|entries']);
  new Cache(db, 't', { policy: 'lru', recencyBuffer: 100000, autoflush: true });
  throwsExactly(() => new Cache(db, 't', { policy: 'fifo' }),
                'Cache: t was created with policy = lru, and policy is fixed at creation; got policy = fifo (use another table, or drop it)');
  throwsExactly(() => new Cache(db, 't', { recencyBuffer: 10 }),
                'Cache: t was created with recency_buffer = 100000, and recencyBuffer is fixed at creation; got recency_buffer = 10 (use another table, or drop it)');
  throwsExactly(() => new Cache(db, 't', { autoflush: false }),
                'Cache: t was created with autoflush = on, and autoflush is fixed at creation; got autoflush = off (use another table, or drop it)');
  // a failing setting changes none of them
  assert.throws(() => new Cache(db, 't', { capacity: 7000, maxEntries: -1 }));
  assert.throws(() => new Cache(db, 't', { capacity: 7000, defaultTtl: '99999999999999d' }),
                /cache: bad default_ttl/);
  assert.equal(c.stats().capacity, 5000);
  db.exec('CREATE TABLE plain(x)');
  throwsExactly(() => new Cache(db, 'plain'), 'Cache: plain exists and is not a cache table');
  db.close();
});

check('get returns a string or a Buffer as stored, undefined for a miss, and counts hits and misses', () => {
  const db = open();
  const c = new Cache(db, 't');
  c.set('s', 'héllo').set('b', Buffer.from([0, 1, 2])).set('u', new Uint8Array([7, 8]));
  c.set(42, 'n').set(Buffer.from('bk'), 'blob key').set(9007199254740993n, 'big');
  assert.equal(c.get('s'), 'héllo');
  assert.ok(Buffer.isBuffer(c.get('b')));
  assert.deepEqual([...c.get('b')], [0, 1, 2]);
  assert.deepEqual([...c.get('u')], [7, 8]);
  assert.equal(c.get(42), 'n');
  assert.equal(c.get(new Uint8Array(Buffer.from('bk'))), 'blob key');
  assert.equal(c.get(9007199254740993n), 'big');
  assert.equal(c.get('42'), undefined, "'42' is another key than 42");
  assert.equal(c.get('nope'), undefined);
  const s = c.stats();
  assert.equal(s.hits, 7);
  assert.equal(s.misses, 2);
  assert.deepEqual(rows(db, 'SELECT typeof(key), typeof(value) FROM t'),
                   ['text|text', 'text|blob', 'text|blob', 'integer|text', 'blob|text', 'integer|text']);
  db.close();
});

check('get is a use: the entry read survives the eviction that takes the one not read', () => {
  const db = open();
  const c = new Cache(db, 't', { capacity: 100 });
  c.set('a', 'x'.repeat(29)).set('b', 'x'.repeat(29)).set('c', 'x'.repeat(29));
  assert.equal(c.get('a').length, 29);
  c.set('d', 'x'.repeat(29));
  assert.deepEqual(rows(db, 'SELECT key FROM t'), ['a', 'c', 'd']);
  assert.equal(c.stats().evictions, 1);
  db.close();
});

// ---- values across languages (docs/cache.md#values-across-languages)

// [name, value, the SQL type it is stored as, its bytes (hex of CAST(value AS BLOB))]
const CONVENTION = [
  ['string', 'héllo', 'text', '68C3A96C6C6F'],
  ['empty string', '', 'text', ''],
  ['bytes', Buffer.from([0xff, 0x6a, 0]), 'blob', 'FF6A00'],
  ['Uint8Array', new Uint8Array([1, 2]), 'blob', '0102'],
  ['safe integer', 42, 'integer', '3432'],
  ['negative safe integer', -(2 ** 53 - 1), 'integer', Buffer.from('-9007199254740991').toString('hex').toUpperCase()],
  ['-0', -0, 'real', null],
  ['fraction', 2.5, 'real', null],
  ['2**60 as a number', 2 ** 60, 'real', null],
  ['Infinity', Infinity, 'real', null],
  ['-Infinity', -Infinity, 'real', null],
  ['NaN', NaN, 'text', 'FF666E616E'],
  ['bigint in int64', 9007199254740993n, 'integer', Buffer.from('9007199254740993').toString('hex').toUpperCase()],
  ['largest int64', 2n ** 63n - 1n, 'integer', null],
  ['smallest int64', -(2n ** 63n), 'integer', null],
  ['bigint past int64', 2n ** 64n, 'text', `FF69${Buffer.from(String(2n ** 64n)).toString('hex').toUpperCase()}`],
  ['bigint below int64', -(2n ** 63n) - 1n, 'text', `FF69${Buffer.from(String(-(2n ** 63n) - 1n)).toString('hex').toUpperCase()}`],
  ['small bigint', 7n, 'integer', '37'],
  ['true', true, 'text', 'FF6A74727565'],
  ['false', false, 'text', 'FF6A66616C7365'],
  ['null', null, 'text', 'FF6A6E756C6C'],
  ['object', { a: [1, 'x', null, true], b: { c: -2.5 } }, 'text', null],
  ['array', ['a', 1], 'text', `FF6A${Buffer.from('["a",1]').toString('hex').toUpperCase()}`],
  ['null-prototype object', Object.assign(Object.create(null), { k: 'v' }), 'text', null],
  ['string starting with a colon', ':x', 'text', '3A78'],
];

check('every value of the convention is stored as its SQL type and read back as it was', () => {
  const db = open();
  const c = new Cache(db, 't');
  for (const [name, v] of CONVENTION) c.set(name, v);
  for (const [name, v, type, hex] of CONVENTION) {
    assert.equal(one(db, 'SELECT typeof(value) FROM t WHERE key = ?', name), type, `${name}: its type`);
    if (hex !== null) {
      assert.equal(one(db, 'SELECT hex(CAST(value AS BLOB)) FROM t WHERE key = ?', name), hex, `${name}: its bytes`);
    }
    const got = c.get(name);
    if (v instanceof Uint8Array) {
      assert.ok(Buffer.isBuffer(got), `${name}: a Buffer`);
      assert.deepEqual([...got], [...v], name);
    } else if (typeof v === 'object' && v !== null) {
      assert.deepEqual(JSON.parse(JSON.stringify(got)), JSON.parse(JSON.stringify(v)), name);
      assert.equal(Object.getPrototypeOf(got), Array.isArray(v) ? Array.prototype : Object.prototype, `${name}: a plain ${Array.isArray(v) ? 'array' : 'object'}`);
    } else if (typeof v === 'bigint' && v >= -(2n ** 53n - 1n) && v <= 2n ** 53n - 1n) {
      assert.equal(got, Number(v), `${name}: a safe integer reads as a number`);
    } else {
      assert.ok(Object.is(got, v), `${name}: got ${typeof got} ${String(got)}`);
    }
  }
  // SQL counts with a number a Node set
  db.prepare("UPDATE t SET value = value + 1 WHERE key = 'safe integer'").run();
  assert.equal(c.get('safe integer'), 43);
  db.close();
});

check('a get runs cache_get once: one hit, or one miss, in cache_stats', () => {
  const db = open();
  const c = new Cache(db, 't');
  c.set('s', 'v').set('j', { a: 1 }).set('n', 1);
  for (const k of ['s', 'j', 'n', 's']) c.get(k);
  assert.deepEqual([c.stats().hits, c.stats().misses], [4, 0]);
  c.get('nope');
  assert.deepEqual([c.stats().hits, c.stats().misses], [4, 1]);
  assert.deepEqual(rows(db, 'SELECT key, hits FROM t'), ['s|2', 'j|1', 'n|1']);
  db.close();
});

check('values SQL and the other faces wrote by the convention read as theirs, older marks too', () => {
  const db = open();
  const c = new Cache(db, 't');
  const put = (k, sql) => db.prepare(`INSERT INTO t(key, value) VALUES (?, ${sql})`).run(k);
  const mark = (letter, text) => `CAST(x'ff${Buffer.from(letter + text).toString('hex')}' AS TEXT)`;
  put('int', '9223372036854775807');
  put('real', '0.1');
  put('whole real', '2.0');
  put('json', mark('j', '{"a":[1,true,null],"s":"\\u00e9"}'));
  // acorn 0.2's Python wrote ints and floats marked, floats with repr()
  put('py int', mark('i', '-123456789012345678901234567890'));
  put('py small int', mark('i', '7'));
  put('py float', mark('f', '1e+100'));
  put('py float 2', mark('f', '0.30000000000000004'));
  put('py inf', mark('f', 'inf'));
  put('py -inf', mark('f', '-inf'));
  put('py nan', mark('f', 'nan'));
  put('py whole float', mark('f', '3.0'));
  assert.equal(c.get('int'), 9223372036854775807n);
  assert.equal(c.get('real'), 0.1);
  assert.equal(c.get('whole real'), 2);
  assert.deepEqual(c.get('json'), { a: [1, true, null], s: 'é' });
  assert.equal(c.get('py int'), -123456789012345678901234567890n);
  assert.equal(c.get('py small int'), 7);
  assert.equal(c.get('py float'), 1e100);
  assert.equal(c.get('py float 2'), 0.30000000000000004);
  assert.equal(c.get('py inf'), Infinity);
  assert.equal(c.get('py -inf'), -Infinity);
  assert.ok(Number.isNaN(c.get('py nan')));
  assert.equal(c.get('py whole float'), 3);
  db.close();
});

check('a value only another language reads is an error naming the key, the format and the language, never a miss', () => {
  const db = open();
  const c = new Cache(db, 't');
  const put = (k, hex) => db.prepare(`INSERT INTO t(key, value) VALUES (?, CAST(x'${hex}' AS TEXT))`).run(k);
  put('pickled', 'ff7080049505');
  put('marshal', 'ff6d0408');
  put('keyv', `ff6b${Buffer.from('{"v":1}').toString('hex')}`);
  put('newer', 'ff7a00');
  put('bare', 'ff');
  put('bad int', `ff69${Buffer.from('12x').toString('hex')}`);
  put('bad float', `ff66${Buffer.from('infinity').toString('hex')}`);
  put('bad json', `ff6a${Buffer.from('{').toString('hex')}`);
  put('bad utf8', 'ff6ac3');
  const cases = [
    ['pickled', 'ACORN_FOREIGN_VALUE', 'pickle', 'Python',
     'Cache.get: the value of "pickled" is a Python pickle, written by Python\'s sqlite_acorn (a Cache with pickle=True, memoize or the Django backend); Node cannot read it; store it from Python as a string, bytes, a number, or lists and maps that JSON holds exactly'],
    ['marshal', 'ACORN_FOREIGN_VALUE', 'Marshal', 'Ruby',
     'Cache.get: the value of "marshal" is a Ruby Marshal dump, written by Ruby\'s ActiveSupport store; Node cannot read it; store it from Ruby as a string, bytes, a number, or lists and maps that JSON holds exactly'],
    ['keyv', 'ACORN_FOREIGN_VALUE', 'Keyv', 'JavaScript',
     'Cache.get: the value of "keyv" is a string serialized by Keyv, written by sqlite-acorn/keyv (a value the convention has no form for, or a serializer of its own); read it through Keyv, with the same serializer'],
    ['newer', 'ACORN_FOREIGN_VALUE', 'z', undefined,
     'Cache.get: the value of "newer" starts with the byte 0xFF and then "z", a format this version of sqlite-acorn does not know: a newer acorn wrote it'],
    ['bare', 'ACORN_FOREIGN_VALUE', '', undefined,
     'Cache.get: the value of "bare" starts with the byte 0xFF and then "", a format this version of sqlite-acorn does not know: a newer acorn wrote it'],
    ['bad int', 'ACORN_CORRUPT_VALUE', undefined, undefined, 'Cache.get: the value of "bad int" is marked as an integer but does not hold one'],
    ['bad float', 'ACORN_CORRUPT_VALUE', undefined, undefined, 'Cache.get: the value of "bad float" is marked as a float but does not hold one'],
    ['bad json', 'ACORN_CORRUPT_VALUE', undefined, undefined, 'Cache.get: the value of "bad json" is marked as JSON but does not hold one'],
    ['bad utf8', 'ACORN_CORRUPT_VALUE', undefined, undefined, 'Cache.get: the value of "bad utf8" is marked as \'j\' but does not hold one'],
  ];
  for (const [key, code, format, language, text] of cases) {
    assert.throws(() => c.get(key), (e) => {
      assert.equal(e.message, text);
      assert.deepEqual([e.code, e.key, e.format, e.language], [code, key, format, language], key);
      return true;
    });
  }
  assert.equal(c.stats().hits, cases.length, 'each was found: a hit, not a miss');
  db.close();
});

check('a value the convention has no form for is refused, naming the method and the type, and stores nothing', () => {
  const db = open();
  const c = new Cache(db, 't');
  const tail = ' (serialize it first, e.g. with v8.serialize() into a Buffer, which is stored as its bytes)';
  const refused = (v, got) => throwsExactly(() => c.set('k', v), `Cache.set: value must be ${VALUES}; got ${got}${tail}`);
  class Point { constructor() { this.x = 1; } }
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  refused(new Date(0), 'Date');
  refused(new Map(), 'Map');
  refused(new Set([1]), 'Set');
  refused(new Point(), 'Point');
  refused(() => 1, 'function');
  refused(Symbol('s'), 'symbol');
  refused(new Uint16Array(2), 'Uint16Array');
  refused(new ArrayBuffer(2), 'ArrayBuffer');
  refused({ when: new Date(0) }, 'Object holding Date at value.when');
  refused({ n: 1n }, 'Object holding bigint 1 at value.n');
  refused([1, undefined], 'Array holding undefined at value[1]');
  refused({ 'a b': { c: [NaN] } }, 'Object holding NaN at value["a b"].c[0]');
  refused([Infinity], 'Array holding Infinity at value[0]');
  refused({ b: Buffer.from('x') }, 'Object holding Buffer at value.b');
  refused([1, , 3], 'an array with holes or other properties'); // eslint-disable-line no-sparse-arrays
  refused(cyclic, 'Object holding a cycle at value.self');
  refused({ [Symbol('s')]: 1 }, 'a Symbol key');
  refused(['a\uD800'], 'Array holding a string with a lone surrogate at value[0]');
  throwsExactly(() => c.set('k', 'a\uDC00b'), 'Cache.set: the string is not well-formed UTF-16 (a lone surrogate at index 1): stored as UTF-8 it would read back changed, with U+FFFD in its place; store it as bytes (a Buffer) if the code units matter');
  throwsExactly(() => c.set('k', undefined), 'Cache.set: value is undefined, which the cache cannot store (a get gives undefined for a miss); store null, or delete the key');
  assert.equal(c.stats().entries, 0);
  // a well-formed pair is one character
  c.set('k', 'a\uD83D\uDE00');
  assert.equal(c.get('k'), 'a😀');
  db.close();
});

check('two processes on one file: what one sets by the convention the other reads (WAL and rollback journal)', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  for (const mode of ['wal', 'delete']) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acorn-values-'));
    const file = path.join(dir, 'v.db');
    const db = open(file);
    const c = new Cache(db, 'shared', { journalMode: mode });
    const child = `
      ${childOpen(file)}
      const c = new Cache(db, 'shared', { journalMode: ${JSON.stringify(mode)} });
      c.set('s', 'text').set('b', Buffer.from([0xff, 0])).set('i', 2n ** 63n - 1n).set('n', 42)
       .set('r', 0.5).set('inf', -Infinity).set('nan', NaN).set('huge', 2n ** 80n).set('j', { a: [1, null] })
       .set('t', true);
      console.log(c.get('from parent'));
      db.close();`;
    c.set('from parent', 'hello');
    const r = await runChild(child);
    const out = r.status === 0 ? r.out : `exit ${r.status}: ${r.err.slice(0, 300)}`;
    assert.equal(out, 'hello\n', `${mode}: the child`);
    assert.equal(one(db, 'PRAGMA journal_mode'), mode);
    assert.equal(c.get('s'), 'text');
    assert.deepEqual(c.get('b'), Buffer.from([0xff, 0]));
    assert.equal(c.get('i'), 2n ** 63n - 1n);
    assert.equal(c.get('n'), 42);
    assert.equal(c.get('r'), 0.5);
    assert.equal(c.get('inf'), -Infinity);
    assert.ok(Number.isNaN(c.get('nan')));
    assert.equal(c.get('huge'), 2n ** 80n);
    assert.deepEqual(c.get('j'), { a: [1, null] });
    assert.equal(c.get('t'), true);
    db.close();
    fs.rmSync(dir, { recursive: true });
  }
});

check('set replaces, takes ttl in ms and a tag, and returns the cache', () => {
  const db = open();
  const c = new Cache(db, 't', { defaultTtl: '1h' });
  assert.equal(c.set('k', 'first'), c);
  c.set('k', 'second');
  assert.equal(c.get('k'), 'second');
  c.set('t1', 'v', { ttl: 1001 }).set('t2', 'v', { ttl: 60001 }).set('t3', 'v', { ttl: 86399999 });
  c.set('t4', 'v', { ttl: 2.5 * 3600 * 1000, tag: 'x' }).set('t5', 'v', { tag: 'y', ttl: undefined });
  c.set('t6', 'v', {});
  assert.deepEqual(rows(db, "SELECT key, expires - created, quote(tag) FROM t WHERE key LIKE 't%'"),
                   ['t1|1001|NULL', 't2|60001|NULL', 't3|86399999|NULL', "t4|9000000|'x'",
                    "t5|3600000|'y'", 't6|3600000|NULL']);
  db.close();
});

check('an expired entry is a miss for get, absent for has and delete, and gone after clear', () => {
  const db = open();
  const c = new Cache(db, 't');
  c.set('live', 'v');
  db.prepare("INSERT INTO t(key, value, expires) VALUES ('old', 'v', 1)").run();
  assert.equal(c.get('old'), undefined);
  assert.equal(c.has('old'), false);
  assert.equal(c.delete('old'), false);
  assert.equal(c.stats().entries, 2, 'the expired entry counts until a write reclaims it');
  assert.equal(c.clear(), 1);
  assert.deepEqual(c.stats(), { capacity: 1073741824, entries: 0, bytes: 0, hits: 0, misses: 1,
                                evictions: 0, expired: 1 });
  // clear() on a table holding only expired entries still reclaims them
  db.prepare("INSERT INTO t(key, value, expires) VALUES ('old2', 'v', 1)").run();
  assert.equal(c.clear(), 0);
  assert.equal(c.stats().entries, 0);
  db.close();
});

check('has is not a use and counts no hit or miss; delete says whether there was an entry', () => {
  const db = open();
  const c = new Cache(db, 't');
  c.set('a', 'v');
  assert.equal(c.has('a'), true);
  assert.equal(c.has('b'), false);
  assert.equal(one(db, "SELECT hits FROM t WHERE key = 'a'"), 0);
  assert.equal(c.stats().misses, 0);
  assert.equal(c.delete('a'), true);
  assert.equal(c.delete('a'), false);
  assert.equal(c.has('a'), false);
  db.close();
});

check('evict(tag) removes that tag\'s entries and says how many', () => {
  const db = open();
  const c = new Cache(db, 't');
  c.set('u1/a', 'v', { tag: 'user:1' }).set('u1/b', 'v', { tag: 'user:1' });
  c.set('u2/a', 'v', { tag: 'user:2' }).set('site', 'v');
  assert.equal(c.evict('user:1'), 2);
  assert.equal(c.evict('user:1'), 0);
  assert.equal(c.evict('nobody'), 0);
  assert.deepEqual(rows(db, 'SELECT key FROM t'), ['u2/a', 'site']);
  db.close();
});

check('a table in another schema, as schema.name', () => {
  const db = open();
  db.exec("ATTACH ':memory:' AS aux");
  const c = new Cache(db, 'aux.t', { capacity: '1kB' });
  c.set('k', 'v', { tag: 'g' });
  assert.equal(c.get('k'), 'v');
  assert.equal(c.has('k'), true);
  assert.equal(c.stats().capacity, 1000);
  assert.equal(one(db, "SELECT count(*) FROM sqlite_schema WHERE name = 't'"), 0);
  assert.equal(c.evict('g'), 1);
  assert.equal(c.clear(), 0);
  new Cache(db, 'aux.t', { capacity: 2000 });
  assert.equal(c.stats().capacity, 2000);
  db.close();
});

check('two connections on one file share the table', () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acorn-cache-'));
  const file = path.join(dir, 'c.db');
  try {
    const a = open(file);
    const b = open(file);
    const ca = new Cache(a, 't', { capacity: '1MiB' });
    const cb = new Cache(b, 't');
    ca.set('k', Buffer.from('from a'));
    assert.equal(cb.get('k').toString(), 'from a');
    assert.equal(cb.stats().capacity, 1048576);
    a.close();
    b.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// ---- the connection: WAL and a busy timeout

function tmpFile(name) {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acorn-cache-'));
  return [path.join(dir, name), () => fs.rmSync(dir, { recursive: true, force: true })];
}

check('a Cache on a file sets WAL and a busy timeout of at least 5 s; the options change or keep them', () => {
  const [file, done] = tmpFile('c.db');
  try {
    let db = open(file);
    db.exec('PRAGMA busy_timeout = 0');
    new Cache(db, 't');
    assert.equal(one(db, 'PRAGMA journal_mode'), 'wal');
    assert.equal(Number(one(db, 'PRAGMA busy_timeout')), 5000);
    db.exec('PRAGMA busy_timeout = 20000');
    new Cache(db, 't', { busyTimeout: 10000 });
    assert.equal(Number(one(db, 'PRAGMA busy_timeout')), 20000, 'a longer timeout stays');
    new Cache(db, 't', { busyTimeout: 30000 });
    assert.equal(Number(one(db, 'PRAGMA busy_timeout')), 30000);
    db.exec('PRAGMA busy_timeout = 0');
    new Cache(db, 't', { busyTimeout: null });
    assert.equal(Number(one(db, 'PRAGMA busy_timeout')), 0, 'busyTimeout: null leaves it');
    new Cache(db, 't', { journalMode: 'delete' });
    assert.equal(one(db, 'PRAGMA journal_mode'), 'delete');
    new Cache(db, 't', { journalMode: null });
    assert.equal(one(db, 'PRAGMA journal_mode'), 'delete', 'journalMode: null leaves it');
    db.close();
    // a read-only connection opens a table of a rollback-journal file, and reads
    db = open(file);
    new Cache(db, 't', { journalMode: null }).set('k', 'v');
    db.close();
    db = host === 'node:sqlite'
      ? new (require('node:sqlite').DatabaseSync)(file, { allowExtension: true, readOnly: true })
      : new (require('better-sqlite3'))(file, { readonly: true });
    const ro = new Cache(db, 't');
    assert.equal(ro.get('k'), 'v');
    assert.equal(one(db, 'PRAGMA journal_mode'), 'delete');
    db.close();
  } finally {
    done();
  }
});

check('WAL is for files: :memory:, a temporary database and an attached memory one keep their modes', () => {
  const db = open();
  new Cache(db, 't');
  assert.equal(one(db, 'PRAGMA journal_mode'), 'memory');
  db.exec("ATTACH '' AS tmp");
  new Cache(db, 'tmp.t');
  assert.equal(one(db, 'PRAGMA tmp.journal_mode'), 'delete');
  db.close();
  const [file, done] = tmpFile('a.db');
  try {
    const db2 = open();
    db2.exec(`ATTACH '${file}' AS f`);
    new Cache(db2, 'f.t');
    assert.equal(one(db2, 'PRAGMA f.journal_mode'), 'wal', 'the attached file of the table');
    assert.equal(one(db2, 'PRAGMA main.journal_mode'), 'memory');
    db2.close();
  } finally {
    done();
  }
});

check('the connection options are checked, and a UTF-16 database is refused', () => {
  const db = open();
  throwsExactly(() => new Cache(db, 't', { journalMode: 'WAL2' }),
                "Cache: option journalMode must be 'wal', 'delete', 'truncate', 'persist', 'memory' or null (the file's, unchanged); got string");
  throwsExactly(() => new Cache(db, 't', { busyTimeout: -1 }),
                'Cache: option busyTimeout must be a whole number of milliseconds from 0 to 2147483647; got number -1');
  db.close();
  const db16 = open();
  db16.exec("PRAGMA encoding = 'UTF-16le'");
  throwsExactly(() => new Cache(db16, 't'),
                "Cache: the database is UTF-16le; a cache table's values need UTF-8 (what a new file gets), so that every language reads the same text");
  db16.close();
});

check('bad arguments are errors naming the method, the parameter and what is allowed', () => {
  const db = open();
  const c = new Cache(db, 't');
  const cases = [
    [() => new Cache(null, 't'), 'Cache: db must be a better-sqlite3 Database or a node:sqlite DatabaseSync; got null'],
    [() => new Cache({}, 't'), 'Cache: db must be a better-sqlite3 Database or a node:sqlite DatabaseSync; got Object'],
    [() => new Cache(db, ''), "Cache: name must be the name of a cache table, a non-empty string ('thumbs', or 'schema.thumbs'); got string"],
    [() => new Cache(db, 't', []), 'Cache: options must be an object; got Array'],
    [() => new Cache(db, 't', { capcity: 1 }), "Cache: unknown option 'capcity'; accepted options are capacity, policy, defaultTtl, maxEntries, feed, recencyBuffer, autoflush, journalMode, busyTimeout"],
    [() => new Cache(db, 'u', { capacity: 0 }), 'Cache: option capacity must be a whole number of bytes from 1 to 4611686018427387904; got number 0'],
    [() => new Cache(db, 'u', { capacity: true }), "Cache: option capacity must be a number of bytes or a string with a unit ('64MiB'); got boolean"],
    [() => new Cache(db, 'u', { capacity: '1XB' }), "cache: bad capacity '1XB'; expected a positive number of bytes, optionally with a unit B, kB, MB, GB, KiB, MiB or GiB (e.g. 1048576, '64MiB' or '1.5GiB'; a fraction needs a unit above B), at most 4611686018427387904 bytes"],
    [() => new Cache(db, 'u', { policy: 'random' }), "Cache: option policy must be 'lru' or 'fifo'; got string"],
    [() => new Cache(db, 'u', { defaultTtl: 1500 }), "Cache: option defaultTtl must be a whole number of seconds in milliseconds (a multiple of 1000, 0 for none) up to 1000000000000000, or a string with a unit s, m, h or d ('15m'); got number 1500"],
    [() => new Cache(db, 'u', { defaultTtl: '1w' }), "Cache: option defaultTtl must be milliseconds (a multiple of 1000) or a string with a unit s, m, h or d ('90s', '15m', '2h', '7d'); got string"],
    [() => new Cache(db, 'u', { maxEntries: -1 }), 'Cache: option maxEntries must be a whole number of entries from 0 to 4611686018427387904; got number -1'],
    [() => new Cache(db, 'u', { feed: 2000000 }), 'Cache: option feed must be a whole number of removals from 0 to 1000000; got number 2000000'],
    [() => new Cache(db, 'u', { recencyBuffer: 0 }), 'Cache: option recencyBuffer must be a whole number of keys from 1 to 1000000; got number 0'],
    [() => new Cache(db, 'u', { autoflush: 'off' }), 'Cache: option autoflush must be true or false; got string'],
    [() => c.get(1.5), 'Cache.get: key must be a string, a Buffer or Uint8Array, or an integer (a safe-integer number or a 64-bit bigint); got number 1.5'],
    [() => c.get(null), 'Cache.get: key must be a string, a Buffer or Uint8Array, or an integer (a safe-integer number or a 64-bit bigint); got null'],
    [() => c.has({}), 'Cache.has: key must be a string, a Buffer or Uint8Array, or an integer (a safe-integer number or a 64-bit bigint); got Object'],
    [() => c.delete(2n ** 63n), 'Cache.delete: key must be a string, a Buffer or Uint8Array, or an integer (a safe-integer number or a 64-bit bigint); got bigint 9223372036854775808'],
    [() => c.set(undefined, 'v'), 'Cache.set: key must be a string, a Buffer or Uint8Array, or an integer (a safe-integer number or a 64-bit bigint); got undefined'],
    [() => c.set('k', new Date(0)), `Cache.set: value must be ${VALUES}; got Date (serialize it first, e.g. with v8.serialize() into a Buffer, which is stored as its bytes)`],
    [() => c.set('k', undefined), 'Cache.set: value is undefined, which the cache cannot store (a get gives undefined for a miss); store null, or delete the key'],
    [() => c.set('k', 'v', 60000), 'Cache.set: options must be an object ({ ttl, tag }); got number 60000'],
    [() => c.set('k', 'v', { expires: 1 }), "Cache.set: unknown option 'expires'; accepted options are ttl and tag"],
    [() => c.set('k', 'v', { ttl: 0 }), "Cache.set: ttl must be a number of milliseconds greater than 0 and at most 1000000000000000, or undefined for the table's defaultTtl; got number 0"],
    [() => c.set('k', 'v', { ttl: '1h' }), "Cache.set: ttl must be a number of milliseconds greater than 0 and at most 1000000000000000, or undefined for the table's defaultTtl; got string"],
    [() => c.set('k', 'v', { ttl: Infinity }), "Cache.set: ttl must be a number of milliseconds greater than 0 and at most 1000000000000000, or undefined for the table's defaultTtl; got number Infinity"],
    [() => c.set('k', 'v', { tag: 7 }), 'Cache.set: tag must be a string; got number 7'],
    [() => c.evict(undefined), 'Cache.evict: tag must be a string; got undefined'],
  ];
  for (const [fn, text] of cases) throwsExactly(fn, text);
  assert.equal(c.stats().entries, 0, 'a refused set stored nothing');
  assert.equal(one(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'u'"), 0,
               'a refused option created no table');
  db.close();
});

// ---- getOrSet and memoize

// The lock entries a table holds: [key without the prefix, value] pairs.
const locks = (db, t) => db.prepare(`SELECT substr(key, 6) AS k, value FROM ${t} WHERE substr(key, 1, 5) = x'006c6f636b'`)
  .all().map((r) => [Buffer.from(r.k).toString(), Buffer.from(r.value).toString('latin1')]);

check('getOrSet returns what is stored, or computes it (sync or async), stores it with ttl and tag, and leaves no lock', async () => {
  const db = open();
  const c = new Cache(db, 't');
  let calls = 0;
  assert.deepEqual(await c.getOrSet('a', () => { calls += 1; return { n: 1 }; }, { ttl: 60000, tag: 'g' }), { n: 1 });
  assert.deepEqual(c.get('a'), { n: 1 });
  assert.deepEqual(await c.getOrSet('a', () => { calls += 1; return 'other'; }), { n: 1 });
  assert.equal(calls, 1);
  assert.equal(await c.getOrSet('b', async () => { calls += 1; await new Promise((r) => setTimeout(r, 5)); return 7n; }), 7);
  assert.equal(calls, 2);
  assert.deepEqual(rows(db, 'SELECT key, expires - created, tag FROM t WHERE typeof(key) = \'text\''),
                   ['a|60000|g', 'b||']);
  assert.deepEqual(locks(db, 't'), []);
  // a stored null is a value, not a miss
  c.set('z', null);
  assert.equal(await c.getOrSet('z', () => { throw new Error('not called'); }), null);
  db.close();
});

check('getOrSet: fn\'s error reaches the caller and frees the lock; undefined and a value too large are not stored', async () => {
  const db = open();
  const c = new Cache(db, 't', { capacity: 100 });
  await assert.rejects(c.getOrSet('k', () => { throw new Error('boom'); }), /^Error: boom$/);
  await assert.rejects(c.getOrSet('k', async () => { throw new Error('async boom'); }), /^Error: async boom$/);
  assert.deepEqual(locks(db, 't'), []);
  await assert.rejects(c.getOrSet('k', () => undefined), (e) => {
    assert.equal(e.message, 'Cache.getOrSet: fn gave undefined, which the cache cannot store (a get gives undefined for a miss); give null for "nothing"');
    return true;
  });
  await assert.rejects(c.getOrSet('k', () => new Date(0)), /^TypeError: Cache.getOrSet: value must be/);
  assert.deepEqual(locks(db, 't'), []);
  // too large for the capacity: returned, not kept, and the lock says so
  // for lockTtl, so that other callers compute at once instead of waiting
  const big = 'x'.repeat(200);
  assert.equal(await c.getOrSet('big', () => big, { lockTtl: 30000 }), big);
  assert.equal(c.has('big'), false);
  assert.deepEqual(locks(db, 't'), [['big', '\0unstorable']]);
  assert.equal(one(db, 'SELECT expires - created FROM t WHERE substr(key, 1, 5) = x\'006c6f636b\''), 30000);
  let calls = 0;
  assert.equal(await c.getOrSet('big', () => { calls += 1; return big; }), big);
  assert.equal(calls, 1);
  db.close();
});

check('getOrSet refuses to run inside a transaction, and checks its arguments', async () => {
  const db = open();
  const c = new Cache(db, 't');
  db.exec('BEGIN');
  await assert.rejects(c.getOrSet('k', () => 1), (e) => {
    assert.equal(e.message, 'Cache.getOrSet: the connection is inside a transaction; its lock entry would be seen by no other process until the transaction commits (call it outside one)');
    return true;
  });
  db.exec('ROLLBACK');
  const cases = [
    [() => c.getOrSet(1.5, () => 1), 'Cache.getOrSet: key must be a string, a Buffer or Uint8Array, or an integer (a safe-integer number or a 64-bit bigint); got number 1.5'],
    [() => c.getOrSet('k', 1), 'Cache.getOrSet: fn must be a function (sync or async) that gives the value; got number 1'],
    [() => c.getOrSet('k', () => 1, { lockttl: 1 }), "Cache.getOrSet: unknown option 'lockttl'; accepted options are ttl, tag and lockTtl"],
    [() => c.getOrSet('k', () => 1, { lockTtl: 0 }), 'Cache.getOrSet: lockTtl must be a number of milliseconds greater than 0 and at most 1000000000000000, or undefined for 60000; got number 0'],
    [() => c.getOrSet('k', () => 1, { ttl: -1 }), "Cache.getOrSet: ttl must be a number of milliseconds greater than 0 and at most 1000000000000000, or undefined for the table's defaultTtl; got number -1"],
  ];
  for (const [f, text] of cases) await assert.rejects(f(), (e) => { assert.equal(e.message, text); return true; });
  db.close();
});

check('memoize: the calls of a function through getOrSet, under a key of its name and arguments or of option key', async () => {
  const db = open();
  const c = new Cache(db, 't');
  let calls = 0;
  async function price(item, qty) { calls += 1; return { item, total: qty * 2 }; }
  const cached = c.memoize(price, { ttl: 60000 });
  assert.deepEqual(await cached('pear', 3), { item: 'pear', total: 6 });
  assert.deepEqual(await cached('pear', 3), { item: 'pear', total: 6 });
  assert.deepEqual(await cached('pear', 4), { item: 'pear', total: 8 });
  assert.equal(calls, 2);
  assert.deepEqual(rows(db, "SELECT key, expires - created FROM t WHERE key LIKE 'memo:%'"),
                   ['memo:price:["pear",3]|60000', 'memo:price:["pear",4]|60000']);
  const byKey = c.memoize((id) => `user ${id}`, { key: (id) => `user:${id}` });
  assert.equal(await byKey(7), 'user 7');
  assert.equal(c.get('user:7'), 'user 7');
  const named = c.memoize(function () { return this.x; }, { name: 'x' });
  assert.equal(await named.call({ x: 5 }), 5);
  assert.equal(c.get('memo:x:[]'), 5);
  throwsExactly(() => c.memoize(() => 1), 'Cache.memoize: an anonymous function needs option name (a string) or option key (a function of the arguments); got name string');
  throwsExactly(() => c.memoize(price, { key: 'k' }), 'Cache.memoize: option key must be a function of the arguments that gives the key; got string');
  throwsExactly(() => c.memoize(price, { lockTTL: 1 }), "Cache.memoize: unknown option 'lockTTL'; accepted options are key, name, ttl, tag and lockTtl");
  await assert.rejects(cached(new Date(0)), (e) => {
    assert.equal(e.message, 'Cache.memoize: the arguments of price make no key: Date at arguments[0] is not exact in JSON; give option key, a function of the arguments that gives the key');
    return true;
  });
  db.close();
});

// getOrSet from processes of their own on one file.  A child prints
// "computing" when its fn starts and "waiting" when it first waits for
// another's lock (its _pause); the holder's fn returns when the test
// writes a line to its stdin: the order is the test's, no sleep decides it.
function gosChild(file, mode, name) {
  const { spawn } = require('node:child_process');
  const code = `
    ${childOpen(file)}
    const c = new Cache(db, 'memo', { journalMode: ${JSON.stringify(mode)} });
    const pause = c._pause.bind(c);
    let said = false;
    c._pause = (ms) => { if (!said) { said = true; console.log('waiting'); } return pause(ms); };
    c.getOrSet('report', async () => {
      console.log('computing');
      if (${JSON.stringify(name)} === 'holder') await new Promise((r) => process.stdin.once('data', r));
      return 'from ' + ${JSON.stringify(name)};
    }, { lockTtl: 600000 }).then((v) => { console.log('got ' + v); db.close(); process.exit(0); },
                                  (e) => { console.log('error ' + e.message); process.exit(1); });`;
  const p = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'pipe'] });
  const said = [];
  const waiters = [];
  let buf = '';
  let err = '';
  p.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      said.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
      for (const w of waiters.splice(0)) w();
    }
  });
  p.stderr.on('data', (d) => { err += d; });
  p.done = new Promise((resolve) => p.on('close', (codeOut, signal) => {
    for (const w of waiters.splice(0)) w();
    resolve(signal || codeOut);
  }));
  p.said = said;
  // resolves when the child has said line (rejects if it ends first)
  p.says = async (line) => {
    for (;;) {
      if (said.includes(line)) return;
      if (p.exitCode !== null || p.signalCode !== null) {
        throw new Error(`${name} ended (${p.exitCode ?? p.signalCode}) without saying ${line}: ${said.join('; ')} ${err.slice(0, 300)}`);
      }
      await new Promise((r) => waiters.push(r));
    }
  };
  return p;
}

check('getOrSet from four processes at once: fn runs once, the others wait for its value (WAL and rollback journal)', async () => {
  for (const mode of ['wal', 'delete']) {
    const [file, done] = tmpFile('memo.db');
    try {
      const db = open(file);
      const c = new Cache(db, 'memo', { journalMode: mode });
      const holder = gosChild(file, mode, 'holder');
      await holder.says('computing');
      const others = ['w1', 'w2', 'w3'].map((n) => gosChild(file, mode, n));
      for (const w of others) await w.says('waiting');
      holder.stdin.write('go\n');
      const codes = await Promise.all([holder, ...others].map((p) => p.done));
      assert.deepEqual(codes, [0, 0, 0, 0], `${mode}: exits`);
      assert.deepEqual(holder.said, ['computing', 'got from holder'], mode);
      for (const w of others) assert.deepEqual(w.said, ['waiting', 'got from holder'], mode);
      assert.equal(c.get('report'), 'from holder');
      assert.deepEqual(locks(db, 'memo'), []);
      db.close();
    } finally {
      done();
    }
  }
});

check('getOrSet: a holder killed on this machine is seen dead at once, and a waiting process takes its lock over (WAL and rollback journal)', async () => {
  for (const mode of ['wal', 'delete']) {
    const [file, done] = tmpFile('memo.db');
    try {
      const db = open(file);
      const c = new Cache(db, 'memo', { journalMode: mode });
      const holder = gosChild(file, mode, 'holder');
      await holder.says('computing');
      const others = ['w1', 'w2'].map((n) => gosChild(file, mode, n));
      for (const w of others) await w.says('waiting');
      assert.equal(locks(db, 'memo').length, 1);
      holder.kill('SIGKILL');
      assert.equal(await holder.done, 'SIGKILL');
      const codes = await Promise.all(others.map((p) => p.done));
      assert.deepEqual(codes, [0, 0], `${mode}: exits ${others.map((w) => w.said.join(', ')).join(' / ')}`);
      // one of them computed (the lock's lifetime, 600 s, did not pass)
      const computed = others.filter((w) => w.said.includes('computing'));
      assert.equal(computed.length, 1, `${mode}: ${others.map((w) => w.said.join(', ')).join(' / ')}`);
      const name = computed[0] === others[0] ? 'w1' : 'w2';
      for (const w of others) assert.equal(w.said[w.said.length - 1], `got from ${name}`, mode);
      assert.equal(c.get('report'), `from ${name}`);
      assert.deepEqual(locks(db, 'memo'), []);
      db.close();
    } finally {
      done();
    }
  }
});

// ---- the Keyv store: what the compliance suite does not look at
check('KeyvAcorn keeps a namespace as the tag: clear() takes only its own entries', async () => {
  const { Keyv } = require('keyv');
  const db = open();
  const k1 = new Keyv({ store: new KeyvAcorn(db), namespace: 'n1' });
  const k2 = new Keyv({ store: new KeyvAcorn(db), namespace: 'n2' });
  await k1.set('a', { x: 1 });
  await k2.set('a', [1, 2]);
  // Keyv's values by the convention: JSON marked 0xFF 'j'
  assert.deepEqual(rows(db, 'SELECT key, tag, hex(substr(CAST(value AS BLOB), 1, 2)), CAST(substr(CAST(value AS BLOB), 3) AS TEXT) FROM keyv'),
                   ['n1:a|n1|FF6A|{"x":1}', 'n2:a|n2|FF6A|[1,2]']);
  await k1.clear();
  assert.deepEqual(await k2.get('a'), [1, 2]);
  assert.equal(await k1.get('a'), undefined);
  // no namespace: clear() takes every entry
  const k0 = new Keyv({ store: new KeyvAcorn(db), namespace: undefined, useKeyPrefix: false });
  await k0.clear();
  assert.equal(one(db, 'SELECT count(*) FROM keyv'), 0);
  db.close();
});

check('KeyvAcorn: Keyv\'s expires (from its ttl in ms) is the entry\'s; the capacity bounds Keyv\'s bytes', async () => {
  const { Keyv } = require('keyv');
  const db = open();
  const keyv = new Keyv({ store: new KeyvAcorn(db, { table: 'kv', capacity: 1000 }) });
  // Keyv's clock read before acorn's: the entry lives at most the ttl
  const expiresOf = async (k) => {
    const e = Number(one(db, 'SELECT expires FROM kv WHERE key = ?', `keyv:${k}`));
    assert.equal((await keyv.getRaw(k)).expires, e, `${k}: Keyv's expires`);
    return e - Number(one(db, 'SELECT created FROM kv WHERE key = ?', `keyv:${k}`));
  };
  await keyv.set('t', 'v', 1500);
  assert.ok(Math.abs(await expiresOf('t') - 1500) < 1000);
  // a ttl with a fraction gives Keyv an expires with one: its string is
  // kept whole, and the ttl is the entry's
  await keyv.set('t2', 'v', 1500.5);
  assert.deepEqual(rows(db, "SELECT hex(substr(CAST(value AS BLOB), 1, 2)), expires - created FROM kv WHERE key = 'keyv:t2'"),
                   ['FF6B|1501']);
  for (let i = 0; i < 50; i++) await keyv.set(`k${i}`, 'x'.repeat(100));
  const s = keyv.store.cache.stats();
  assert.ok(s.bytes <= 1000, `bytes ${s.bytes}`);
  assert.ok(s.evictions > 0);
  assert.equal(await keyv.get('k49'), 'x'.repeat(100));
  assert.equal(await keyv.get('k0'), undefined);
  // setMany and deleteMany, each in one transaction
  assert.deepEqual(await keyv.setMany([{ key: 'm1', value: 1 }, { key: 'm2', value: 2, ttl: 2000 }]),
                   [true, true]);
  assert.ok(Math.abs(await expiresOf('m2') - 2000) < 1000);
  assert.deepEqual(await keyv.get(['m1', 'm2', 'zz']), [1, 2, undefined]);
  assert.deepEqual(await keyv.has(['m1', 'zz']), [true, false]);
  assert.equal(await keyv.delete(['m1', 'zz']), true);
  assert.equal(await keyv.delete(['m1', 'zz']), false);
  db.close();
});

check('KeyvAcorn\'s many-methods take an array only: anything else is a TypeError naming the method', async () => {
  const db = open();
  const s = new KeyvAcorn(db, { table: 'many' });
  await s.set('a', '"1"');
  await s.set('b', '"2"');
  const rejects = (p, text) => assert.rejects(p, (e) => {
    assert.ok(e instanceof TypeError);
    assert.equal(String(e.message), text);
    return true;
  });
  // a string is iterable: deleteMany('ab') used to delete 'a' and 'b'
  await rejects(s.deleteMany('ab'), 'KeyvAcorn.deleteMany: keys must be an array; got string');
  await rejects(s.getMany(null), 'KeyvAcorn.getMany: keys must be an array; got null');
  await rejects(s.hasMany(undefined), 'KeyvAcorn.hasMany: keys must be an array; got undefined');
  await rejects(s.setMany({ key: 'c', value: '"3"' }), 'KeyvAcorn.setMany: entries must be an array; got object');
  assert.deepEqual(await s.getMany(['a', 'b']), ['"1"', '"2"']);
  db.close();
});

check('KeyvAcorn on a Cache', () => {
  const db = open();
  const c = new Cache(db, 'mine', { capacity: '1MiB' });
  const s = new KeyvAcorn(c);
  assert.equal(s.cache, c);
  assert.equal(s.opts.table, 'mine');
  db.close();
});

check('KeyvAcorn stores a value of Keyv\'s default form by the convention, any other string marked \'k\', and gives Keyv back its strings', async () => {
  const { Keyv } = require('keyv');
  const { defaultSerialize } = require('@keyv/serialize');
  const db = open();
  const keyv = new Keyv({ store: new KeyvAcorn(db) });
  const values = [
    ['s', 'text', 'text'], ['colon', ':x', 'text'], ['two colons', '::x', 'text'], ['b64', ':base64:QQ==', 'text'],
    ['buf', Buffer.from([0xff, 1]), 'blob'], ['int', 42, 'integer'], ['real', 2.5, 'real'], ['big', 2 ** 60, 'real'],
    ['true', true, 'text'], ['null', null, 'text'], ['obj', { a: [1, ':y', null], b: { c: 'd' } }, 'text'],
    ['buf inside', { b: Buffer.from('x') }, 'text'], ['undefined', undefined, 'text'],
    ['date', new Date(0), 'text'],
  ];
  for (const [k, v] of values) await keyv.set(k, v);
  const mark = (k) => one(db, 'SELECT hex(substr(CAST(value AS BLOB), 1, 2)) FROM keyv WHERE key = ?', `keyv:${k}`);
  for (const [k, v, type] of values) {
    assert.equal(one(db, 'SELECT typeof(value) FROM keyv WHERE key = ?', `keyv:${k}`), type, k);
    if (v === undefined) assert.equal(await keyv.get(k), undefined);
    else if (v instanceof Date) assert.equal(await keyv.get(k), v.toJSON());
    else assert.deepEqual(await keyv.get(k), v, k);
  }
  assert.equal(one(db, "SELECT value FROM keyv WHERE key = 'keyv:colon'"), ':x', 'the value, not Keyv\'s escape');
  assert.equal(mark('obj'), 'FF6A');
  assert.equal(mark('buf inside'), 'FF6B', 'a Buffer inside an object has no form in the convention');
  assert.equal(mark('undefined'), 'FF6B');
  // the store gives Keyv the default serializer's string
  const store = keyv.store;
  assert.equal(await store.get('keyv:colon'), defaultSerialize({ value: ':x' }));
  assert.equal(await store.get('keyv:buf'), defaultSerialize({ value: Buffer.from([0xff, 1]) }));
  assert.equal(await store.get('keyv:buf inside'), '{"value":{"b":":base64:eA=="}}');
  // Keyv's expires is the entry's, and goes back to Keyv
  await keyv.set('ttl', { n: 1 }, 60000);
  const s = await store.get('keyv:ttl');
  const expires = Number(one(db, "SELECT expires FROM keyv WHERE key = 'keyv:ttl'"));
  assert.equal(s, `{"value":{"n":1},"expires":${expires}}`);
  assert.ok(Math.abs(expires - Date.now() - 60000) < 5000);
  assert.deepEqual((await keyv.getRaw('ttl')), { value: { n: 1 }, expires });
  // a serializer of the user's: its strings are stored whole, marked 'k'
  const own = new Keyv({ store: new KeyvAcorn(db), namespace: 'own',
                         serialize: (d) => `v1|${JSON.stringify(d)}`, deserialize: (t) => JSON.parse(t.slice(3)) });
  await own.set('k', { x: 1 }, 30000);
  assert.deepEqual(await own.get('k'), { x: 1 });
  assert.equal(one(db, "SELECT hex(substr(CAST(value AS BLOB), 1, 5)) FROM keyv WHERE key = 'own:k'"), 'FF6B76317C');
  assert.equal(one(db, "SELECT expires - created FROM keyv WHERE key = 'own:k'"), 30000);
  assert.throws(() => new Cache(db, 'keyv').get('own:k'), /^Error: Cache.get: the value of "own:k" is a string serialized by Keyv/);
  db.close();
});

check('KeyvAcorn reads what SQL and the other faces wrote, as Keyv\'s values; one it cannot is an error, never a miss', async () => {
  const { Keyv } = require('keyv');
  const db = open();
  const store = new KeyvAcorn(db);
  const keyv = new Keyv({ store, throwOnErrors: true });
  const put = (k, sql) => db.prepare(`INSERT INTO keyv(key, value) VALUES (?, ${sql})`).run(`keyv:${k}`);
  put('text', "':from python'");
  put('bytes', "x'00ff'");
  put('int', '42');
  put('real', '1.5');
  put('json', `CAST(x'ff6a${Buffer.from('{"a":[":z",2]}').toString('hex')}' AS TEXT)`);
  put('pickle', "CAST(x'ff708004' AS TEXT)");
  put('nan', "CAST(x'ff666e616e' AS TEXT)");
  put('inf', '9e999');
  put('big', '9007199254740993');
  assert.equal(await keyv.get('text'), ':from python');
  assert.deepEqual(await keyv.get('bytes'), Buffer.from([0, 0xff]));
  assert.equal(await keyv.get('int'), 42);
  assert.equal(await keyv.get('real'), 1.5);
  assert.deepEqual(await keyv.get('json'), { a: [':z', 2] });
  assert.deepEqual(await keyv.get(['int', 'json', 'none']), [42, { a: [':z', 2] }, undefined]);
  const errors = [];
  store.on('error', (e) => errors.push(e.code));
  for (const [k, code, text] of [
    ['pickle', 'ACORN_FOREIGN_VALUE', /^KeyvAcorn.get: the value of "keyv:pickle" is a Python pickle/],
    ['nan', 'ACORN_KEYV_INEXACT', /^KeyvAcorn.get: the value of "keyv:nan" is the number NaN, which Keyv's JSON cannot hold \(it would read null\); read it with sqlite-acorn's Cache$/],
    ['inf', 'ACORN_KEYV_INEXACT', /is the number Infinity, which Keyv's JSON cannot hold/],
    ['big', 'ACORN_KEYV_INEXACT', /is the number 9007199254740993n, which Keyv's JSON cannot hold \(it would read 9007199254740992\)/],
  ]) {
    await assert.rejects(keyv.get(k), (e) => { assert.equal(e.code, code); assert.match(e.message, text); return true; });
  }
  assert.deepEqual(errors, ['ACORN_FOREIGN_VALUE', 'ACORN_KEYV_INEXACT', 'ACORN_KEYV_INEXACT', 'ACORN_KEYV_INEXACT'],
                   'an error event too: without throwOnErrors, Keyv answers undefined');
  await assert.rejects(keyv.get(['int', 'pickle']), /is a Python pickle/);
  // the iterator gives Keyv's values, and stops at one it cannot read
  db.exec("DELETE FROM keyv WHERE key IN ('keyv:pickle', 'keyv:nan', 'keyv:inf', 'keyv:big')");
  const seen = {};
  for await (const [k, v] of keyv.iterator()) seen[k] = v;
  assert.deepEqual(Object.keys(seen).sort(), [], 'rows without the namespace\'s tag are not Keyv\'s');
  db.exec("UPDATE keyv SET tag = 'keyv'");
  for await (const [k, v] of keyv.iterator()) seen[k] = v;
  assert.deepEqual(seen, { text: ':from python', bytes: Buffer.from([0, 0xff]), int: 42, real: 1.5, json: { a: [':z', 2] } });
  db.close();
});

check('KeyvAcorn gives back every string Keyv\'s default serializer makes as it was, stored by the convention where it can be', async () => {
  const { defaultSerialize } = require('@keyv/serialize');
  const db = open();
  const store = new KeyvAcorn(db);
  const later = Date.now() + 3600000;
  const samples = [
    [{ value: 'a' }, 'text'], [{ value: ':a' }, 'text'], [{ value: Buffer.from('xyz') }, 'blob'],
    [{ value: 'é\u2028"\\' }, 'text'], [{ value: 1e21 }, 'real'], [{ value: -0 }, 'integer'],
    [{ value: [1, undefined, () => 1, ':q'] }, 'text'], [{ value: [[], {}] }, 'text'],
    [{ value: { a: undefined, b: () => 1, c: { toJSON: () => 'T' }, 'd:e': ':f' } }, 'text'],
    [{ value: new Date(5) }, 'text'], [{ value: null, expires: later }, 'text'], [{ value: 7, expires: later }, 'integer'],
    [{ value: { b: Buffer.from('x') } }, 'k'], [{}, 'k'], [{ expires: later }, 'k'], [{ value: 1, expires: later + 0.5 }, 'k'],
  ];
  for (const [d, type] of samples) {
    const text = defaultSerialize(d);
    await store.set('k', text);
    assert.equal(await store.get('k'), text, text);
    const got = one(db, "SELECT CASE WHEN hex(substr(CAST(value AS BLOB), 1, 2)) = 'FF6B' THEN 'k' ELSE typeof(value) END FROM keyv");
    assert.equal(got, type, text);
  }
  // strings that only look like it are kept whole
  for (const text of ['{"value":1.0}', '{"value":":a"}', '{"value":1,"expires":null}', '{"expires":1,"value":1}',
                      '{"value":1,"other":2}', ' {"value":1}', '{"value":"\\ud800"}', 'plain', '"quoted"', 'null']) {
    await store.set('k', text);
    assert.equal(await store.get('k'), text, text);
    assert.equal(one(db, 'SELECT hex(substr(CAST(value AS BLOB), 1, 2)) FROM keyv'), 'FF6B', text);
  }
  await assert.rejects(store.set('k', { value: 1 }), (e) => {
    assert.equal(e.message, "KeyvAcorn.set: value must be the string Keyv's serializer made; got Object (Keyv with serialize: undefined hands a store objects, which this store does not take)");
    return true;
  });
  db.close();
});

check('KeyvAcorn opens a path or a sqlite:// URI itself (WAL, a busy timeout), and disconnect() closes only what it opened', async () => {
  const { Keyv } = require('keyv');
  const [file, done] = tmpFile('kv.db');
  const driver = host === 'node:sqlite' ? { driver: 'node:sqlite' } : {};
  try {
    const a = new KeyvAcorn(`sqlite://${file}`, { table: 'kv', capacity: '1MiB', ...driver });
    const keyv = new Keyv({ store: a });
    await keyv.set('x', { n: 1 });
    assert.equal(a.opts.uri, `sqlite://${file}`);
    assert.equal(a.opts.dialect, 'sqlite');
    assert.equal(one(a.cache.db, 'PRAGMA journal_mode'), 'wal');
    assert.equal(Number(one(a.cache.db, 'PRAGMA busy_timeout')), 5000);
    assert.equal(Number(one(a.cache.db, 'PRAGMA synchronous')), 1, 'NORMAL, on its own connection');
    // a plain path, and @keyv/sqlite's options object
    const b = new KeyvAcorn(file, { table: 'kv', ...driver });
    assert.deepEqual(await new Keyv({ store: b }).get('x'), { n: 1 });
    const c = new KeyvAcorn({ uri: `sqlite://${file}`, table: 'kv', busyTimeout: 10000, ...driver });
    assert.equal(Number(one(c.cache.db, 'PRAGMA busy_timeout')), 10000);
    await keyv.disconnect();
    assert.throws(() => a.cache.db.prepare('SELECT 1'), /not open|closed/i);
    await a.disconnect();                                   // again: nothing to do
    await b.disconnect();
    await c.disconnect();
    // a database given stays open
    const db = open(file);
    const d = new KeyvAcorn(db, { table: 'kv' });
    await d.disconnect();
    assert.equal(one(db, 'SELECT count(*) FROM kv'), 1);
    db.close();
    const mem = new KeyvAcorn('sqlite://:memory:', driver);
    await mem.set('k', '"v"');
    assert.equal(await mem.get('k'), '"v"');
    await mem.disconnect();
  } finally {
    done();
  }
});

check('KeyvAcorn\'s bad targets and options', () => {
  const db = open();
  const c = new Cache(db, 'mine');
  const cases = [
    [() => new KeyvAcorn(c, { capacity: 5 }), 'KeyvAcorn: with a Cache, give no options: the Cache has its table and settings; got capacity'],
    [() => new KeyvAcorn(db, { table: '' }), 'KeyvAcorn: option table must be the name of a cache table (a non-empty string); got string'],
    [() => new KeyvAcorn(db, { capcity: 5 }), "KeyvAcorn: unknown option 'capcity'; accepted options are table, uri, driver, capacity, policy, defaultTtl, maxEntries, feed, recencyBuffer, autoflush, journalMode, busyTimeout"],
    [() => new KeyvAcorn({ uri: 'sqlite://x.db', keySize: 255 }), "KeyvAcorn: unknown option 'keySize'; accepted options are table, uri, driver, capacity, policy, defaultTtl, maxEntries, feed, recencyBuffer, autoflush, journalMode, busyTimeout"],
    [() => new KeyvAcorn({ table: 't' }), 'KeyvAcorn: options without a database need uri (sqlite://path); got undefined'],
    [() => new KeyvAcorn(db, { uri: 'sqlite://x.db' }), "KeyvAcorn: option uri goes with no database (new KeyvAcorn({ uri }) or new KeyvAcorn('sqlite://path')); this one was given a database"],
    [() => new KeyvAcorn(db, { driver: 'node:sqlite' }), 'KeyvAcorn: option driver goes with a path, for the connection the store opens; this one was given a database'],
    [() => new KeyvAcorn('x.db', { driver: 'sqlite3' }), "KeyvAcorn: option driver must be 'better-sqlite3' or 'node:sqlite'; got string"],
    [() => new KeyvAcorn('postgres://host/db'), 'KeyvAcorn: a URI must start with sqlite:// (sqlite://path/to/file.db); got postgres://'],
    [() => new KeyvAcorn('sqlite://'), "KeyvAcorn: the path is empty; give a file's path, or ':memory:'"],
    [() => new KeyvAcorn(null), 'Cache: db must be a better-sqlite3 Database or a node:sqlite DatabaseSync; got null'],
  ];
  for (const [f, text] of cases) throwsExactly(f, text);
  db.close();
});

check('reserve, writeAt and readAt: a piece written in blocks, read back; their errors', () => {
  const db = open();
  const c = new Cache(db, 'pieces', { capacity: '1MiB' });
  assert.equal(c.reserve('p', 65536, { tag: 'torrent', ttl: 60000 }), c);
  assert.equal(one(db, "SELECT tag || ':' || (expires - created) || ':' || size FROM pieces"), 'torrent:60000:65537');
  for (const b of [3, 0, 2, 1]) assert.equal(c.writeAt('p', b * 16384, Buffer.alloc(16384, b + 1)), 16384);
  assert.deepEqual(c.readAt('p', 16383, 3), Buffer.from([1, 2, 2]));
  assert.equal(c.readAt('p', 65535, 10).length, 1);
  assert.equal(c.readAt('p', 70000, 10).length, 0);
  assert.equal(c.readAt('nope', 0, 1), undefined);
  assert.equal(c.writeAt('p', 0n, new Uint8Array([9])), 1);
  assert.deepEqual(c.readAt('p', 0, 2), Buffer.from([9, 1]));
  throwsExactly(() => c.writeAt('nope', 0, Buffer.from('a')),
                "Cache.writeAt: no live entry has that key in 'pieces' (write into a value set first, e.g. INSERT ... VALUES (key, zeroblob(size)))");
  throwsExactly(() => c.writeAt('p', 65536, Buffer.from('a')),
                'Cache.writeAt: cannot write 1 bytes at offset 65536: the value holds 65536 bytes (a value keeps the size it was set with)');
  throwsExactly(() => c.writeAt('p', 0, 'a'), 'Cache.writeAt: data must be a Buffer or a Uint8Array; got string');
  throwsExactly(() => c.writeAt('p', -1, Buffer.from('a')),
                'Cache.writeAt: offset must be a whole number from 0 (a safe-integer number or a bigint); got number -1');
  throwsExactly(() => c.readAt('p', 0, 1.5),
                'Cache.readAt: length must be a whole number from 0 (a safe-integer number or a bigint); got number 1.5');
  throwsExactly(() => c.reserve('q', -1),
                "Cache.reserve: size must be a whole number of bytes from 0 to 2147483647 (SQLite's largest value); got number -1");
  throwsExactly(() => c.reserve('q', 1, { ttl: 0 }),
                "Cache.reserve: ttl must be a number of milliseconds greater than 0 and at most 1000000000000000, or undefined for the table's defaultTtl; got number 0");
  assert.throws(() => c.reserve('q', 2 << 20), /cache: entry of 2097153 bytes exceeds capacity of 1048576 bytes/);
  c.set('s', 'text');
  throwsExactly(() => c.writeAt('s', 0, Buffer.from('a')),
                'Cache.writeAt: the value is TEXT; only a BLOB value is written in place');
  db.close();
});

check('four processes write blocks of the same pieces at once: every block lands (WAL and rollback journal)', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  for (const mode of ['wal', 'delete']) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acorn-pieces-'));
    const file = path.join(dir, 'p.db');
    const db = open(file);
    db.exec('PRAGMA auto_vacuum = INCREMENTAL');
    const c = new Cache(db, 'pieces', { capacity: '4MiB', journalMode: mode });
    c.reserve(0, 65536).reserve(1, 65536);
    // child i writes blocks i, i+4, i+8, i+12 of both pieces, each in its
    // own deferred transaction, with a busy timeout as a server would set
    const child = `
      ${childOpen(file)}
      db.exec('PRAGMA busy_timeout = 10000');
      const c = new Cache(db, 'pieces', { journalMode: null });
      const i = Number(process.argv[1]);
      for (const p of [0, 1]) {
        for (let b = i; b < 16; b += 4) {
          db.exec('BEGIN');
          c.writeAt(p, b * 4096, Buffer.alloc(4096, p * 16 + b + 1));
          db.exec('COMMIT');
        }
      }
      db.close();`;
    const codes = (await Promise.all([0, 1, 2, 3].map((i) => runChild(child, String(i)))))
      .map((r) => (r.status === 0 ? 0 : `${r.status}: ${r.err.slice(0, 300)}`));
    assert.deepEqual(codes, [0, 0, 0, 0], `${mode}: the writers`);
    assert.equal(one(db, 'PRAGMA journal_mode'), mode);
    for (const p of [0, 1]) {
      for (let b = 0; b < 16; b++) {
        assert.deepEqual(c.readAt(p, b * 4096, 4096), Buffer.alloc(4096, p * 16 + b + 1), `${mode}: piece ${p} block ${b}`);
      }
    }
    db.exec("INSERT INTO pieces(pieces) VALUES ('integrity_check')");
    db.close();
    fs.rmSync(dir, { recursive: true });
  }
});

async function main() {
  if (host !== 'better-sqlite3' && host !== 'node:sqlite') {
    console.error('usage: node cache_test.js better-sqlite3|node:sqlite');
    process.exit(2);
  }
  const name = `npm-cache-${host.replace(':', '-')}`;
  const only = process.argv[3];
  const run = only === undefined ? checks : checks.filter(([what]) => what.includes(only));
  for (const [what, fn] of run) {
    try {
      await fn();
    } catch (e) {
      console.log(`FAIL ${name}: ${what}: ${e && e.message ? e.message.replace(/\s+/g, ' ').slice(0, 400) : e}`);
      process.exit(1);
    }
  }
  console.log(`PASS ${name} ${run.length} checks (Node ${process.versions.node}, ${host})`);
}

main();
