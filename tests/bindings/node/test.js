// Load acorn into better-sqlite3 and call uuid7().
// Usage: node test.js PATH  (PATH without .so; the entry point
// sqlite3_acorn_init is derived from the file name).
// Prints "PASS node ..." or "FAIL node: reason"; exit status 0 or 1.
'use strict';

const NAME = 'node';
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function check(path) {
  const Database = require('better-sqlite3');
  const pkg = require('better-sqlite3/package.json');
  const db = new Database(':memory:');
  try {
    db.loadExtension(path);
    const one = (sql, ...args) => db.prepare(sql).pluck().get(...args);
    const a = one('SELECT uuid7()');
    const b = one('SELECT uuid7()');
    const ver = one('SELECT uuid_version(?)', a);
    const libver = one('SELECT sqlite_version()');
    for (const u of [a, b]) {
      if (typeof u !== 'string' || u.length !== 36 || !V7.test(u)) {
        throw new Error(`uuid7() returned ${JSON.stringify(u)}, not a version-7 UUID`);
      }
    }
    if (ver !== 7) throw new Error(`uuid_version(uuid7()) = ${ver}, expected 7`);
    if (!(a < b)) throw new Error(`uuid7() not increasing: ${a} then ${b}`);
    return `(Node ${process.versions.node}, better-sqlite3 ${pkg.version}, SQLite ${libver}): ${a}`;
  } finally {
    db.close();
  }
}

if (process.argv.length !== 3) {
  console.error('usage: node test.js PATH_TO_EXTENSION');
  process.exit(2);
}
try {
  console.log(`PASS ${NAME} ${check(process.argv[2])}`);
} catch (e) {
  console.log(`FAIL ${NAME}: ${e && e.message ? e.message : e}`);
  process.exit(1);
}
