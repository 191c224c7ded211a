// sqlite-acorn: the acorn SQLite extension for Node (better-sqlite3 and
// node:sqlite).
//
//   getLoadablePath()  the absolute path of the shared object for this
//                      platform and arch (load.js)
//   load(db)           loads it into a connection (load.js)
//   Cache              acorn's cache table as an object (cache.js)
//
// The Keyv store is require('sqlite-acorn/keyv') (keyv.js).  docs/node.md
// in acorn's repository specifies all of it.
'use strict';

const { getLoadablePath, load } = require('./load.js');
const { Cache } = require('./cache.js');

module.exports = { getLoadablePath, load, Cache };
