// sqlite-acorn/cache.js: acorn's cache virtual table as an object.
//
//   const cache = new Cache(db, 'thumbs', { capacity: '64MiB' });
//   cache.set('a.png', buf, { ttl: 60000, tag: 'user:1' });
//   cache.get('a.png');                 // the Buffer, or undefined
//   await cache.getOrSet('report', () => build());
//
// db is a better-sqlite3 Database or a node:sqlite DatabaseSync (opened with
// { allowExtension: true } if acorn is not loaded yet).  The constructor
// gives a file's connection WAL and a busy timeout (options journalMode and
// busyTimeout), as the Python and Ruby faces do: several processes on one
// file are the normal case.  Every other method is synchronous and runs one
// prepared statement of the table's (clear() and the settings of an
// existing table: a savepoint of a few), so a Cache costs what the SQL
// costs plus the checks of its arguments; getOrSet() is async, for the
// function it calls.
//
// Times are milliseconds, as everywhere in JavaScript (Date.now(), Keyv):
// set()'s ttl and the defaultTtl option.  The table takes seconds; a ttl is
// passed as ms/1000, which acorn rounds back to the same ms.
//
// VALUES follow the convention every face of acorn reads and writes
// (docs/cache.md, "Values across languages"): a string is TEXT, bytes a
// BLOB, a number or bigint an INTEGER or REAL, and what is not one of
// those a TEXT whose first byte is 0xFF (which no UTF-8 text starts with),
// then a letter: 'i' and the digits of an integer outside 64 bits, 'f' and
// 'nan', 'j' and the JSON of true, false, null or a plain object or array
// that JSON holds exactly.  'p' (a Python pickle), 'm' (a Ruby Marshal
// dump) and 'k' (a string of Keyv's own serializer) are read as errors
// that name them, never as a wrong value or a miss.  A marked value is
// bound as a Buffer and CAST to TEXT in SQL, and read back as a Buffer by
// a CAST to BLOB in SQL: both hosts turn TEXT that is not UTF-8 into
// U+FFFD, so its bytes never cross as a string.
//
// docs/node.md in acorn's repository specifies all of it.
'use strict';

const fs = require('node:fs');
const crypto = require('node:crypto');
const { threadId } = require('node:worker_threads');
const { load } = require('./load.js');

const TABLE_OPTIONS = ['capacity', 'policy', 'defaultTtl', 'maxEntries', 'feed', 'recencyBuffer',
                       'autoflush'];
const CONNECTION_OPTIONS = ['journalMode', 'busyTimeout'];
const OPTIONS = [...TABLE_OPTIONS, ...CONNECTION_OPTIONS];
const JOURNAL_MODES = ['wal', 'delete', 'truncate', 'persist', 'memory'];
const DEFAULT_BUSY_TIMEOUT = 5000;
const SET_OPTIONS = ['ttl', 'tag'];
const GET_OR_SET_OPTIONS = ['ttl', 'tag', 'lockTtl'];
const MEMOIZE_OPTIONS = ['key', 'name', 'ttl', 'tag', 'lockTtl'];
const DEFAULT_LOCK_TTL = 60000;
const MAX_TTL_MS = 1e15;            // the table's bound, 10^12 s
const TTL_RE = /^([0-9]+)([smhd]?)$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

// ------------------------------------------------------------ names

function typeName(v) {
  if (v === null) return 'null';
  if (Buffer.isBuffer(v)) return 'Buffer';
  if (Array.isArray(v)) return 'Array';
  if (typeof v === 'object') return v.constructor && v.constructor.name ? v.constructor.name : 'object';
  if (typeof v === 'number' || typeof v === 'bigint') return `${typeof v} ${String(v)}`;
  return typeof v;
}

// A key as a message shows it: a string quoted as JSON, bytes in hex.
function showKey(k) {
  if (typeof k === 'string') return JSON.stringify(k);
  if (k instanceof Uint8Array) return `x'${Buffer.from(k.buffer, k.byteOffset, k.byteLength).toString('hex')}'`;
  return String(k);
}

// "name" quoted as an SQL identifier, 'text' as an SQL string.
const ident = (s) => `"${s.replace(/"/g, '""')}"`;
const literal = (s) => `'${s.replace(/'/g, "''")}'`;

// Both hosts bind a Buffer as a BLOB; better-sqlite3 takes no other
// Uint8Array, so one is bound through a Buffer over the same memory.
function blob(v) {
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

// ------------------------------------------------------------ values

const MARK = 0xff;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = typeof String.prototype.isWellFormed === 'function'
  ? (s) => s.isWellFormed()
  : (s) => !LONE_SURROGATE.test(s);
const FLOAT_TEXT = /^-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;
const INT_TEXT = /^-?[0-9]+$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

// The other faces' marks: what a value Node cannot read is, who wrote it,
// and what to do.
const PORTABLE = 'a string, bytes, a number, or lists and maps that JSON holds exactly';
const FOREIGN = {
  p: { format: 'pickle', language: 'Python', what: 'a Python pickle',
       by: "Python's sqlite_acorn (a Cache with pickle=True, memoize or the Django backend)",
       then: `Node cannot read it; store it from Python as ${PORTABLE}` },
  m: { format: 'Marshal', language: 'Ruby', what: 'a Ruby Marshal dump',
       by: "Ruby's ActiveSupport store",
       then: `Node cannot read it; store it from Ruby as ${PORTABLE}` },
  k: { format: 'Keyv', language: 'JavaScript', what: 'a string serialized by Keyv',
       by: 'sqlite-acorn/keyv (a value the convention has no form for, or a serializer of its own)',
       then: 'read it through Keyv, with the same serializer' },
};

// An integer read as a bigint: a number when it is a safe integer.
function safeNumber(n) {
  return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n;
}

function marked(letter, payload) {
  return Buffer.concat([Buffer.from([MARK, letter.charCodeAt(0)]), Buffer.from(payload, 'utf8')]);
}

// What stops v from being stored as JSON that every language reads back
// exactly, as a phrase ("a Date at value.when"), or null if nothing does.
function jsonProblem(v, path, seen) {
  switch (typeof v) {
    case 'string':
      return wellFormed(v) ? null : `a string with a lone surrogate at ${path}`;
    case 'number':
      return Number.isFinite(v) ? null : `${v} at ${path}`;
    case 'boolean':
      return null;
    case 'object': {
      if (v === null) return null;
      if (seen.has(v)) return `a cycle at ${path}`;
      if (Object.getOwnPropertySymbols(v).length > 0) return `a Symbol key at ${path}`;
      const keys = Object.keys(v);
      let problem = null;
      seen.add(v);
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) {
          problem = `${typeName(v)} at ${path}`;
        } else if (keys.length !== v.length) {
          problem = `an array with holes or other properties at ${path}`;
        } else {
          for (let i = 0; i < v.length && problem === null; i++) {
            problem = jsonProblem(v[i], `${path}[${i}]`, seen);
          }
        }
      } else {
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) {
          problem = `${typeName(v)} at ${path}`;
        } else {
          for (let i = 0; i < keys.length && problem === null; i++) {
            const k = keys[i];
            problem = jsonProblem(v[k], /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`, seen);
          }
        }
      }
      seen.delete(v);
      return problem;
    }
    default:
      return `${typeName(v)} at ${path}`;
  }
}

const VALUES = 'a string, bytes (a Buffer or Uint8Array), a number, a bigint, true, false, null, or ' +
  'a plain object or array of strings, finite numbers, true, false and null';

// A value as it is bound: [the value to bind, whether it is marked].  A
// marked value is a Buffer that the SQL casts to TEXT.
function encodeValue(method, value) {
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value)) {
        const at = value.search(LONE_SURROGATE);
        throw new TypeError(`Cache.${method}: the string is not well-formed UTF-16 (a lone surrogate ` +
                            `at index ${at}): stored as UTF-8 it would read back changed, with U+FFFD ` +
                            'in its place; store it as bytes (a Buffer) if the code units matter');
      }
      return [value, false];
    case 'number':
      // better-sqlite3 and node:sqlite bind every number as a REAL; a
      // bigint is bound as an INTEGER.  -0 stays a REAL, keeping its sign.
      if (Number.isSafeInteger(value) && !Object.is(value, -0)) return [BigInt(value), false];
      if (Number.isNaN(value)) return [marked('f', 'nan'), true];
      return [value, false];
    case 'bigint':
      if (value >= INT64_MIN && value <= INT64_MAX) return [value, false];
      return [marked('i', value.toString()), true];
    case 'undefined':
      throw new TypeError(`Cache.${method}: value is undefined, which the cache cannot store (a get ` +
                          'gives undefined for a miss); store null, or delete the key');
    default:
      break;
  }
  if (value instanceof Uint8Array) return [blob(value), false];
  const problem = jsonProblem(value, 'value', new Set());
  if (problem === null) return [marked('j', JSON.stringify(value)), true];
  const got = problem.endsWith(' at value') ? problem.slice(0, -9)
    : `${typeName(value)} holding ${problem}`;
  throw new TypeError(`Cache.${method}: value must be ${VALUES}; got ${got} (serialize it first, ` +
                      'e.g. with v8.serialize() into a Buffer, which is stored as its bytes)');
}

function valueError(code, message, key, format, language) {
  const e = new Error(message);
  e.code = code;
  e.key = key;
  if (format !== undefined) e.format = format;
  if (language !== undefined) e.language = language;
  return e;
}

function corrupt(where, key, what) {
  return valueError('ACORN_CORRUPT_VALUE', `${where}: the value of ${showKey(key)} is marked ` +
                    `as ${what} but does not hold one`, key);
}

// A marked value's bytes (0xFF, a letter, the payload) as the value it
// stands for.  keyv: the letter k gives Keyv's string instead of an error.
function decodeMarked(where, key, bytes, keyv) {
  const letter = bytes.length > 1 ? String.fromCharCode(bytes[1]) : '';
  let text;
  if (letter === 'i' || letter === 'f' || letter === 'j' || (letter === 'k' && keyv)) {
    try {
      text = UTF8.decode(bytes.subarray(2));
    } catch {
      throw corrupt(where, key, `'${letter}'`);
    }
  }
  switch (letter) {
    case 'i': {
      if (!INT_TEXT.test(text)) throw corrupt(where, key, 'an integer');
      return safeNumber(BigInt(text));
    }
    case 'f':
      if (text === 'nan') return NaN;
      if (text === 'inf') return Infinity;
      if (text === '-inf') return -Infinity;
      if (!FLOAT_TEXT.test(text)) throw corrupt(where, key, 'a float');
      return Number(text);
    case 'j':
      try {
        return JSON.parse(text);
      } catch {
        throw corrupt(where, key, 'JSON');
      }
    default: {
      if (letter === 'k' && keyv) return text;
      const f = FOREIGN[letter];
      if (f === undefined) {
        throw valueError('ACORN_FOREIGN_VALUE', `${where}: the value of ${showKey(key)} starts ` +
                         `with the byte 0xFF and then ${JSON.stringify(letter)}, a format this version of ` +
                         'sqlite-acorn does not know: a newer acorn wrote it', key, letter, undefined);
      }
      throw valueError('ACORN_FOREIGN_VALUE', `${where}: the value of ${showKey(key)} is ` +
                       `${f.what}, written by ${f.by}; ${f.then}`, key, f.format, f.language);
    }
  }
}

// A value as the SQL gave it (v, and m: whether it is marked, its bytes
// cast to a BLOB), or undefined for a miss.  Integers are read as
// bigints, and given back as numbers when they are safe.
function decodeValue(where, key, v, m, keyv) {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'bigint') return safeNumber(v);
  if (typeof v === 'string' || typeof v === 'number') return v;
  if (v instanceof Uint8Array) {
    const b = blob(v);
    return m === 1n || m === 1 ? decodeMarked(where, key, b, keyv) : b;
  }
  return v;
}

// v as a get reads it back: a bigint that is a safe integer as a number,
// bytes as a Buffer.
function asRead(v) {
  if (typeof v === 'bigint') return safeNumber(v);
  if (v instanceof Uint8Array) return blob(v);
  return v;
}

// The SELECT list that reads a value v with its marked bytes as a BLOB.
function valueColumns(v) {
  const isMarked = `(typeof(${v}) = 'text' AND ${v} >= CAST(x'ff' AS TEXT))`;
  return `CASE WHEN ${isMarked} THEN CAST(${v} AS BLOB) ELSE ${v} END AS v, ${isMarked} AS m`;
}

// ------------------------------------------------------------ arguments

function checkKey(method, key) {
  if (typeof key === 'string') return key;
  if (typeof key === 'number' && Number.isSafeInteger(key)) return key;
  if (typeof key === 'bigint' && key >= INT64_MIN && key <= INT64_MAX) return key;
  if (key instanceof Uint8Array) return blob(key);
  throw new TypeError(`Cache.${method}: key must be a string, a Buffer or Uint8Array, or an ` +
                      `integer (a safe-integer number or a 64-bit bigint); got ${typeName(key)}`);
}

function checkTag(method, tag) {
  if (typeof tag !== 'string') {
    throw new TypeError(`Cache.${method}: tag must be a string; got ${typeName(tag)}`);
  }
  return tag;
}

// A time in ms, for set()'s ttl.
function checkTtl(method, ttl, name = 'ttl', what = "undefined for the table's defaultTtl") {
  if (ttl === undefined || ttl === null) return null;
  if (typeof ttl !== 'number' || !(ttl > 0 && ttl <= MAX_TTL_MS)) {
    throw new RangeError(`Cache.${method}: ${name} must be a number of milliseconds greater than 0 and ` +
                         `at most ${MAX_TTL_MS}, or ${what}; got ${typeName(ttl)}`);
  }
  return ttl / 1000;
}

// An options object of a method: its keys checked against allowed.
function checkOptions(method, options, allowed) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`Cache.${method}: options must be an object ({ ${allowed.join(', ')} }); ` +
                        `got ${typeName(options)}`);
  }
  for (const o of Object.keys(options)) {
    if (!allowed.includes(o)) {
      const list = `${allowed.slice(0, -1).join(', ')} and ${allowed[allowed.length - 1]}`;
      throw new TypeError(`Cache.${method}: unknown option '${o}'; accepted options are ${list}`);
    }
  }
  return options;
}

// set()'s and reserve()'s options: [ttl in seconds or null, tag or null].
function setOptions(method, options, allowed = SET_OPTIONS) {
  const o = checkOptions(method, options, allowed);
  const ttl = checkTtl(method, o.ttl);
  const tag = o.tag !== undefined && o.tag !== null ? checkTag(method, o.tag) : null;
  return [ttl, tag];
}

function lockTtlOption(method, o) {
  const s = checkTtl(method, o.lockTtl, 'lockTtl', `undefined for ${DEFAULT_LOCK_TTL}`);
  return s === null ? DEFAULT_LOCK_TTL / 1000 : s;
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

// The options, checked: the cache module's arguments (name -> SQL text)
// and the connection's settings.
function tableArgs(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`Cache: options must be an object; got ${typeName(options)}`);
  }
  const args = {};
  const conn = { journalMode: 'wal', busyTimeout: DEFAULT_BUSY_TIMEOUT };
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
      case 'journalMode':
        if (v !== null && !JOURNAL_MODES.includes(v)) {
          throw new TypeError(`Cache: option journalMode must be ${JOURNAL_MODES.map((m) => `'${m}'`).join(', ')} ` +
                              `or null (the file's, unchanged); got ${typeName(v)}`);
        }
        conn.journalMode = v;
        break;
      case 'busyTimeout':
        if (v !== null) wholeNumber('busyTimeout', v, 0, 2147483647, 'of milliseconds');
        conn.busyTimeout = v;
        break;
    }
  }
  return [args, conn];
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

// A statement that reads INTEGERs as bigints, exactly.
function prepareExact(db, sql) {
  const st = db.prepare(sql);
  if (typeof st.safeIntegers === 'function') st.safeIntegers(true);
  else st.setReadBigInts(true);
  return st;
}

function tooBig(e) {
  return /^cache: entry of [0-9]+ bytes exceeds capacity/.test(String(e && e.message));
}

// ------------------------------------------------------------ locks

// getOrSet()'s lock entry: its key is this prefix and the value's key (as
// the Python face's memoize makes its lock keys), its value the holder's
// token, "host pid start thread-random": the host is this boot and pid
// namespace, so that a holder that died on this machine is seen dead at
// once by its pid and start time.
const LOCK_PREFIX = Buffer.from('\0lock');
// The lock's value after a result too large to keep: for lockTtl every
// caller computes at once instead of waiting for a value that never comes.
const UNSTORABLE = Buffer.from('\0unstorable');

let hostIdOnce;
function hostId() {
  if (hostIdOnce === undefined) {
    try {
      const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
      const ns = fs.statSync('/proc/self/ns/pid', { bigint: true }).ino;
      hostIdOnce = `${boot}/${ns}`;
    } catch {
      hostIdOnce = '';
    }
  }
  return hostIdOnce;
}

// The start time of process pid (clock ticks after boot, as text), or null
// if it is gone or a zombie.
function startTime(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  return fields[19];
}

function lockKey(k) {
  if (Buffer.isBuffer(k)) return Buffer.concat([LOCK_PREFIX, k]);
  return Buffer.concat([LOCK_PREFIX, Buffer.from(String(k), 'utf8')]);
}

function newToken() {
  const host = hostId();
  const start = host ? startTime(process.pid) : null;
  return Buffer.from(`${host || '-'} ${process.pid} ${start || 0} ${threadId}-` +
                     crypto.randomBytes(8).toString('hex'), 'latin1');
}

// Whether a lock token names a process of this machine that is gone.
function holderDead(token) {
  const m = /^(\S+) ([0-9]+) ([0-9]+) /.exec(token.toString('latin1'));
  const host = hostId();
  if (m === null || !host || m[1] !== host) return false;
  return startTime(m[2]) !== m[3];
}

// ------------------------------------------------------------ the cache

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
    const [args, conn] = tableArgs(options);
    const dot = name.indexOf('.');
    const schema = dot > 0 ? name.slice(0, dot) : 'main';
    const table = dot > 0 ? name.slice(dot + 1) : name;
    this.db = db;
    this.name = name;
    const t = dot > 0 ? `${ident(schema)}.${ident(table)}` : ident(table);

    ensureLoaded(db);
    const encoding = prepareScalar(db, 'PRAGMA encoding')();
    if (encoding !== 'UTF-8') {
      throw new Error(`Cache: the database is ${encoding}; a cache table's values need UTF-8 (what a ` +
                      'new file gets), so that every language reads the same text');
    }
    this._connection(schema, conn);
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
    const put = `INSERT INTO ${t}(key, value, ttl, expires, tag)`;
    this._get = prepareExact(db, `SELECT ${valueColumns('v')} FROM (SELECT cache_get(${q}, ?) AS v)`);
    this._has = prepareScalar(db, `SELECT count(*) FROM ${t} WHERE key = ?`);
    this._stats = db.prepare(`SELECT * FROM cache_stats(${q})`);
    this._set = db.prepare(`${put} VALUES (?, ?, ?, ?, ?)`);
    this._setMarked = db.prepare(`${put} VALUES (?, CAST(? AS TEXT), ?, ?, ?)`);
    this._add = db.prepare(`INSERT OR IGNORE INTO ${t}(key, value, ttl) VALUES (?, ?, ?)`);
    this._delete = db.prepare(`DELETE FROM ${t} WHERE key = ?`);
    this._release = db.prepare(`DELETE FROM ${t} WHERE key = ? AND value = ?`);
    this._evict = db.prepare(`DELETE FROM ${t} WHERE tag = ?`);
    this._clear = db.prepare(`DELETE FROM ${t}`);
    this._purge = db.prepare(`INSERT INTO ${t}(${ident(table)}) VALUES ('purge')`);
    this._reserve = db.prepare(`INSERT INTO ${t}(key, value, ttl, tag) VALUES (?, zeroblob(?), ?, ?)`);
    this._writeAt = prepareScalar(db, `SELECT cache_write(${q}, ?, ?, ?)`);
    this._readAt = prepareScalar(db, `SELECT cache_read(${q}, ?, ?, ?)`);
    this._t = t;
  }

  // The connection's settings for several processes: a busy timeout of at
  // least busyTimeout ms, and the journal mode of the table's database
  // file (not of :memory: or a temporary one).  A read-only connection
  // cannot change the mode and needs none for its reads: it keeps the
  // file's.
  _connection(schema, { journalMode, busyTimeout }) {
    const one = (sql) => prepareScalar(this.db, sql)();
    if (busyTimeout !== null && Number(one('PRAGMA busy_timeout')) < busyTimeout) {
      this.db.exec(`PRAGMA busy_timeout = ${busyTimeout}`);
    }
    if (journalMode === null) return;
    const s = ident(schema);
    const file = one(`SELECT file FROM pragma_database_list WHERE name = ${literal(schema)}`);
    if (!file || one(`PRAGMA ${s}.journal_mode`) === journalMode) return;
    let now;
    try {
      now = one(`PRAGMA ${s}.journal_mode = ${journalMode}`);
    } catch (e) {
      if (/readonly|read-only/.test(String(e && e.message))) return;
      throw new Error(`Cache: cannot set journal_mode = ${journalMode} on ${file} (${e && e.message}); ` +
                      "pass journalMode: null to leave the file's journal mode");
    }
    if (now !== journalMode) {
      throw new Error(`Cache: cannot set journal_mode = ${journalMode} on ${file}: it stays ${now}; ` +
                      "pass journalMode: null to leave the file's journal mode");
    }
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

  // A get of the checked key k: its value by the convention, or undefined.
  _read(method, k) {
    const r = this._get.get(k);
    return decodeValue(`Cache.${method}`, k, r.v, r.m, false);
  }

  // A set of the checked key k: value by the convention, ttl in seconds or
  // expires in unix ms (at most one), tag.
  _put(method, k, value, ttl, expires, tag) {
    const [v, isMarked] = encodeValue(method, value);
    this._store(k, v, isMarked, ttl, expires, tag);
  }

  // A set of what encodeValue() gives.
  _store(k, v, isMarked, ttl, expires, tag) {
    (isMarked ? this._setMarked : this._set).run(k, v, ttl, expires, tag === undefined ? null : tag);
  }

  // The value, or undefined: a get, counted as a hit or a miss, and a use
  // of the entry.  Throws (e.code 'ACORN_FOREIGN_VALUE') for a value only
  // another language reads.
  get(key) {
    return this._read('get', checkKey('get', key));
  }

  // Stores value under key (replacing what it held); options.ttl in ms,
  // options.tag a string.  Returns the cache.
  set(key, value, options) {
    const k = checkKey('set', key);
    const [ttl, tag] = setOptions('set', options);
    this._put('set', k, value, ttl, null, tag);
    return this;
  }

  // The value of key; on a miss, fn's (sync or async), stored with
  // options.ttl and options.tag.  One caller of every process on the file
  // runs fn while the others wait for its value: it holds a lock entry for
  // at most options.lockTtl ms, or until its process dies on this machine.
  async getOrSet(key, fn, options) {
    const k = checkKey('getOrSet', key);
    if (typeof fn !== 'function') {
      throw new TypeError(`Cache.getOrSet: fn must be a function (sync or async) that gives the value; got ${typeName(fn)}`);
    }
    const o = checkOptions('getOrSet', options, GET_OR_SET_OPTIONS);
    const [ttl, tag] = setOptions('getOrSet', { ttl: o.ttl, tag: o.tag });
    const lockTtl = lockTtlOption('getOrSet', o);
    const v = this._read('getOrSet', k);
    if (v !== undefined) return v;
    return this._compute(k, fn, ttl, tag, lockTtl);
  }

  // fn wrapped: its calls go through getOrSet(), under the key that
  // options.key(...args) gives (by default 'memo:' + options.name, or fn's
  // name, + ':' + the arguments as JSON).
  memoize(fn, options) {
    if (typeof fn !== 'function') {
      throw new TypeError(`Cache.memoize: fn must be a function; got ${typeName(fn)}`);
    }
    const o = checkOptions('memoize', options, MEMOIZE_OPTIONS);
    if (o.key !== undefined && typeof o.key !== 'function') {
      throw new TypeError(`Cache.memoize: option key must be a function of the arguments that gives the key; got ${typeName(o.key)}`);
    }
    const name = o.name !== undefined ? o.name : fn.name;
    if (o.key === undefined && (typeof name !== 'string' || name === '')) {
      throw new TypeError('Cache.memoize: an anonymous function needs option name (a string) or option key ' +
                          `(a function of the arguments); got name ${typeName(name)}`);
    }
    setOptions('memoize', { ttl: o.ttl, tag: o.tag });
    lockTtlOption('memoize', o);
    const given = { ttl: o.ttl, tag: o.tag, lockTtl: o.lockTtl };
    const keyOf = o.key !== undefined ? o.key : (...args) => {
      const problem = jsonProblem(args, 'arguments', new Set());
      if (problem !== null) {
        throw new TypeError(`Cache.memoize: the arguments of ${name} make no key: ${problem} is not ` +
                            'exact in JSON; give option key, a function of the arguments that gives the key');
      }
      return `memo:${name}:${JSON.stringify(args)}`;
    };
    const cache = this;
    return async function memoized(...args) {
      return cache.getOrSet(keyOf(...args), () => fn.apply(this, args), given);
    };
  }

  // Waits ms before a waiting getOrSet() looks again (a method, so that a
  // test can see a caller start waiting).
  _pause(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  async _compute(k, fn, ttl, tag, lockTtl) {
    if (this.db.inTransaction === true || this.db.isTransaction === true) {
      throw new Error('Cache.getOrSet: the connection is inside a transaction; its lock entry would ' +
                      'be seen by no other process until the transaction commits (call it outside one)');
    }
    const lock = lockKey(k);
    const token = newToken();
    let wait = 1;
    for (;;) {
      // set if absent; SQLite counts a row that an INSERT OR IGNORE into
      // a virtual table ignored as a change too, so the lock's value says
      // whose it is
      this._add.run(lock, token, lockTtl);
      const holder = this._read('getOrSet', lock);
      if (Buffer.isBuffer(holder) && holder.equals(token)) {
        try {
          // another caller may have stored it between the miss and the lock
          let v = this._read('getOrSet', k);
          if (v !== undefined) return v;
          v = await fn();
          if (v === undefined) {
            throw new TypeError('Cache.getOrSet: fn gave undefined, which the cache cannot store (a ' +
                                'get gives undefined for a miss); give null for "nothing"');
          }
          try {
            this._put('getOrSet', k, v, ttl, null, tag);
          } catch (e) {
            if (!tooBig(e)) throw e;
            this._set.run(lock, UNSTORABLE, lockTtl, null, null);
          }
          return asRead(v);
        } finally {
          this._release.run(lock, token);
        }
      }
      if (Buffer.isBuffer(holder)) {
        if (holder.equals(UNSTORABLE)) return asRead(await fn());
        if (holderDead(holder)) {
          this._release.run(lock, holder);
          continue;
        }
      }
      await this._pause(wait);
      wait = Math.min(wait * 2, 50);
      const v = this._read('getOrSet', k);
      if (v !== undefined) return v;
    }
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
    // a BLOB of the stored bytes, whatever the value is (node:sqlite gives
    // a plain Uint8Array)
    return v === null || v === undefined ? undefined : blob(v);
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
// For the Keyv store (keyv.js): the value convention and its checks.
module.exports._values = { encodeValue, decodeValue, asRead, valueColumns, marked, wellFormed, checkKey, checkTtl,
                           typeName, prepareExact, valueError, showKey, OPTIONS };
