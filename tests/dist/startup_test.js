// Many Node processes starting at once on one file, as the workers of a
// cluster do after a deploy: each opens the database (better-sqlite3, its
// default busy timeout of 5 s), turns WAL on, and makes a Cache (or a Keyv
// store) on an existing table with a capacity other than the stored one,
// so that its constructor writes (the capacity command); then a set and a
// get.  No start may fail: a plain table's write would wait for the lock
// there, and so must the cache's.
//
//   node startup_test.js DIR [WORKERS ROUNDS]     (default 12 workers, 10 rounds)
//
// Prints "PASS npm-startup N starts ..." or "FAIL npm-startup: ..." and exits
// 0 or 1.  A worker is this file run with --worker.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

if (process.argv[2] === '--worker') {
  const [file, kind, n] = process.argv.slice(3);
  const Database = require('better-sqlite3');
  const { Cache } = require('sqlite-acorn');
  const KeyvAcorn = require('sqlite-acorn/keyv');
  try {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    const capacity = 100000 + Number(n) * 1000;
    if (kind === 'cache') {
      const c = new Cache(db, 'pages', { capacity });
      c.set(`k${n}`, 'v');
      if (c.get(`k${n}`) !== 'v') throw new Error('the set was not read back');
    } else {
      const s = new KeyvAcorn(db, { table: 'keyv', capacity });
      s.set(`k${n}`, '"v"').then(() => s.get(`k${n}`)).then((v) => {
        if (v !== '"v"') throw new Error('the set was not read back');
      });
    }
  } catch (e) {
    console.log(`worker ${n}: ${e.code || ''} ${e.message}`);
    process.exitCode = 1;
  }
} else {
  const dir = process.argv[2];
  const workers = Number(process.argv[3] || 12);
  const rounds = Number(process.argv[4] || 10);
  const Database = require('better-sqlite3');
  const { Cache } = require('sqlite-acorn');
  const KeyvAcorn = require('sqlite-acorn/keyv');
  const file = path.join(dir, 'startup.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  new Cache(db, 'pages', { capacity: 50000 });
  new KeyvAcorn(db, { table: 'keyv', capacity: 50000 });
  db.close();

  const run = (kind, i) => new Promise((resolve) => {
    const p = spawn(process.execPath, [__filename, '--worker', file, kind, String(i)],
                    { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { out += d; });
    p.on('close', (code) => resolve(code === 0 ? '' : (out.trim() || `exit ${code}`)));
  });
  (async () => {
    const failures = [];
    let starts = 0;
    for (let r = 0; r < rounds; r++) {
      for (const kind of ['cache', 'keyv']) {
        const outs = await Promise.all(Array.from({ length: workers }, (_, i) => run(kind, r * workers + i)));
        starts += workers;
        for (const o of outs) if (o) failures.push(`${kind}: ${o}`);
      }
    }
    if (failures.length) {
      console.log(`FAIL npm-startup: ${failures.length} of ${starts} starts failed: ${failures.slice(0, 3).join('; ')}`);
      process.exitCode = 1;
    } else {
      console.log(`PASS npm-startup ${starts} starts (${workers} Node processes at once, ${rounds} rounds each of` +
                  ' Cache and KeyvAcorn, each writing a new capacity at start): none failed');
    }
  })();
}
