# The gem `make dist-gem` builds (Makefile): the files are laid out in
# build/pkg/gem by the Makefile and this spec lists what is there.
Gem::Specification.new do |s|
  s.name        = "sqlite_acorn"
  s.version     = "@VERSION@"
  s.platform    = "x86_64-linux"
  s.summary     = "acorn, a SQLite extension (UUIDs, a bounded LRU cache table, bench_insert), " \
                  "and an ActiveSupport cache store on it"
  s.description = "The Linux x86-64 build of acorn for Ruby's sqlite3 gem: SqliteAcorn.load(db), " \
                  "and ActiveSupport::Cache::AcornStore (config.cache_store = :acorn_store, path, " \
                  "capacity: '64MiB'), a cache store bounded in bytes with exact LRU eviction, " \
                  "whose values acorn's Python and Node faces read too."
  s.authors     = ["acorn developers"]
  s.licenses    = ["MIT"]
  s.required_ruby_version = ">= 2.7"
  # SQLite3::Database; ActiveSupport only for the store, so not a dependency
  s.add_runtime_dependency "sqlite3", ">= 1.4"
  s.files       = Dir.glob(["lib/**/*", "README.md", "LICENSE"]).select { |f| File.file?(f) }.sort
  s.require_paths = ["lib"]
end
