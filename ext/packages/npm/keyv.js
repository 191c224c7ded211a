// sqlite-acorn/keyv: a Keyv storage adapter on acorn's cache table, so a
// Keyv cache keeps its bytes under a capacity and evicts the least recently
// used entries, in the application's SQLite file.
//
//   const Keyv = require('keyv');
//   const KeyvAcorn = require('sqlite-acorn/keyv');
//   const keyv = new Keyv({ store: new KeyvAcorn('sqlite://cache.db', { capacity: '64MiB' }) });
//
// The store is a Cache (cache.js) on one table for every namespace: an
// entry's tag is the namespace Keyv set on the store when it was written,
// so clear() removes only that namespace's entries (all of the table's
// when the namespace is unset).
//
// VALUES.  Keyv hands the store a string its serializer made.  The default
// one makes {"value":...,"expires":...} with strings that start with ':'
// escaped as '::' and Buffers as ':base64:...'.  set() parses the string;
// when it is exactly that form (the parsed object serialized again gives
// the same string) and its value has a form in the convention every face
// of acorn follows (docs/cache.md, "Values across languages"), the VALUE
// is stored by the convention, with Keyv's expires as the entry's, so
// Python, Ruby and SQL read it.  Any other string is stored whole, as TEXT
// marked 0xFF 'k'.  get() gives a 'k' string back as it was, and any other
// value (Keyv's, or one another language wrote) as the string the default
// serializer makes of { value, expires } with the entry's expires.
//
// Keyv's adapter interface: get, getMany, set, setMany, delete, deleteMany,
// clear, has, hasMany, iterator (opts.dialect 'sqlite' tells Keyv there is
// one), disconnect.  Each is a Promise over a synchronous call.
// docs/node.md in acorn's repository specifies it.
'use strict';

const { EventEmitter } = require('node:events');
const { Cache, _values } = require('./cache.js');

const { encodeValue, decodeValue, valueColumns, marked, wellFormed, checkKey, checkTtl, typeName,
        prepareExact, valueError, showKey, asRead } = _values;
const STORE_OPTIONS = ['table', 'uri', 'driver'];
const OPTIONS = [...STORE_OPTIONS, ..._values.OPTIONS];
const DRIVERS = ['better-sqlite3', 'node:sqlite'];

// ------------------------------------------------------------ Keyv's JSON

// @keyv/serialize's defaultSerialize (keyv 5's default serializer),
// written out: what Keyv stores when it is given no serializer.
function serialize(data, escapeColonStrings) {
  if (data === undefined || data === null) return 'null';
  if (typeof data === 'string') {
    return JSON.stringify(escapeColonStrings && data.startsWith(':') ? `:${data}` : data);
  }
  if (Buffer.isBuffer(data)) return JSON.stringify(`:base64:${data.toString('base64')}`);
  if (data?.toJSON) data = data.toJSON();
  if (typeof data === 'object') {
    const array = Array.isArray(data);
    let s = array ? '[' : '{';
    let first = true;
    for (const k in data) {
      const ignore = typeof data[k] === 'function' || (!array && data[k] === undefined);
      if (!Object.hasOwn(data, k) || ignore) continue;
      if (!first) s += ',';
      first = false;
      if (array) s += serialize(data[k], escapeColonStrings);
      else if (data[k] !== undefined) s += `${serialize(k, false)}:${serialize(data[k], escapeColonStrings)}`;
    }
    return s + (array ? ']' : '}');
  }
  return JSON.stringify(data);
}

const keyvSerialize = (data) => serialize(data, true);

// @keyv/serialize's defaultDeserialize.
function keyvDeserialize(text) {
  return JSON.parse(text, (_, value) => {
    if (typeof value === 'string') {
      if (value.startsWith(':base64:')) return Buffer.from(value.slice(8), 'base64');
      return value.startsWith(':') ? value.slice(1) : value;
    }
    return value;
  });
}

// Keyv's string as [the value bound, marked, expires] when it is the
// default serializer's { value, expires } and the value has a form in the
// convention; else undefined.
function native(text) {
  let data;
  try {
    data = keyvDeserialize(text);
  } catch {
    return undefined;
  }
  if (data === null || typeof data !== 'object' || Object.getPrototypeOf(data) !== Object.prototype) {
    return undefined;
  }
  const keys = Object.keys(data);
  const hasExpires = keys.length === 2 && keys[1] === 'expires';
  if (keys[0] !== 'value' || !(keys.length === 1 || hasExpires)) return undefined;
  if (hasExpires && !(Number.isSafeInteger(data.expires) && data.expires > 0)) return undefined;
  try {
    if (keyvSerialize(data) !== text) return undefined;
    const [v, isMarked] = encodeValue('set', data.value);
    return [v, isMarked, hasExpires ? data.expires : null];
  } catch {
    return undefined;
  }
}

// What get() gives for a stored value (decoded by the convention): a 'k'
// string as it is, any other value as the default serializer's string.
function keyvString(where, key, value, expires) {
  let wrong;
  if (typeof value === 'number' && !Number.isFinite(value)) wrong = 'null';
  else if (typeof value === 'bigint') wrong = String(Number(value));
  if (wrong !== undefined) {
    throw valueError('ACORN_KEYV_INEXACT', `${where}: the value of ${showKey(key)} is the number ` +
                     `${value}${typeof value === 'bigint' ? 'n' : ''}, which Keyv's JSON cannot hold ` +
                     `(it would read ${wrong}); read it with sqlite-acorn's Cache`, key);
  }
  return keyvSerialize(expires === null ? { value } : { value, expires: Number(expires) });
}

// A row of the table (v, m: its value and whether it is marked; expires)
// as the string get() gives, or undefined for none.
function fromRow(where, key, r) {
  if (r === undefined || r.v === null) return undefined;
  if ((r.m === 1n || r.m === 1) && r.v[1] === 0x6b) {       // 'k'
    return decodeValue(where, key, r.v, r.m, true);
  }
  return keyvString(where, key, decodeValue(where, key, r.v, r.m, false), r.expires);
}

// ------------------------------------------------------------ arguments

// The keys (or entries) of a many-method: an array, or a TypeError that
// names the method (a string is iterable, and would be taken letter by
// letter).
function checkArray(method, v, what) {
  if (!Array.isArray(v)) {
    const got = v === null ? 'null' : Buffer.isBuffer(v) ? 'Buffer' : typeof v;
    throw new TypeError(`KeyvAcorn.${method}: ${what} must be an array; got ${got}`);
  }
  return v;
}

// 'sqlite://path' (as @keyv/sqlite takes it) or a path: the path.
function pathOf(uri) {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(uri);
  if (scheme !== null && scheme[1] !== 'sqlite') {
    throw new TypeError(`KeyvAcorn: a URI must start with sqlite:// (sqlite://path/to/file.db); got ${scheme[1]}://`);
  }
  const path = scheme !== null ? uri.slice(9) : uri;
  if (path === '') throw new TypeError("KeyvAcorn: the path is empty; give a file's path, or ':memory:'");
  return path;
}

// A connection of the store's own to path: better-sqlite3 if the
// application can load it (or driver says so), else node:sqlite.
function open(path, driver) {
  if (driver !== 'node:sqlite') {
    let Database;
    try {
      Database = require('better-sqlite3');
    } catch (e) {
      const missing = e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes("'better-sqlite3'");
      if (!missing || driver === 'better-sqlite3') {
        throw new Error(`KeyvAcorn: better-sqlite3 cannot be loaded (${e && e.message ? e.message.split('\n')[0] : e})` +
                        (driver === undefined ? "; pass driver: 'node:sqlite' to use Node's own" : ''));
      }
    }
    if (Database !== undefined) return new Database(path);
  }
  let DatabaseSync;
  try {
    ({ DatabaseSync } = require('node:sqlite'));
  } catch {
    throw new Error(`KeyvAcorn: opening ${path} needs better-sqlite3 (npm install better-sqlite3) or ` +
                    `node:sqlite (Node 22.13 and later); this is Node ${process.versions.node} without it`);
  }
  return new DatabaseSync(path, { allowExtension: true });
}

// ------------------------------------------------------------ the store

class KeyvAcorn extends EventEmitter {
  // target: a path or 'sqlite://path' (opened here, closed by
  // disconnect()), a better-sqlite3 Database or a node:sqlite DatabaseSync,
  // a Cache (then options must be empty), or @keyv/sqlite's options object
  // { uri, table, busyTimeout }.  options: table (default 'keyv'), driver
  // (for a path) and any option of Cache.
  constructor(target, options) {
    super();
    if (options !== undefined && options !== null &&
        (typeof options !== 'object' || Array.isArray(options))) {
      throw new TypeError('KeyvAcorn: options must be an object ({ table, capacity, ... })');
    }
    if (target instanceof Cache) {
      if (options && Object.keys(options).length) {
        throw new TypeError('KeyvAcorn: with a Cache, give no options: the Cache has its table ' +
                            `and settings; got ${Object.keys(options).join(', ')}`);
      }
      this.cache = target;
      this._own = false;
      this.opts = { dialect: 'sqlite', url: 'sqlite-acorn', table: this.cache.name };
    } else {
      let opts = { table: 'keyv', ...(options || {}) };
      if (target !== null && typeof target === 'object' && typeof target.prepare !== 'function' &&
          Object.getPrototypeOf(target) === Object.prototype) {
        opts = { table: 'keyv', ...target, ...(options || {}) };       // { uri, ... }
        if (typeof opts.uri !== 'string') {
          throw new TypeError('KeyvAcorn: options without a database need uri (sqlite://path); got ' +
                              typeName(opts.uri));
        }
        target = opts.uri;
      } else if (opts.uri !== undefined) {
        throw new TypeError('KeyvAcorn: option uri goes with no database (new KeyvAcorn({ uri }) or new ' +
                            "KeyvAcorn('sqlite://path')); this one was given a database");
      }
      for (const k of Object.keys(opts)) {
        if (!OPTIONS.includes(k)) {
          throw new TypeError(`KeyvAcorn: unknown option '${k}'; accepted options are ${OPTIONS.join(', ')}`);
        }
      }
      if (typeof opts.table !== 'string' || opts.table === '') {
        throw new TypeError('KeyvAcorn: option table must be the name of a cache table (a ' +
                            `non-empty string); got ${typeof opts.table}`);
      }
      if (opts.driver !== undefined && !DRIVERS.includes(opts.driver)) {
        throw new TypeError(`KeyvAcorn: option driver must be 'better-sqlite3' or 'node:sqlite'; got ${typeName(opts.driver)}`);
      }
      const cacheOptions = {};
      for (const k of Object.keys(opts)) {
        if (!STORE_OPTIONS.includes(k)) cacheOptions[k] = opts[k];
      }
      let db = target;
      this._own = typeof target === 'string';
      if (this._own) {
        const path = pathOf(target);
        db = open(path, opts.driver);
        try {
          // a connection of the store's own, as the Python and Ruby faces'
          db.exec('PRAGMA synchronous = NORMAL');
          this.cache = new Cache(db, opts.table, cacheOptions);
        } catch (e) {
          db.close();
          throw e;
        }
        if (opts.uri === undefined) opts.uri = target;
      } else {
        if (opts.driver !== undefined) {
          throw new TypeError('KeyvAcorn: option driver goes with a path, for the connection the store opens; ' +
                              'this one was given a database');
        }
        this.cache = new Cache(db, opts.table, cacheOptions);
      }
      // Keyv reads opts.dialect (and url) to know that the store iterates.
      this.opts = { dialect: 'sqlite', url: 'sqlite-acorn', ...opts, table: this.cache.name };
    }
    this.ttlSupport = true;
    this.namespace = undefined;
    const t = this.cache._t;
    const db = this.cache.db;
    const cols = `${valueColumns('value')}, expires`;
    this._get = prepareExact(db, `SELECT ${cols} FROM ${t} WHERE key = ?`);
    this._all = prepareExact(db, `SELECT key, ${cols} FROM ${t}`);
    this._tagged = prepareExact(db, `SELECT key, ${cols} FROM ${t} WHERE tag = ?`);
    this._closed = false;
  }

  _tag() {
    return typeof this.namespace === 'string' && this.namespace !== '' ? this.namespace : undefined;
  }

  _read(method, key) {
    const k = checkKey(method, key);
    return fromRow(`KeyvAcorn.${method}`, k, this._get.get(k));
  }

  // Keyv catches what a store's get throws and answers a miss without a
  // word: a value it cannot read is also an 'error' event, which Keyv
  // passes on as its own.
  async get(key) {
    try {
      return this._read('get', key);
    } catch (e) {
      if (e && typeof e.code === 'string' && e.code.startsWith('ACORN_') && this.listenerCount('error') > 0) {
        this.emit('error', e);
      }
      throw e;
    }
  }

  async getMany(keys) {
    return checkArray('getMany', keys, 'keys').map((k) => this._read('getMany', k));
  }

  _set(method, key, value, ttl, tag) {
    if (typeof value !== 'string') {
      throw new TypeError(`KeyvAcorn.${method}: value must be the string Keyv's serializer made; got ` +
                          `${typeName(value)} (Keyv with serialize: undefined hands a store objects, ` +
                          'which this store does not take)');
    }
    const k = checkKey(method, key);
    const ttlS = checkTtl(method, typeof ttl === 'number' ? ttl : undefined);
    const n = native(value);
    if (n !== undefined) {
      const [v, isMarked, expires] = n;
      this.cache._store(k, v, isMarked, expires === null ? ttlS : null, expires, tag);
      return;
    }
    if (!wellFormed(value)) {
      throw new TypeError(`KeyvAcorn.${method}: the serialized string is not well-formed UTF-16 (it has a ` +
                          'lone surrogate): stored as UTF-8 it would read back changed');
    }
    this.cache._store(k, marked('k', value), true, ttlS, null, tag);
  }

  // ttl: ms from Keyv (undefined: none, or the table's default_ttl).
  async set(key, value, ttl) {
    this._set('set', key, value, ttl, this._tag());
    return true;
  }

  // entries: [{ key, value, ttl }], in one transaction.
  async setMany(entries) {
    checkArray('setMany', entries, 'entries');
    const tag = this._tag();
    return this.cache._savepoint(() => entries.map(({ key, value, ttl }) => {
      this._set('setMany', key, value, ttl, tag);
      return true;
    }));
  }

  async delete(key) {
    return this.cache.delete(key);
  }

  // True if any of the keys had a live entry (as @keyv/sqlite's).
  async deleteMany(keys) {
    checkArray('deleteMany', keys, 'keys');
    return this.cache._savepoint(() => {
      let n = 0;
      for (const k of keys) if (this.cache.delete(k)) n += 1;
      return n > 0;
    });
  }

  // This namespace's entries, or every entry when there is none.
  async clear() {
    const tag = this._tag();
    if (tag === undefined) this.cache.clear();
    else this.cache.evict(tag);
  }

  async has(key) {
    return this.cache.has(key);
  }

  async hasMany(keys) {
    return checkArray('hasMany', keys, 'keys').map((k) => this.cache.has(k));
  }

  // [key, value] of the namespace's live entries (every entry without one),
  // read at the first next() in one statement: Keyv deletes expired entries
  // while it iterates, which a statement still open on better-sqlite3's
  // connection would refuse.  Reading them is a use of each.
  async* iterator(namespace) {
    const tag = typeof namespace === 'string' && namespace !== '' ? namespace : this._tag();
    const rows = tag === undefined ? this._all.all() : this._tagged.all(tag);
    for (const r of rows) {
      const key = asRead(r.key);
      yield [key, fromRow('KeyvAcorn.iterator', key, r)];
    }
  }

  // Closes the connection the store opened (from a path or URI); a
  // database it was given stays open, its owner's to close.
  async disconnect() {
    if (this._own && !this._closed) {
      this._closed = true;
      this.cache.db.close();
    }
  }
}

module.exports = KeyvAcorn;
module.exports.KeyvAcorn = KeyvAcorn;
module.exports.default = KeyvAcorn;
