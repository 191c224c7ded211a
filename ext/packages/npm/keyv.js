// sqlite-acorn/keyv: a Keyv storage adapter on acorn's cache table, so a
// Keyv cache keeps its bytes under a capacity and evicts the least recently
// used entries, in the application's SQLite file.
//
//   const Keyv = require('keyv');
//   const KeyvAcorn = require('sqlite-acorn/keyv');
//   const keyv = new Keyv({ store: new KeyvAcorn(db, { capacity: '64MiB' }) });
//
// The store keeps what Keyv gives it (its serialized strings) in a Cache
// (cache.js), one table for every namespace: an entry's tag is the
// namespace Keyv set on the store when it was written, so clear() removes
// only that namespace's entries (all of the table's when the namespace is
// unset).  Keyv's ttl (ms) is the entry's ttl; acorn expires it too, and
// its bytes count until a write to the table reclaims them.
//
// Keyv's adapter interface: get, getMany, set, setMany, delete, deleteMany,
// clear, has, hasMany, iterator (opts.dialect 'sqlite' tells Keyv there is
// one).  Each is a Promise over a synchronous call.  docs/node.md in acorn's
// repository specifies it.
'use strict';

const { EventEmitter } = require('node:events');
const { Cache } = require('./cache.js');

const STORE_OPTIONS = ['table'];

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

class KeyvAcorn extends EventEmitter {
  // db: a better-sqlite3 Database or a node:sqlite DatabaseSync, or a Cache
  // (then options must be empty).  options: table (default 'keyv') and any
  // option of Cache.
  constructor(db, options) {
    super();
    if (options !== undefined && options !== null &&
        (typeof options !== 'object' || Array.isArray(options))) {
      throw new TypeError('KeyvAcorn: options must be an object ({ table, capacity, ... })');
    }
    const opts = { table: 'keyv', ...(options || {}) };
    if (db instanceof Cache) {
      if (options && Object.keys(options).length) {
        throw new TypeError('KeyvAcorn: with a Cache, give no options: the Cache has its table ' +
                            `and settings; got ${Object.keys(options).join(', ')}`);
      }
      this.cache = db;
    } else {
      const cacheOptions = {};
      for (const k of Object.keys(opts)) {
        if (!STORE_OPTIONS.includes(k)) cacheOptions[k] = opts[k];
      }
      if (typeof opts.table !== 'string' || opts.table === '') {
        throw new TypeError('KeyvAcorn: option table must be the name of a cache table (a ' +
                            `non-empty string); got ${typeof opts.table}`);
      }
      this.cache = new Cache(db, opts.table, cacheOptions);
    }
    // Keyv reads opts.dialect (and url) to know that the store iterates.
    this.opts = { dialect: 'sqlite', url: 'sqlite-acorn', ...opts, table: this.cache.name };
    this.ttlSupport = true;
    this.namespace = undefined;
    const t = this.cache._t;
    this._all = this.cache.db.prepare(`SELECT key, value FROM ${t}`);
    this._tagged = this.cache.db.prepare(`SELECT key, value FROM ${t} WHERE tag = ?`);
  }

  _tag() {
    return typeof this.namespace === 'string' && this.namespace !== '' ? this.namespace : undefined;
  }

  async get(key) {
    return this.cache.get(key);
  }

  async getMany(keys) {
    return checkArray('getMany', keys, 'keys').map((k) => this.cache.get(k));
  }

  // ttl: ms from Keyv (undefined: none, or the table's default_ttl).
  async set(key, value, ttl) {
    this.cache.set(key, value, { ttl: typeof ttl === 'number' ? ttl : undefined, tag: this._tag() });
    return true;
  }

  // entries: [{ key, value, ttl }], in one transaction.
  async setMany(entries) {
    checkArray('setMany', entries, 'entries');
    const tag = this._tag();
    return this.cache._savepoint(() => entries.map(({ key, value, ttl }) => {
      this.cache.set(key, value, { ttl: typeof ttl === 'number' ? ttl : undefined, tag });
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
      const v = r.value instanceof Uint8Array && !Buffer.isBuffer(r.value)
        ? Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength) : r.value;
      yield [r.key, v];
    }
  }
}

module.exports = KeyvAcorn;
module.exports.KeyvAcorn = KeyvAcorn;
module.exports.default = KeyvAcorn;
