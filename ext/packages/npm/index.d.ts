/**
 * A connection that can load SQLite extensions: a better-sqlite3 Database,
 * or a node:sqlite DatabaseSync opened with `{ allowExtension: true }`.
 */
export interface ExtensionLoader {
  loadExtension(path: string, entryPoint?: string): unknown;
  enableLoadExtension?(allow: boolean): unknown;
}

/**
 * Absolute path of acorn's shared object for this platform and arch.
 * Throws an Error naming both when the package has no binary for them.
 */
export declare function getLoadablePath(): string;

/**
 * Loads acorn into `db`. On a node:sqlite database, extension loading is
 * turned on for this one call and off again.
 */
export declare function load(db: ExtensionLoader): void;

/**
 * A connection a Cache works on: a better-sqlite3 Database, or a
 * node:sqlite DatabaseSync (opened with `{ allowExtension: true }` unless
 * acorn is loaded already).
 */
export interface Connection extends ExtensionLoader {
  prepare(sql: string): unknown;
  exec(sql: string): unknown;
}

/** A key: TEXT, BLOB or INTEGER in the table. */
export type CacheKey = string | number | bigint | Uint8Array;

/** What JSON holds exactly: stored as TEXT marked 0xFF 'j'. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A value, stored by the convention of every face of acorn (docs/cache.md,
 * "Values across languages"): a string as TEXT, bytes as a BLOB, a safe
 * integer or a 64-bit bigint as an INTEGER, another number as a REAL (NaN
 * marked), a larger bigint marked, true, false, null and plain objects and
 * arrays as JSON marked.
 */
export type CacheValue = JsonValue | Uint8Array | bigint;

/** What get() reads: bytes as a Buffer, an integer as a number where it is safe, else a bigint. */
export type CacheRead = JsonValue | Buffer | bigint;

/**
 * The Error a get throws for a value this face cannot read: code
 * 'ACORN_FOREIGN_VALUE' (a pickle, a Marshal dump, a string of Keyv's own
 * serializer, or a mark of a newer acorn) or 'ACORN_CORRUPT_VALUE' (a mark
 * whose value does not hold what it says); from the Keyv store also
 * 'ACORN_KEYV_INEXACT' (a value Keyv's JSON cannot hold).
 */
export interface AcornValueError extends Error {
  code: 'ACORN_FOREIGN_VALUE' | 'ACORN_CORRUPT_VALUE' | 'ACORN_KEYV_INEXACT';
  key: CacheKey;
  /** 'pickle', 'Marshal', 'Keyv', or the letter of an unknown mark */
  format?: string;
  /** 'Python', 'Ruby', 'JavaScript' */
  language?: string;
}

export interface CacheOptions {
  /** Bytes the entries may hold: a number, or a string with a unit ('64MiB'). Default 1 GiB. */
  capacity?: number | string;
  /** 'lru' (default) or 'fifo'; fixed when the table is created. */
  policy?: 'lru' | 'fifo';
  /** Lifetime of an entry set without ttl: ms (a multiple of 1000) or '90s', '15m', '2h', '7d'; 0 for none. */
  defaultTtl?: number | string;
  /** The most entries; 0 (default) for no bound. */
  maxEntries?: number;
  /** How many evictions the feed keeps (cache_evictions); 0 (default) is off. */
  feed?: number;
  /** Keys whose recency a connection buffers, 1..1000000; fixed when the table is created. */
  recencyBuffer?: number;
  /** Whether a connection writes its buffered recency on its own (default true); fixed when the table is created. */
  autoflush?: boolean;
  /** The journal mode set on the table's database file (not :memory: or temp); null leaves the file's. Default 'wal'. */
  journalMode?: 'wal' | 'delete' | 'truncate' | 'persist' | 'memory' | null;
  /** The least busy timeout of the connection, in ms: a lower one is raised to it; null leaves it. Default 5000. */
  busyTimeout?: number | null;
}

export interface CacheSetOptions {
  /** Milliseconds from now until the entry expires; undefined for the table's defaultTtl. */
  ttl?: number;
  /** The entry's tag, for evict(tag). */
  tag?: string;
}

export interface CacheGetOrSetOptions extends CacheSetOptions {
  /** How long a caller's lock holds at most, in ms (default 60000); a holder that died on this machine holds it no longer. */
  lockTtl?: number;
}

export interface CacheMemoizeOptions<A extends unknown[]> extends CacheGetOrSetOptions {
  /** The key of a call; default 'memo:' + name + ':' + JSON of the arguments. */
  key?: (...args: A) => CacheKey;
  /** Default: the function's name. */
  name?: string;
}

export interface CacheStats {
  capacity: number;
  entries: number;
  bytes: number;
  /** null under policy 'fifo' */
  hits: number | null;
  /** null under policy 'fifo' */
  misses: number | null;
  evictions: number;
  expired: number;
}

/**
 * acorn's cache table `name` on `db`, created with `options` if it does not
 * exist (acorn is loaded into `db` first if it is not). On an existing table
 * the options capacity, defaultTtl, maxEntries and feed given are set; policy,
 * recencyBuffer and autoflush must be what it was created with. The
 * connection gets WAL and a busy timeout (journalMode, busyTimeout).
 */
export declare class Cache {
  constructor(db: Connection, name: string, options?: CacheOptions);
  readonly db: Connection;
  readonly name: string;
  /** The value, or undefined; a get (hit or miss, a use). Throws an AcornValueError for a value only another language reads. */
  get(key: CacheKey): CacheRead | undefined;
  /** Stores value under key, replacing any entry it had; returns the cache. A TypeError for a value with no form in the convention. */
  set(key: CacheKey, value: CacheValue, options?: CacheSetOptions): this;
  /** The value of key, or fn's, stored; one caller among every process on the file runs fn, the others wait for its value. */
  getOrSet<T extends CacheValue>(key: CacheKey, fn: () => T | Promise<T>, options?: CacheGetOrSetOptions): Promise<CacheRead>;
  /** fn whose calls go through getOrSet, under a key of its arguments. */
  memoize<A extends unknown[], T extends CacheValue>(fn: (...args: A) => T | Promise<T>,
                                                     options?: CacheMemoizeOptions<A>): (...args: A) => Promise<CacheRead>;
  /** Whether a live entry has key (not a use, not a hit or miss). */
  has(key: CacheKey): boolean;
  /** Removes key's entry; true if there was a live one. */
  delete(key: CacheKey): boolean;
  /** Removes the entries of a tag; returns how many. */
  evict(tag: string): number;
  /** Removes every entry (expired ones too); returns how many live ones. */
  clear(): number;
  /** The table's counters (cache_stats). */
  stats(): CacheStats;
  /** Stores size zero bytes under key, to be written in pieces by writeAt; returns the cache. */
  reserve(key: CacheKey, size: number, options?: CacheSetOptions): this;
  /** Writes data into key's value at offset, in place (cache_write); returns the bytes written. */
  writeAt(key: CacheKey, offset: number | bigint, data: Uint8Array): number;
  /** Up to length bytes of key's value from offset (cache_read), or undefined for a missing key: the stored bytes. */
  readAt(key: CacheKey, offset: number | bigint, length: number | bigint): Buffer | undefined;
}
