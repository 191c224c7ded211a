// sqlite-acorn/load.js: where the acorn SQLite extension of this package is, and how
// to load it into a connection.
//
//   getLoadablePath()  the absolute path of the shared object for this
//                      platform and arch; throws on one the package has no
//                      binary for, naming both.
//   load(db)           loads it into db: a better-sqlite3 Database, or a
//                      node:sqlite DatabaseSync opened with
//                      { allowExtension: true } (Node 22.13 and later).
//
// SQLite derives the entry point from the file name (acorn.so gives
// sqlite3_acorn_init), so the binaries are kept under that name, one
// directory per platform-arch.
'use strict';

const path = require('node:path');
const fs = require('node:fs');

// platform-arch (Node's process.platform and process.arch) -> file in lib/.
const BINARIES = {
  'linux-x64': 'acorn.so',
};

function getLoadablePath() {
  const key = `${process.platform}-${process.arch}`;
  const file = Object.prototype.hasOwnProperty.call(BINARIES, key) ? BINARIES[key] : null;
  if (file === null) {
    throw new Error(
      `sqlite-acorn: no acorn binary for platform ${process.platform}, arch ${process.arch}; ` +
      `this package has one for ${Object.keys(BINARIES).join(', ')}. ` +
      'Build acorn from source (make) and load its acorn.so with db.loadExtension().');
  }
  const p = path.join(__dirname, 'lib', key, file);
  if (!fs.existsSync(p)) {
    throw new Error(`sqlite-acorn: ${p} is missing from the installed package; reinstall sqlite-acorn`);
  }
  return p;
}

// node:sqlite's DatabaseSync has enableLoadExtension(); better-sqlite3's
// Database always allows loadExtension() and has no such method.
function load(db) {
  if (db === null || typeof db !== 'object' || typeof db.loadExtension !== 'function') {
    throw new TypeError(
      'sqlite-acorn: load(db) needs a database with loadExtension(): ' +
      'a better-sqlite3 Database or a node:sqlite DatabaseSync');
  }
  const file = getLoadablePath();
  if (typeof db.enableLoadExtension !== 'function') {
    db.loadExtension(file);
    return;
  }
  try {
    db.enableLoadExtension(true);
  } catch (e) {
    throw new Error(
      'sqlite-acorn: this node:sqlite database does not allow extensions; open it with ' +
      `new DatabaseSync(path, { allowExtension: true }) (${e && e.message ? e.message : e})`);
  }
  try {
    db.loadExtension(file);
  } finally {
    db.enableLoadExtension(false);
  }
}

module.exports = { getLoadablePath, load };
