// sqlite-acorn/cache.js: acorn's cache virtual table as an object.
//
//   const cache = new Cache(db, 'thumbs', { capacity: '64MiB' });
//   cache.set('a.png', buf, { ttl: 60000, tag: 'user:1' });
//   cache.get('a.png');                 // the Buffer, or undefined
//
// db is a better-sqlite3 Database or a node:sqlite DatabaseSync (opened with
// { allowExtension: true } if acorn is not loaded yet).  Every method is
// synchronous and runs one prepared statement of the table's (clear() and
// the settings of an existing table: a savepoint of a few), so a Cache costs
// what the SQL costs plus the checks of its arguments.
//
// Times are milliseconds, as everywhere in JavaScript (Date.now(), Keyv):
// set()'s ttl and the defaultTtl option.  The table takes seconds; a ttl is
// passed as ms/1000, which acorn rounds back to the same ms.
//
// Values are strings (stored as TEXT) and Buffers or Uint8Arrays (stored as
// BLOB), and read back as they were stored: a string, or a Buffer.  Anything
// else is refused with a TypeError: the cache keeps bytes, and how to turn
// an object into bytes (JSON, v8.serialize, ...) is the caller's choice.  The
// Keyv store (keyv.js) stores Keyv's serialized strings.
//
// docs/node.md in acorn's repository specifies all of it.
'use strict';

const { load } = require('./load.js');

const OPTIONS = ['capacity', 'policy', 'defaultTtl', 'maxEntries', 'feed', 'recencyBuffer',
                 'autoflush'];
const SET_OPTIONS = ['ttl', 'tag'];
const MAX_TTL_MS = 1e15;            // the table's bound, 10^12 s
const TTL_RE = /^([0-9]+)([smhd]?)$/;

function typeName(v) {
  if (v === null) return 'null';
  if (Buffer.isBuffer(v)) return 'Buffer';
  if (Array.isArray(v)) return 'Array';
  if (typeof v === 'object') return v.constructor && v.constructor.name ? v.constructor.name : 'object';
  if (typeof v === 'number' || typeof v === 'bigint') return `${typeof v} ${String(v)}`;
  return typeof v;
}

// "name" quoted as an SQL identifier, 'text' as an SQL string.
const ident = (s) => `"${s.replace(/"/g, '""')}"`;
const literal = (s) => `'${s.replace(/'/g, "''")}'`;

// Both hosts bind a Buffer as a BLOB; better-sqlite3 takes no other
// Uint8Array, so one is bound through a Buffer over the same memory.
function blob(v) {
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

// A value as the table gave it: a string, or a Buffer (node:sqlite reads a
// BLOB as a plain Uint8Array).
function fromSql(v) {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string' || Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return v;
}

function checkKey(method, key) {
  if (typeof key === 'string') return key;
  if (typeof key === 'number' && Number.isSafeInteger(key)) return key;
  if (typeof key === 'bigint' && key >= -(2n ** 63n) && key < 2n ** 63n) return key;
  if (key instanceof Uint8Array) return blob(key);
  throw new TypeError(`Cache.${method}: key must be a string, a Buffer or Uint8Array, or an ` +
                      `integer (a safe-integer number or a 64-bit bigint); got ${typeName(key)}`);
}

function checkValue(value) {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return blob(value);
  throw new TypeError('Cache.set: value must be a string, a Buffer or a Uint8Array; got ' +
                      `${typeName(value)} (serialize other values first, e.g. with ` +
                      'JSON.stringify, or use the Keyv store sqlite-acorn/keyv)');
}

function checkTag(method, tag) {
  if (typeof tag !== 'string') {
    throw new TypeError(`Cache.${method}: tag must be a string; got ${typeName(tag)}`);
  }
  return tag;
}

// A time in ms, for set()'s ttl.
function checkTtl(method, ttl) {
  if (ttl === undefined || ttl === null) return null;
  if (typeof ttl !== 'number' || !(ttl > 0 && ttl <= MAX_TTL_MS)) {
    throw new RangeError(`Cache.${method}: ttl must be a number of milliseconds greater than 0 and at ` +
                         `most ${MAX_TTL_MS}, or undefined for the table's defaultTtl; got ` +
                         typeName(ttl));
  }
  return ttl / 1000;
}

// set()'s and reserve()'s options: [ttl in seconds or null, tag or null].
function setOptions(method, options) {
  let ttl = null;
  let tag = null;
  if (options !== undefined && options !== null) {
    if (typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`Cache.${method}: options must be an object ({ ttl, tag }); got ${typeName(options)}`);
    }
    for (const o of Object.keys(options)) {
      if (!SET_OPTIONS.includes(o)) {
        throw new TypeError(`Cache.${method}: unknown option '${o}'; accepted options are ttl and tag`);
      }
    }
    ttl = checkTtl(method, options.ttl);
    if (options.tag !== undefined && options.tag !== null) tag = checkTag(method, options.tag);
  }
  return [ttl, tag];
}

// An offset or a length: a whole number from 0.
function checkOffset(method, name, v) {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v === 'bigint' && v >= 0n && v < 2n ** 63n) return v;
  throw new RangeError(`Cache.${method}: ${name} must be a whole number from 0 (a safe-integer ` +
                       `number or a bigint); got ${typeName(v)}`);
}

function wholeNumber(name, v, lo, hi, unit) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) {
    throw new RangeError(`Cache: option ${name} must be a whole number ${unit} from ${lo} to ` +
                         `${BigInt(hi)}; got ${typeName(v)}`);
  }
  return v;
}

// The options, checked, as the cache module's arguments (name -> SQL text).
function tableArgs(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`Cache: options must be an object; got ${typeName(options)}`);
  }
  const args = {};
  for (const k of Object.keys(options)) {
    if (!OPTIONS.includes(k)) {
      throw new TypeError(`Cache: unknown option '${k}'; accepted options are ${OPTIONS.join(', ')}`);
    }
    const v = options[k];
    if (v === undefined) continue;
    switch (k) {
      case 'capacity':
        if (typeof v === 'number') {
          args.capacity = String(wholeNumber('capacity', v, 1, 2 ** 62, 'of bytes'));
        } else if (typeof v === 'string') {
          args.capacity = literal(v);         // the table checks the units
        } else {
          throw new TypeError('Cache: option capacity must be a number of bytes or a string with ' +
                              `a unit ('64MiB'); got ${typeName(v)}`);
        }
        break;
      case 'policy':
        if (v !== 'lru' && v !== 'fifo') {
          throw new TypeError(`Cache: option policy must be 'lru' or 'fifo'; got ${typeName(v)}`);
        }
        args.policy = v;
        break;
      case 'defaultTtl':
        if (typeof v === 'number') {
          if (!Number.isInteger(v) || v < 0 || v % 1000 !== 0 || v > MAX_TTL_MS) {
            throw new RangeError('Cache: option defaultTtl must be a whole number of seconds in ' +
                                 `milliseconds (a multiple of 1000, 0 for none) up to ${MAX_TTL_MS}, ` +
                                 `or a string with a unit s, m, h or d ('15m'); got ${typeName(v)}`);
          }
          args.default_ttl = String(v / 1000);
        } else if (typeof v === 'string' && TTL_RE.test(v)) {
          args.default_ttl = literal(v);
        } else {
          throw new TypeError('Cache: option defaultTtl must be milliseconds (a multiple of 1000) ' +
                              `or a string with a unit s, m, h or d ('90s', '15m', '2h', '7d'); ` +
                              `got ${typeName(v)}`);
        }
        break;
      case 'maxEntries':
        args.max_entries = String(wholeNumber('maxEntries', v, 0, 2 ** 62, 'of entries'));
        break;
      case 'feed':
        args.feed = String(wholeNumber('feed', v, 0, 1000000, 'of removals'));
        break;
      case 'recencyBuffer':
        args.recency_buffer = String(wholeNumber('recencyBuffer', v, 1, 1000000, 'of keys'));
        break;
      case 'autoflush':
        if (typeof v !== 'boolean') {
          throw new TypeError(`Cache: option autoflush must be true or false; got ${typeName(v)}`);
        }
        args.autoflush = v ? 'on' : 'off';
        break;
    }
  }
  return args;
}

// acorn's functions are there, or loaded now.
function ensureLoaded(db) {
  try {
    db.prepare('SELECT acorn_version()').get();
    return;
  } catch (e) {
    if (!/no such function: acorn_version/.test(String(e && e.message))) throw e;
  }
  load(db);
}

// What a statement's first column gives: better-sqlite3's pluck() where it
// exists, else the first property of the row (node:sqlite).
function prepareScalar(db, sql) {
  const st = db.prepare(sql);
  if (typeof st.pluck === 'function') {
    st.pluck(true);
    return (...args) => st.get(...args);
  }
  return (...args) => {
    const row = st.get(...args);
    if (row === undefined) return undefined;
    for (const k in row) return row[k];
    return undefined;
  };
}

class Cache {
  constructor(db, name, options) {
    if (db === null || typeof db !== 'object' || typeof db.prepare !== 'function' ||
        typeof db.exec !== 'function') {
      throw new TypeError('Cache: db must be a better-sqlite3 Database or a node:sqlite ' +
                          `DatabaseSync; got ${typeName(db)}`);
    }
    if (typeof name !== 'string' || name === '' || name.includes('\0')) {
      throw new TypeError('Cache: name must be the name of a cache table, a non-empty string ' +
                          `('thumbs', or 'schema.thumbs'); got ${typeName(name)}`);
    }
    const args = tableArgs(options);
    const dot = name.indexOf('.');
    const schema = dot > 0 ? name.slice(0, dot) : 'main';
    const table = dot > 0 ? name.slice(dot + 1) : name;
    this.db = db;
    this.name = name;
    const t = dot > 0 ? `${ident(schema)}.${ident(table)}` : ident(table);

    ensureLoaded(db);
    const row = db.prepare(`SELECT sql FROM ${ident(schema)}.sqlite_schema ` +
                           "WHERE type = 'table' AND name = ? COLLATE NOCASE").get(table);
    if (row === undefined) {
      const list = Object.entries(args).map(([k, v]) => `${k} = ${v}`).join(', ');
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${ident(schema)}.${ident(table)} ` +
              `USING cache${list ? `(${list})` : ''}`);
    } else {
      if (!/\bUSING\s+cache\b/i.test(row.sql || '')) {
        throw new Error(`Cache: ${name} exists and is not a cache table`);
      }
      this._settle(args, row.sql, t);
    }

    const q = literal(name);
    this._get = prepareScalar(db, `SELECT cache_get(${q}, ?)`);
    this._has = prepareScalar(db, `SELECT count(*) FROM ${t} WHERE key = ?`);
    this._stats = db.prepare(`SELECT * FROM cache_stats(${q})`);
    this._set = db.prepare(`INSERT INTO ${t}(key, value, ttl, tag) VALUES (?, ?, ?, ?)`);
    this._delete = db.prepare(`DELETE FROM ${t} WHERE key = ?`);
    this._evict = db.prepare(`DELETE FROM ${t} WHERE tag = ?`);
    this._clear = db.prepare(`DELETE FROM ${t}`);
    this._purge = db.prepare(`INSERT INTO ${t}(${ident(table)}) VALUES ('purge')`);
    this._reserve = db.prepare(`INSERT INTO ${t}(key, value, ttl, tag) VALUES (?, zeroblob(?), ?, ?)`);
    this._writeAt = prepareScalar(db, `SELECT cache_write(${q}, ?, ?, ?)`);
    this._readAt = prepareScalar(db, `SELECT cache_read(${q}, ?, ?, ?)`);
    this._t = t;
  }

  // An existing table: the settings it stores are set to those given, by
  // their commands, in one savepoint; those fixed at CREATE must agree.
  _settle(args, createSql, t) {
    const fixed = (re, dflt) => { const m = re.exec(createSql); return m ? m[1].toLowerCase() : dflt; };
    const had = {
      policy: fixed(/\bpolicy\s*=\s*['"]?(lru|fifo)\b/i, 'lru'),
      recency_buffer: fixed(/\brecency_buffer\s*=\s*['"]?([0-9]+)/i, '100000'),
      autoflush: fixed(/\bautoflush\s*=\s*['"]?(on|off)\b/i, 'on'),
    };
    const js = { policy: 'policy', recency_buffer: 'recencyBuffer', autoflush: 'autoflush' };
    for (const k of Object.keys(had)) {
      if (args[k] !== undefined && args[k] !== had[k]) {
        throw new Error(`Cache: ${this.name} was created with ${k} = ${had[k]}, and ${js[k]} is ` +
                        `fixed at creation; got ${k} = ${args[k]} (use another table, or drop it)`);
      }
    }
    const cmds = ['capacity', 'default_ttl', 'max_entries', 'feed'].filter((k) => args[k] !== undefined);
    if (cmds.length === 0) return;
    const col = ident(this.name.includes('.') ? this.name.slice(this.name.indexOf('.') + 1) : this.name);
    this._savepoint(() => {
      for (const k of cmds) {
        this.db.exec(`INSERT INTO ${t}(${col}, value) VALUES ('${k}', ${args[k]})`);
      }
    });
  }

  _savepoint(fn) {
    this.db.exec('SAVEPOINT acorn_cache');
    try {
      const r = fn();
      this.db.exec('RELEASE acorn_cache');
      return r;
    } catch (e) {
      this.db.exec('ROLLBACK TO acorn_cache');
      this.db.exec('RELEASE acorn_cache');
      throw e;
    }
  }

  // The value (a string or a Buffer), or undefined: a get, counted as a hit
  // or a miss, and a use of the entry.
  get(key) {
    return fromSql(this._get(checkKey('get', key)));
  }

  // Stores value under key (replacing what it held); options.ttl in ms,
  // options.tag a string.  Returns the cache.
  set(key, value, options) {
    const k = checkKey('set', key);
    const v = checkValue(value);
    const [ttl, tag] = setOptions('set', options);
    this._set.run(k, v, ttl, tag);
    return this;
  }

  // Stores size zero bytes under key, to be written in pieces by writeAt():
  // the whole size counts against the capacity at once.  Options as set()'s.
  // Returns the cache.
  reserve(key, size, options) {
    const k = checkKey('reserve', key);
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0 || size > 2147483647) {
      throw new RangeError('Cache.reserve: size must be a whole number of bytes from 0 to ' +
                           `2147483647 (SQLite's largest value); got ${typeName(size)}`);
    }
    const [ttl, tag] = setOptions('reserve', options);
    this._reserve.run(k, size, ttl, tag);
    return this;
  }

  // Writes data (a Buffer or Uint8Array) into key's value at offset, in
  // place: a use.  Returns the number of bytes written.  Throws if key has
  // no live entry or the bytes would pass the end of the value (a value
  // keeps the size it was set or reserved with).
  writeAt(key, offset, data) {
    const k = checkKey('writeAt', key);
    const o = checkOffset('writeAt', 'offset', offset);
    if (!(data instanceof Uint8Array)) {
      throw new TypeError(`Cache.writeAt: data must be a Buffer or a Uint8Array; got ${typeName(data)}`);
    }
    try {
      return Number(this._writeAt(k, o, blob(data)));
    } catch (e) {
      const m = String(e && e.message);
      if (m.startsWith('cache_write: ')) throw new Error(`Cache.writeAt: ${m.slice(13)}`);
      throw e;
    }
  }

  // Up to length bytes of key's value from offset, as a Buffer (shorter at
  // its end, empty past it), or undefined if key has no live entry: a use,
  // or a miss.  Only the pages holding those bytes are read.
  readAt(key, offset, length) {
    const v = this._readAt(checkKey('readAt', key), checkOffset('readAt', 'offset', offset),
                           checkOffset('readAt', 'length', length));
    return fromSql(v);
  }

  // Whether a live entry has key; not a use, not a hit or a miss.
  has(key) {
    return this._has(checkKey('has', key)) > 0;
  }

  // Removes key's entry; true if there was a live one.
  delete(key) {
    return this._delete.run(checkKey('delete', key)).changes > 0;
  }

  // Removes every entry of the tag; returns how many.
  evict(tag) {
    return this._evict.run(checkTag('evict', tag)).changes;
  }

  // Removes every entry, expired ones too; returns how many live ones.
  clear() {
    return this._savepoint(() => {
      const n = this._clear.run().changes;
      this._purge.run();
      return n;
    });
  }

  // The table's counters: capacity, entries, bytes, hits, misses,
  // evictions, expired (hits and misses null under fifo).
  stats() {
    const r = this._stats.get();
    return { capacity: r.capacity, entries: r.entries, bytes: r.bytes, hits: r.hits,
             misses: r.misses, evictions: r.evictions, expired: r.expired };
  }
}

module.exports = { Cache };
