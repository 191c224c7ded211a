// Values across languages, Node's side (see cross.py): `write FILE` stores
// one value of each kind under 'js/<kind>' with sqlite-acorn's Cache; `read
// FILE` prints `key<TAB>canonical` for every key of the table.  `write-keyv`
// and `read-keyv` do the same through Keyv and sqlite-acorn/keyv (keys
// 'kv/<kind>', with Keyv's useKeyPrefix off so that they are the table's).
'use strict';
const Database = require('better-sqlite3');
const { Cache } = require('sqlite-acorn');

const VALUES = {
  str: 'h\u00e9llo \u2603',
  str_empty: '',
  bytes: Buffer.from([0, 255, 1]),
  bytes_empty: Buffer.alloc(0),
  int: 42,
  int_unsafe: -9007199254740993n,
  int_big: 2n ** 70n,
  float: 1.5,
  inf: Infinity,
  nan: NaN,
  true: true,
  null: null,
  list: [1, 'a', null, true, 2.5],
  dict: { a: 1, b: [true, null], '\u00e9': 'x' },
};

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = sortKeys(v[k]);
    return o;
  }
  return v;
}

function canon(v) {
  if (typeof v === 'boolean') return `bool:${v}`;
  if (v === null) return 'null';
  if (typeof v === 'string') return `str:${Buffer.from(v, 'utf8').toString('hex')}`;
  if (Buffer.isBuffer(v)) return `bytes:${v.toString('hex')}`;
  if (typeof v === 'bigint') return `num:${v}`;
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'nan';
    if (v === Infinity) return 'num:inf';
    if (v === -Infinity) return 'num:-inf';
    return `num:${v}`;
  }
  if (typeof v === 'object') return `json:${JSON.stringify(sortKeys(v))}`;
  return `own:${String(v)}`;
}

// Keyv's values: what Keyv's JSON holds, and one it does not (an object
// holding a Buffer: the store keeps Keyv's string, marked k).
const KEYV_VALUES = {
  str: 'h\u00e9llo \u2603',
  bytes: Buffer.from([0, 255, 1]),
  int: 42,
  float: 1.5,
  true: true,
  null: null,
  list: [1, 'a', null, true, 2.5],
  dict: { a: 1, b: [true, null], '\u00e9': 'x' },
  own: { b: Buffer.from([1]) },
};

function errorKind(e) {
  if (e && e.code === 'ACORN_KEYV_INEXACT') return 'error:inexact';
  const f = e && e.code === 'ACORN_FOREIGN_VALUE' ? e.format : undefined;
  return `error:${f === 'pickle' ? 'pickle' : f === 'Marshal' ? 'marshal' : f === 'Keyv' ? 'keyv' : 'other'}`;
}

function keyvCanon(v) {
  if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v) && !Array.isArray(v) &&
      Object.values(v).some((x) => Buffer.isBuffer(x))) {
    return `own:${JSON.stringify(v)}`;
  }
  return canon(v);
}

async function viaKeyv(op, db) {
  const Keyv = require('keyv').default || require('keyv');
  const KeyvAcorn = require('sqlite-acorn/keyv');
  const keyv = new Keyv({ store: new KeyvAcorn(db, { table: 'cache' }), useKeyPrefix: false,
                          namespace: 'kv', throwOnErrors: true });
  if (op === 'write-keyv') {
    for (const [kind, v] of Object.entries(KEYV_VALUES)) await keyv.set(`kv/${kind}`, v);
    return;
  }
  const keys = db.prepare('SELECT key FROM cache').pluck().all().sort();
  for (const k of keys) {
    let out;
    try {
      const v = await keyv.get(k);
      out = v === undefined ? 'MISS' : keyvCanon(v);
    } catch (e) {
      out = errorKind(e);
    }
    console.log(`${k}\t${out}`);
  }
}

const [op, path] = process.argv.slice(2);
const db = new Database(path);
const cache = new Cache(db, 'cache');
if (op.endsWith('-keyv')) {
  viaKeyv(op, db).then(() => db.close(), (e) => { console.error(e); process.exit(1); });
} else if (op === 'write') {
  for (const [kind, v] of Object.entries(VALUES)) cache.set(`js/${kind}`, v);
} else {
  const keys = db.prepare('SELECT key FROM cache').pluck().all().sort();
  for (const k of keys) {
    let out;
    try {
      const v = cache.get(k);
      out = v === undefined ? 'MISS' : canon(v);
    } catch (e) {
      out = errorKind(e);
    }
    console.log(`${k}\t${out}`);
  }
}
if (!op.endsWith('-keyv')) db.close();
