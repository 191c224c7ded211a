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
