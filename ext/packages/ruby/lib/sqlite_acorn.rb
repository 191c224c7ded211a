# frozen_string_literal: true

# acorn, a loadable SQLite extension (UUIDs, the cache virtual table,
# bench_insert), for the sqlite3 gem.
#
#   require "sqlite3"
#   require "sqlite_acorn"
#   db = SQLite3::Database.new(":memory:")
#   SqliteAcorn.load(db)
#   db.get_first_value("SELECT uuid7()")
#
# ActiveSupport::Cache::AcornStore (require "active_support/cache/acorn_store",
# or config.cache_store = :acorn_store, ...) is a cache store on acorn's cache
# table.  docs/ruby.md in acorn's repository specifies both.
module SqliteAcorn
  VERSION = "@VERSION@"

  # The path of the bundled shared object (acorn.so; its entry point
  # sqlite3_acorn_init follows from the name), for hosts that load
  # extensions themselves.
  def self.loadable_path
    File.expand_path("sqlite_acorn/acorn.so", __dir__)
  end

  # Loads acorn into db, a SQLite3::Database: extension loading is turned on
  # for this one call and off again, whatever happens.  Returns db.
  def self.load(db)
    unless defined?(::SQLite3::Database) && db.is_a?(::SQLite3::Database)
      raise TypeError, "SqliteAcorn.load: db must be a SQLite3::Database; got #{db.class}"
    end
    unless db.respond_to?(:enable_load_extension)
      raise NotImplementedError, "SqliteAcorn.load: this sqlite3 gem (#{::SQLite3::VERSION}) was " \
                                 "built without extension loading (SQLITE_OMIT_LOAD_EXTENSION)"
    end
    db.enable_load_extension(true)
    begin
      db.load_extension(loadable_path)
    ensure
      db.enable_load_extension(false)
    end
    db
  end
end
