// The installed sqlite-acorn npm package, used as a user would.
// Usage (from the project it is installed in):
//   node npm_test.js better-sqlite3   load(db) into better-sqlite3
//   node npm_test.js node:sqlite      load(db) into node:sqlite (Node 22.13+)
//   node npm_test.js platform         the error on a platform without a binary
// Prints "PASS npm-<mode> ..." or "FAIL npm-<mode>: reason"; exits 0 or 1.
'use strict';

const path = require('node:path');
const assert = require('node:assert/strict');

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const acorn = require('sqlite-acorn');
const pkg = require('sqlite-acorn/package.json');

// The same calls on either host: both have prepare(sql).get(...)/.run(...),
// and bind a JS number as REAL; acorn takes whole-number REALs wherever it
// wants an integer, so plain numbers go everywhere.
function exercise(db, host) {
  const one = (sql, ...args) => Object.values(db.prepare(sql).get(...args))[0];
  const p = acorn.getLoadablePath();
  assert.ok(path.isAbsolute(p), `getLoadablePath() ${p} is not absolute`);
  assert.equal(path.basename(p), 'acorn.so');
  acorn.load(db);

  const a = one('SELECT uuid7()');
  const b = one('SELECT uuid7()');
  assert.match(a, V7, `uuid7() returned ${a}`);
  assert.ok(a < b, `uuid7() not increasing: ${a} then ${b}`);
  assert.equal(one('SELECT acorn_version()'), `v${pkg.version}`,
               'acorn_version() against package.json');

  db.exec("CREATE VIRTUAL TABLE c USING cache(capacity = '1MiB')");
  const expires = Date.now() + 3600 * 1000;
  db.prepare('INSERT INTO c(key, value, expires) VALUES (?, ?, ?)')
    .run('greeting', Buffer.from('hello, world'), expires);
  const got = one('SELECT value FROM c WHERE key = ?', 'greeting');
  assert.equal(Buffer.from(got).toString(), 'hello, world', 'cache get');
  assert.equal(Buffer.from(one("SELECT cache_read('c', ?, ?, ?)", 'greeting', 7, 5)).toString(),
               'world', 'cache_read');
  assert.equal(Number(one('SELECT expires FROM c WHERE key = ?', 'greeting')), expires);
  assert.equal(one('SELECT typeof(expires) FROM c WHERE key = ?', 'greeting'), 'integer');
  db.prepare('INSERT INTO c(key, value) VALUES (?, ?)').run(42, Buffer.from('n'));
  assert.equal(one('SELECT typeof(key) FROM c WHERE key = ?', 42), 'integer', 'a number key');
  db.prepare("INSERT INTO c(c, value) VALUES ('capacity', ?)").run(2000000);
  assert.equal(Number(one("SELECT capacity FROM cache_stats('c')")), 2000000);
  db.exec("INSERT INTO c(c) VALUES ('integrity_check')");

  // bench_insert takes whole-number REALs: plain JS numbers.
  const r = db.prepare('SELECT rows_written, threads, batch FROM bench_insert ' +
                       'WHERE rows = ? AND threads = ? AND batch = ? AND storage = ?')
    .get(500, 1, 50, 'memory');
  assert.equal(Number(r.rows_written), 500, 'bench_insert rows_written');
  assert.equal(Number(r.batch), 50, 'bench_insert batch');
  return `(${host}, SQLite ${one('SELECT sqlite_version()')}): acorn_version() ${one('SELECT acorn_version()')} = package ${pkg.version}, ${a}`;
}

function betterSqlite3() {
  const Database = require('better-sqlite3');
  const bpkg = require('better-sqlite3/package.json');
  const db = new Database(':memory:');
  try {
    const hasNodeSqlite = (() => { try { require('node:sqlite'); return true; } catch { return false; } })();
    return exercise(db, `Node ${process.versions.node}` +
                    `${hasNodeSqlite ? '' : ' (no node:sqlite)'}, better-sqlite3 ${bpkg.version}`);
  } finally {
    db.close();
  }
}

function nodeSqlite() {
  const { DatabaseSync } = require('node:sqlite');
  // Without allowExtension, load() names the option to use.
  const closed = new DatabaseSync(':memory:');
  assert.throws(() => acorn.load(closed),
                /^Error: sqlite-acorn: this node:sqlite database does not allow extensions; open it with new DatabaseSync\(path, \{ allowExtension: true \}\)/);
  closed.close();
  const db = new DatabaseSync(':memory:', { allowExtension: true });
  try {
    const msg = exercise(db, `Node ${process.versions.node}, node:sqlite`);
    // load() turned extension loading off again.
    assert.throws(() => db.prepare("SELECT load_extension('nothing')").get(), /not authorized/);
    return msg;
  } finally {
    db.close();
  }
}

function platform() {
  const fake = (name, value) => Object.defineProperty(process, name, { value, configurable: true });
  const want = 'Error: sqlite-acorn: no acorn binary for platform darwin, arch arm64; ' +
    'this package has one for linux-x64. Build acorn from source (make) and load its acorn.so ' +
    'with db.loadExtension().';
  fake('platform', 'darwin');
  fake('arch', 'arm64');
  assert.throws(() => acorn.getLoadablePath(), (e) => String(e) === want);
  assert.throws(() => acorn.load({ loadExtension() { throw new Error('must not be reached'); } }),
                (e) => String(e) === want);
  fake('platform', 'linux');
  fake('arch', 'arm64');
  assert.throws(() => acorn.getLoadablePath(), /no acorn binary for platform linux, arch arm64;/);
  assert.throws(() => acorn.load(null), /^TypeError: sqlite-acorn: load\(db\) needs a database with loadExtension\(\)/);
  return `(Node ${process.versions.node}): ${want}`;
}

const modes = { 'better-sqlite3': betterSqlite3, 'node:sqlite': nodeSqlite, platform };
const mode = process.argv[2];
if (!Object.prototype.hasOwnProperty.call(modes, mode)) {
  console.error(`usage: node npm_test.js ${Object.keys(modes).join('|')}`);
  process.exit(2);
}
const name = `npm-${mode.replace(':', '-')}`;
try {
  console.log(`PASS ${name} ${modes[mode]()}`);
} catch (e) {
  console.log(`FAIL ${name}: ${e && e.message ? e.message.split('\n')[0] : e}`);
  process.exit(1);
}
