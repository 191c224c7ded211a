// Keyv's compliance suite (@keyv/test-suite, as published) on the store of
// the installed sqlite-acorn package: the API, values and namespaces
// (keyvTestSuite) and the iterator (keyvIteratorTests).  Run by vitest in
// the project tests/dist/run installs the package into:
//   npx vitest run keyv.test.mjs                     better-sqlite3
//   ACORN_HOST=node:sqlite npx vitest run ...         node:sqlite (Node 22.13+)
// Every store of a run is on one connection, as the suite expects: what one
// store sets, another (of the same namespace) gets and clears.
import * as test from 'vitest';
import keyvTestSuite, { keyvIteratorTests } from '@keyv/test-suite';
import Keyv from 'keyv';
import KeyvAcorn from 'sqlite-acorn/keyv';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function open() {
  if (process.env.ACORN_HOST === 'node:sqlite') {
    const { DatabaseSync } = require('node:sqlite');
    return new DatabaseSync(':memory:', { allowExtension: true });
  }
  const Database = require('better-sqlite3');
  return new Database(':memory:');
}

const db = open();
const store = () => new KeyvAcorn(db, { table: 'keyv', capacity: '16MiB' });

keyvTestSuite(test, Keyv, store);
keyvIteratorTests(test, Keyv, store);
