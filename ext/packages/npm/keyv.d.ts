import { EventEmitter } from 'node:events';
import { Cache, CacheOptions, Connection } from './index';

export interface KeyvAcornOptions extends CacheOptions {
  /** The cache table (created if absent); default 'keyv'. */
  table?: string;
  /** For a path or URI: which driver opens it; default better-sqlite3 if it can be loaded, else node:sqlite. */
  driver?: 'better-sqlite3' | 'node:sqlite';
}

/** @keyv/sqlite's options object: a sqlite:// URI (or a path) and the store's options. */
export interface KeyvAcornUriOptions extends KeyvAcornOptions {
  uri: string;
}

/**
 * A Keyv storage adapter on acorn's cache table: `new Keyv({ store: new
 * KeyvAcorn('sqlite://cache.db', { capacity: '64MiB' }) })`. An entry's tag
 * is the Keyv namespace, so clear() removes only that namespace's entries.
 * A value of Keyv's default serializer is stored by the convention every
 * face of acorn reads; any other string whole, marked 0xFF 'k'.
 */
export declare class KeyvAcorn extends EventEmitter {
  /** A path or 'sqlite://path' (opened, and closed by disconnect()), a database, a Cache, or { uri, ... }. */
  constructor(target: string | Connection | Cache | KeyvAcornUriOptions, options?: KeyvAcornOptions);
  readonly cache: Cache;
  opts: KeyvAcornOptions & { dialect: 'sqlite'; url: string; table: string; uri?: string; [k: string]: unknown };
  ttlSupport: true;
  namespace?: string;
  /** Keyv's string, or undefined; a value it cannot give Keyv rejects (and is an 'error' event). */
  get(key: string): Promise<string | undefined>;
  getMany(keys: string[]): Promise<Array<string | undefined>>;
  /** value: the string Keyv's serializer made; ttl in milliseconds */
  set(key: string, value: string, ttl?: number): Promise<boolean>;
  setMany(entries: Array<{ key: string; value: string; ttl?: number }>): Promise<boolean[]>;
  delete(key: string): Promise<boolean>;
  /** true if any of the keys had an entry */
  deleteMany(keys: string[]): Promise<boolean>;
  clear(): Promise<void>;
  has(key: string): Promise<boolean>;
  hasMany(keys: string[]): Promise<boolean[]>;
  iterator(namespace?: string): AsyncGenerator<[string, string], void, unknown>;
  /** Closes a connection the store opened from a path or URI; a database given stays open. */
  disconnect(): Promise<void>;
}

export default KeyvAcorn;
