// Keyv's compliance suite (@keyv/test-suite, as published) on the store of
// the installed sqlite-acorn package: the API, values and namespaces
// (keyvTestSuite) and the iterator (keyvIteratorTests).  Run by vitest in
// the project tests/dist/run installs the package into:
//   npx vitest run keyv.test.mjs                     better-sqlite3
//   ACORN_HOST=node:sqlite npx vitest run ...         node:sqlite (Node 22.13+)
// Twice: every store on one connection given to it, as the suite expects
// (what one store sets, another of the same namespace gets and clears), and
// every store opening one file from a sqlite:// URI, a connection each.
import * as test from 'vitest';
import keyvTestSuite, { keyvIteratorTests } from '@keyv/test-suite';
import Keyv from 'keyv';
import KeyvAcorn from 'sqlite-acorn/keyv';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const nodeSqlite = process.env.ACORN_HOST === 'node:sqlite';

function open() {
  if (nodeSqlite) {
    const { DatabaseSync } = require('node:sqlite');
    return new DatabaseSync(':memory:', { allowExtension: true });
  }
  const Database = require('better-sqlite3');
  return new Database(':memory:');
}

const db = open();
const store = () => new KeyvAcorn(db, { table: 'keyv', capacity: '16MiB' });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acorn-keyv-'));
const uri = `sqlite://${path.join(dir, 'keyv.db')}`;
const opened = [];
const storeOfUri = () => {
  const s = new KeyvAcorn(uri, { table: 'keyv', capacity: '16MiB', ...(nodeSqlite ? { driver: 'node:sqlite' } : {}) });
  opened.push(s);
  return s;
};

test.describe('on a database given', () => {
  keyvTestSuite(test, Keyv, store);
  keyvIteratorTests(test, Keyv, store);
});
test.describe('from a sqlite:// URI', () => {
  keyvTestSuite(test, Keyv, storeOfUri);
  keyvIteratorTests(test, Keyv, storeOfUri);
  test.afterAll(async () => {
    for (const s of opened) await s.disconnect();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
