import { EventEmitter } from 'node:events';
import { Cache, CacheOptions, Connection } from './index';

export interface KeyvAcornOptions extends CacheOptions {
  /** The cache table (created if absent); default 'keyv'. */
  table?: string;
}

/**
 * A Keyv storage adapter on acorn's cache table: `new Keyv({ store: new
 * KeyvAcorn(db, { capacity: '64MiB' }) })`. An entry's tag is the Keyv
 * namespace, so clear() removes only that namespace's entries.
 */
export declare class KeyvAcorn extends EventEmitter {
  constructor(db: Connection | Cache, options?: KeyvAcornOptions);
  readonly cache: Cache;
  opts: KeyvAcornOptions & { dialect: 'sqlite'; url: string; table: string; [k: string]: unknown };
  ttlSupport: true;
  namespace?: string;
  get(key: string): Promise<string | Buffer | undefined>;
  getMany(keys: string[]): Promise<Array<string | Buffer | undefined>>;
  /** ttl in milliseconds */
  set(key: string, value: string | Uint8Array, ttl?: number): Promise<boolean>;
  setMany(entries: Array<{ key: string; value: string | Uint8Array; ttl?: number }>): Promise<boolean[]>;
  delete(key: string): Promise<boolean>;
  /** true if any of the keys had an entry */
  deleteMany(keys: string[]): Promise<boolean>;
  clear(): Promise<void>;
  has(key: string): Promise<boolean>;
  hasMany(keys: string[]): Promise<boolean[]>;
  iterator(namespace?: string): AsyncGenerator<[string, string | Buffer], void, unknown>;
}

export default KeyvAcorn;
