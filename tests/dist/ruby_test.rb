# The installed sqlite_acorn gem, used as a user would: SqliteAcorn.load on
# a SQLite3::Database, and ActiveSupport::Cache::AcornStore found by
# ActiveSupport.lookup_store(:acorn_store, ...).  tests/dist/run installs the
# gem into a fresh GEM_HOME (the system's sqlite3 and activesupport on
# GEM_PATH) and runs this file with minitest; ACORN_GEM_HOME names that
# GEM_HOME, so the test can check it uses the installed gem and not a copy.
#
# Expiry is tested without waiting: entries are written already expired
# (a negative expires_in) or with lifetimes far longer than the test.
require "minitest/autorun"
require "tmpdir"
require "sqlite3"
require "sqlite_acorn"
require "active_support"
require "active_support/cache"

GEM_HOME_DIR = ENV.fetch("ACORN_GEM_HOME")
V7 = /\A\h{8}-\h{4}-7\h{3}-[89ab]\h{3}-\h{12}\z/.freeze

class SqliteAcornLoadTest < Minitest::Test
  def test_loadable_path_is_the_installed_gems_acorn_so
    path = SqliteAcorn.loadable_path
    assert path.start_with?(File.join(GEM_HOME_DIR, "gems", "sqlite_acorn-")), path
    assert_equal "acorn.so", File.basename(path)
    assert File.file?(path)
    assert_equal Gem.loaded_specs["sqlite_acorn"].version.to_s, SqliteAcorn::VERSION
  end

  def test_load_gives_a_database_acorn_and_leaves_load_extension_off
    db = SQLite3::Database.new(":memory:")
    assert_same db, SqliteAcorn.load(db)
    a, b = db.get_first_row("SELECT uuid7(), uuid7()")
    assert_match V7, a
    assert a < b
    assert_equal "v#{SqliteAcorn::VERSION}", db.get_first_value("SELECT acorn_version()")
    e = assert_raises(SQLite3::Exception) { db.execute("SELECT load_extension('nothing')") }
    assert_match(/not authorized/, e.message)
    db.execute("CREATE VIRTUAL TABLE c USING cache(capacity = '1MiB')")
    db.execute("INSERT INTO c(key, value, ttl) VALUES (?, ?, ?)", ["greeting", "hello, world".b, 3600])
    assert_equal "hello, world", db.get_first_value("SELECT cache_get('c', 'greeting')")
  end

  def test_load_refuses_what_is_not_a_database
    e = assert_raises(TypeError) { SqliteAcorn.load(nil) }
    assert_equal "SqliteAcorn.load: db must be a SQLite3::Database; got NilClass", e.message
    e = assert_raises(TypeError) { SqliteAcorn.load("x.db") }
    assert_equal "SqliteAcorn.load: db must be a SQLite3::Database; got String", e.message
  end
end

class AcornStoreTest < Minitest::Test
  def setup
    @dir = Dir.mktmpdir("acorn-store")
    @path = File.join(@dir, "cache.db")
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def store(**options)
    ActiveSupport::Cache.lookup_store(:acorn_store, @path, **options)
  end

  # A second connection on the file, for what the store does not show.
  # Listing columns other than value reads no value: not a use.
  def peek
    @peek ||= SqliteAcorn.load(SQLite3::Database.new(@path))
  end

  def rows(table = "rails_cache")
    peek.execute(%(SELECT key, tag, expires - created FROM "#{table}" ORDER BY key))
  end

  def test_lookup_store_finds_the_installed_store
    s = store(capacity: "1MiB")
    assert_instance_of ActiveSupport::Cache::AcornStore, s
    file = $LOADED_FEATURES.grep(%r{/active_support/cache/acorn_store\.rb\z}).first
    assert file&.start_with?(GEM_HOME_DIR), file.inspect
    assert_equal 1_048_576, s.stats[:capacity]
    assert_equal @path, s.path
    assert_equal "rails_cache", s.table
  end

  def test_read_write_delete_exist
    s = store
    assert_nil s.read("city")
    assert_equal true, s.write("city", "Duckburgh")
    assert_equal "Duckburgh", s.read("city")
    assert_equal({ a: [1, 2.5, nil] }, (s.write("h", { a: [1, 2.5, nil] }) && s.read("h")))
    assert s.exist?("city")
    assert_equal true, s.delete("city")
    assert_equal false, s.delete("city")
    refute s.exist?("city")
    assert s.write("nil", nil)
    assert s.exist?("nil")
    assert_nil s.read("nil")
  end

  def test_fetch_runs_the_block_on_a_miss_only
    s = store
    calls = 0
    assert_equal 42, s.fetch("answer") { calls += 1; 42 }
    assert_equal 42, s.fetch("answer") { calls += 1; 43 }
    assert_equal 1, calls
    assert_equal 44, s.fetch("answer", force: true) { 44 }
    assert_equal 44, s.read("answer")
    assert_nil s.fetch("skip", skip_nil: true) { nil }
    refute s.exist?("skip")
    assert_raises(ArgumentError) { s.fetch("answer", force: true) }
  end

  def test_increment_and_decrement_change_an_existing_integer_only
    s = store
    assert_nil s.increment("n")
    refute s.exist?("n")
    s.write("n", 5)
    assert_equal 8, s.increment("n", 3)
    assert_equal 7, s.decrement("n")
    assert_equal 7, s.read("n")
    s.write("text", "5")
    e = assert_raises(TypeError) { s.increment("text") }
    assert_equal 'ActiveSupport::Cache::AcornStore#increment: the value at "text" is String, not an Integer', e.message
    e = assert_raises(TypeError) { s.decrement("text") }
    assert_equal 'ActiveSupport::Cache::AcornStore#decrement: the value at "text" is String, not an Integer', e.message
    e = assert_raises(ArgumentError) { s.increment("n", "2") }
    assert_equal 'ActiveSupport::Cache::AcornStore#increment: amount must be an Integer; got String "2"', e.message
    assert_equal "5", s.read("text")
    assert_equal 7, s.read("n")
  end

  def test_increment_adds_in_sql_and_keeps_the_expiry_and_the_namespace
    s = store(namespace: "ns")
    s.write("n", 40, expires_in: 3600)
    before = peek.get_first_row("SELECT expires, tag FROM rails_cache")
    assert_equal 42, s.increment("n", 2, expires_in: 60)
    assert_equal ["integer", 42], peek.get_first_row("SELECT typeof(value), value FROM rails_cache")
    assert_equal before, peek.get_first_row("SELECT expires, tag FROM rails_cache")
    peek.execute("UPDATE rails_cache SET value = value + 8 WHERE key = 'ns:n'")
    assert_equal 49, s.decrement("n", 1)
    assert_equal 49, s.read("n")
    # past int64 the sum is TEXT marked 'i', and back within it an INTEGER
    s.write("big", 2**63 - 1)
    assert_equal 2**63, s.increment("big")
    assert_equal ["text", "\xFFi9223372036854775808".b],
                 peek.get_first_row("SELECT typeof(value), CAST(value AS BLOB) FROM rails_cache WHERE key = 'ns:big'")
    assert_equal 2**63 - 1, s.decrement("big")
    assert_equal "integer", peek.get_first_value("SELECT typeof(value) FROM rails_cache WHERE key = 'ns:big'")
    assert_equal(-2**63, (s.write("low", -2**63) && s.increment("low", 0)))
    assert_equal(-2**63 - 5, s.decrement("low", 5))
    assert_equal 2**64, s.increment("low", 2**64 + 2**63 + 5)
    assert_equal 2**64, s.read("low")
  end

  # acorn 0.2 stored every entry as a Marshal dump in a BLOB; an Integer
  # entry with a version stays a Marshal dump that keeps it.
  def test_increment_reads_an_integer_of_acorn_0_2_and_of_a_versioned_entry
    s = store
    peek.execute("INSERT INTO rails_cache(key, value) VALUES ('old', ?)",
                 [Marshal.dump(ActiveSupport::Cache::Entry.new(10))])
    assert_equal 11, s.increment("old")
    assert_equal ["integer", 11], peek.get_first_row("SELECT typeof(value), value FROM rails_cache WHERE key = 'old'")
    s.write("v", 1, version: "3")
    assert_equal 2, s.increment("v", 1, version: "3")
    assert_nil s.increment("v", 1, version: "4")
    assert_equal 2, s.read("v", version: "3")
    assert_equal "FF6D", peek.get_first_value("SELECT hex(substr(CAST(value AS BLOB), 1, 2)) FROM rails_cache WHERE key = 'v'")
    s.write("e", 1, expires_in: 3600, race_condition_ttl: 5)
    assert_equal 6, s.increment("e", 5)
    assert_equal 6, s.read("e")
  end

  def test_increments_from_several_processes_are_never_lost
    s = store(capacity: "1MiB")
    s.write("n", 0)
    50.times do |round|
      pids = Array.new(3) do
        fork do
          ok = 10.times.all? { s.increment("n").is_a?(Integer) }
          exit!(ok ? 0 : 1)
        end
      end
      pids.each { |pid| Process.wait(pid); assert $?.success?, "round #{round}: a child failed" }
      assert_equal 30 * (round + 1), s.read("n"), "round #{round}"
    end
  end

  # The other process adds in SQL, as Python's or Node's face would; each
  # round starts both at once (a pipe, no sleeps).
  def test_two_processes_add_to_one_integer_in_wal_and_in_a_rollback_journal
    %i[wal delete].each do |mode|
      path = File.join(@dir, "#{mode}.db")
      s = ActiveSupport::Cache.lookup_store(:acorn_store, path, journal_mode: mode)
      s.write("n", 0)
      db = SQLite3::Database.new(path)
      assert_equal mode.to_s, db.get_first_value("PRAGMA journal_mode")
      db.close
      50.times do |round|
        r, w = IO.pipe
        pid = fork do
          w.close
          r.read(1)
          other = SqliteAcorn.load(SQLite3::Database.new(path))
          other.busy_timeout = 5000
          50.times { other.execute("UPDATE rails_cache SET value = value + 1 WHERE key = 'n'") }
          50.times { other.execute("UPDATE rails_cache SET value = value - 2 WHERE key = 'n'") }
          other.close
          exit!(0)
        end
        r.close
        w.write("g")
        w.close
        got = Array.new(100) { |i| i.even? ? s.increment("n", 3) : s.decrement("n", 1) }
        Process.wait(pid)
        assert $?.success?, "#{mode} round #{round}: the other process failed"
        assert_equal 50 * (round + 1), s.read("n"), "#{mode} round #{round}"
        assert got.all?(Integer), "#{mode} round #{round}: #{got.inspect}"
      end
      assert_equal "integer", peek_at(path, "SELECT typeof(value) FROM rails_cache WHERE key = 'n'")
    end
  end

  def test_journal_mode_nil_leaves_the_files
    store(journal_mode: "DELETE").write("k", 1)
    assert_equal "delete", peek.get_first_value("PRAGMA journal_mode")
    assert_equal 1, store(journal_mode: nil).read("k")
    assert_equal "delete", peek.get_first_value("PRAGMA journal_mode")
  end

  def peek_at(path, sql)
    db = SqliteAcorn.load(SQLite3::Database.new(path))
    db.get_first_value(sql)
  ensure
    db&.close
  end

  def test_a_nil_key_is_an_argument_error_naming_the_method
    s = store(namespace: "ns")
    calls = {
      write: ->(k) { s.write(k, 1) }, read: ->(k) { s.read(k) }, delete: ->(k) { s.delete(k) },
      fetch: ->(k) { s.fetch(k) { 1 } }, exist?: ->(k) { s.exist?(k) },
      increment: ->(k) { s.increment(k) }, decrement: ->(k) { s.decrement(k) },
      read_multi: ->(k) { s.read_multi("a", k) }, fetch_multi: ->(k) { s.fetch_multi("a", k) { 1 } },
      write_multi: ->(k) { s.write_multi("a" => 1, k => 2) }, delete_multi: ->(k) { s.delete_multi(["a", k]) },
    }
    [false, true].each do |local|
      calls.each do |m, f|
        e = assert_raises(ArgumentError, m) { local ? s.with_local_cache { f.call(nil) } : f.call(nil) }
        assert_equal "ActiveSupport::Cache::AcornStore##{m}: the key must not be nil", e.message
        e = assert_raises(ArgumentError, m) { local ? s.with_local_cache { f.call([]) } : f.call([]) }
        assert_equal "ActiveSupport::Cache::AcornStore##{m}: the key [] gives nil, not a String (a key is a " \
                     "String, or an object whose cache_key or to_param is one)", e.message
        e = assert_raises(ArgumentError, m) { f.call(true) }
        assert_equal "ActiveSupport::Cache::AcornStore##{m}: the key true gives true, not a String (a key is a " \
                     "String, or an object whose cache_key or to_param is one)", e.message
      end
    end
    assert_equal [], rows, "nothing was written"
  end

  def test_errors_of_the_store_name_the_method_and_errors_of_the_caller_pass_as_they_are
    s = store
    e = assert_raises(TypeError) { s.write("p", proc {}) }
    assert_equal "ActiveSupport::Cache::AcornStore#write: no _dump_data is defined for class Proc", e.message
    e = assert_raises(TypeError) { s.write_multi("p" => proc {}) }
    assert_equal "ActiveSupport::Cache::AcornStore#write_multi: no _dump_data is defined for class Proc", e.message
    e = assert_raises(TypeError) { s.fetch("p") { proc {} } }
    assert_equal "ActiveSupport::Cache::AcornStore#write: no _dump_data is defined for class Proc", e.message
    e = assert_raises(TypeError) { s.fetch("p") { raise TypeError, "the block's own" } }
    assert_equal "the block's own", e.message
    e = assert_raises(ArgumentError) { s.fetch_multi("a") { raise ArgumentError, "the block's own" } }
    assert_equal "the block's own", e.message
    # SQLite's errors keep their class (and code) and name the method
    s.write("k", 1)
    peek.execute("DROP TABLE rails_cache")
    { write: -> { s.write("k", 2) }, clear: -> { s.clear }, delete_matched: -> { s.delete_matched(/k/) },
      read_multi: -> { s.read_multi("k") } }.each do |m, f|
      e = assert_raises(SQLite3::SQLException, m) { f.call }
      assert_equal "ActiveSupport::Cache::AcornStore##{m}: no such table: rails_cache", e.message
      assert_equal SQLite3::Constants::ErrorCode::ERROR, e.code
    end
    { read: -> { s.read("k") }, fetch: -> { s.fetch("k") { 1 } }, increment: -> { s.increment("k") },
      stats: -> { s.stats } }.each do |m, f|
      e = assert_raises(SQLite3::SQLException, m) { f.call }
      assert_match(/\AActiveSupport::Cache::AcornStore##{Regexp.escape(m.to_s)}: cache_(get|stats): no such table: 'rails_cache'\z/,
                   e.message)
    end
    e = assert_raises(SQLite3::CantOpenException) { store_at(File.join(@dir, "none", "x.db")) }
    assert_equal "ActiveSupport::Cache::AcornStore.new: unable to open database file", e.message
  end

  def store_at(path)
    ActiveSupport::Cache.lookup_store(:acorn_store, path)
  end

  def test_twelve_processes_starting_at_once_with_a_new_capacity_all_start
    path = store(capacity: 50_000).path
    r, w = IO.pipe
    pids = Array.new(12) do |i|
      fork do
        w.close
        r.read(1)
        s = ActiveSupport::Cache.lookup_store(:acorn_store, path, capacity: 100_000 + i * 1000)
        s.write("k#{i}", i)
        exit!(s.read("k#{i}") == i ? 0 : 1)
      end
    end
    r.close
    w.write("g" * 12)
    w.close
    pids.each { |pid| Process.wait(pid); assert $?.success?, "a process failed to start" }
  end

  def test_a_forked_child_uses_its_own_connection
    s = store
    s.write("parent", 1)
    parent_db = s.send(:connection)
    r, w = IO.pipe
    pid = fork do
      r.close
      w.write(s.send(:connection).equal?(parent_db) ? "same" : "own")
      s.write("child", 2)
      w.close
      exit!(s.read("parent") == 1 ? 0 : 1)
    end
    w.close
    Process.wait(pid)
    assert $?.success?
    assert_equal "own", r.read
    assert_equal 2, s.read("child")
    assert_same parent_db, s.send(:connection)
  end

  def test_read_multi_is_one_lookup_counting_hits_and_misses
    s = store
    s.write_multi("a" => 1, "b" => 2)
    assert_equal({ "a" => 1, "b" => 2 }, s.read_multi("a", "b", "c"))
    assert_equal [2, 1], s.stats.values_at(:hits, :misses)
    assert_equal({ "b" => 2, "c" => "C" }, s.fetch_multi("b", "c") { |k| k.upcase })
    assert_equal "C", s.read("c")
    assert_equal 2, s.delete_multi(%w[a c none])
    assert_equal({ "b" => 2 }, s.read_multi("a", "b", "c"))
    many = (1..1200).to_h { |i| ["k#{i}", i] }
    s.write_multi(many)
    assert_equal many, s.read_multi(*many.keys)
  end

  def test_expires_in_is_the_rows_ttl_and_an_expired_entry_is_gone
    s = store(expires_in: 3600)
    s.write("hour", 1)
    s.write("minute", 1, expires_in: 60)
    s.write("forever", 1, expires_in: nil)
    s.write("gone", 1, expires_in: -1)
    got = rows.to_h { |k, _, life| [k, life] }
    assert_in_delta 3_600_000, got["hour"], 50
    assert_in_delta 60_000, got["minute"], 50
    assert_nil got["forever"]
    refute got.key?("gone"), "a row written already expired is not visible"
    assert_nil s.read("gone")
    assert_equal 1, s.cleanup
    assert_equal 0, s.cleanup
  end

  def test_race_condition_ttl_serves_the_stale_entry_while_one_recomputes
    s = store
    # expired one second ago; the row lives race_condition_ttl longer
    s.write("page", "old", expires_in: -1, race_condition_ttl: 30)
    assert_in_delta 29_000, rows.first[2], 50
    seen = nil
    value = s.fetch("page", race_condition_ttl: 30, expires_in: 600) do
      seen = s.fetch("page", race_condition_ttl: 30) { "not run" }
      "new"
    end
    assert_equal "new", value
    assert_equal "old", seen, "while recomputing, the stale entry is served"
    assert_equal "new", s.read("page")
    # expired longer ago than race_condition_ttl: no row, recomputed at once
    s.write("late", "old", expires_in: -60, race_condition_ttl: 30)
    assert_equal [], rows.select { |k, _, _| k == "late" }
    assert_equal "fresh", s.fetch("late", race_condition_ttl: 30) { "fresh" }
  end

  def test_versions_are_checked
    s = store
    s.write("post", "v1 body", version: 1)
    assert_equal "v1 body", s.read("post", version: 1)
    assert_nil s.read("post", version: 2)
    assert_equal "v2 body", s.fetch("post", version: 2) { "v2 body" }
  end

  def test_the_namespace_prefixes_keys_and_is_the_tag
    a = store(namespace: "a")
    b = store(namespace: -> { "b" })
    plain = store
    a.write("k", 1)
    b.write("k", 2)
    plain.write("k", 3)
    assert_equal [["a:k", "a", nil], ["b:k", "b", nil], ["k", nil, nil]], rows
    assert_equal [1, 2, 3], [a.read("k"), b.read("k"), plain.read("k")]
    assert_equal 1, a.clear
    assert_equal [nil, 2, 3], [a.read("k"), b.read("k"), plain.read("k")]
    assert_equal 2, plain.clear
    assert_equal [], rows
  end

  def test_delete_matched_takes_a_regexp
    s = store
    %w[posts/1 posts/2 users/1].each { |k| s.write(k, k) }
    n = store(namespace: "ns")
    n.write("posts/9", 9)
    assert_equal 2, s.delete_matched(%r{\Aposts/})
    assert_equal ["ns:posts/9", "users/1"], rows.map(&:first)
    assert_equal 1, n.delete_matched(/posts/)
    assert_equal ["users/1"], rows.map(&:first)
    e = assert_raises(ArgumentError) { s.delete_matched(:posts) }
    assert_equal "ActiveSupport::Cache::AcornStore#delete_matched: matcher must be a Regexp, or a String that " \
                 "is one's source (as FileStore takes it); got Symbol :posts", e.message
  end

  # FileStore matches with key.match(matcher): a String is a regular
  # expression's source.
  def test_delete_matched_takes_a_string_as_filestore_does
    s = store
    %w[posts/1 posts/2 users/1 postsX].each { |k| s.write(k, k) }
    n = store(namespace: "ns")
    n.write("posts/9", 9)
    n.write("users/9", 9)
    assert_equal 2, s.delete_matched("^posts/\\d")
    assert_equal 1, n.delete_matched("posts/.")
    assert_equal ["ns:users/9", "postsX", "users/1"], rows.map(&:first)
    e = assert_raises(ArgumentError) { s.delete_matched("posts/(") }
    assert_equal 'ActiveSupport::Cache::AcornStore#delete_matched: matcher "posts/(" is not a regular ' \
                 "expression: end pattern with unmatched parenthesis: /posts\\/(/", e.message
    # keys other languages wrote as a BLOB or an INTEGER, and a TEXT key
    # that is not UTF-8, are not names: not matched
    peek.execute("INSERT INTO rails_cache(key, value) VALUES (x'706f737473', 1), (7, 1), " \
                 "(CAST(x'ff706f737473' AS TEXT), 1)")
    assert_equal 1, s.delete_matched("posts|7")
    assert_equal [%w[blob 706F737473], %w[integer 37], ["text", "ns:users/9".unpack1("H*").upcase],
                  ["text", "users/1".unpack1("H*").upcase], %w[text FF706F737473]],
                 peek.execute("SELECT typeof(key), upper(hex(key)) FROM rails_cache ORDER BY 1, 2")
  end

  def test_capacity_bounds_the_bytes_and_the_least_recently_used_goes_first
    s = store(capacity: 16 * 1024, compress: false)
    s.write("keep", "x" * 1024)
    40.times do |i|
      s.write("k#{i}", "x" * 1024)
      assert_equal "x" * 1024, s.read("keep")
    end
    st = s.stats
    assert st[:bytes] <= 16 * 1024, st.inspect
    assert st[:evictions] > 20, st.inspect
    assert s.exist?("keep")
    assert s.exist?("k39")
    refute s.exist?("k0")
  end

  def test_fifo_evicts_the_oldest_set_whatever_was_read
    s = store(capacity: 8 * 1024, policy: :fifo, compress: false)
    s.write("first", "x" * 1024)
    10.times do |i|
      s.write("k#{i}", "x" * 1024)
      s.read("first")
    end
    refute s.exist?("first")
    assert_nil s.stats[:hits]
  end

  def test_an_entry_larger_than_the_capacity_is_not_stored
    s = store(capacity: 1000, compress: false)
    s.write("small", "x")
    assert_equal false, s.write("big", "x" * 2000)
    refute s.exist?("big")
    assert_equal "x", s.read("small")
  end

  def test_unless_exist_keeps_a_live_entry
    s = store
    assert_equal true, s.write("k", 1, unless_exist: true)
    assert_equal false, s.write("k", 2, unless_exist: true)
    assert_equal 1, s.read("k")
  end

  def test_compressed_entries_round_trip
    s = store(compress_threshold: 100)
    value = %i[abc] * 10_000
    s.write("symbols", value)
    assert_equal value, s.read("symbols")
    size = peek.get_first_value("SELECT size FROM rails_cache WHERE key = 'symbols'")
    assert size < 3_000, "stored #{size} bytes"
  end

  def test_a_value_stored_as_itself_is_not_compressed
    s = store(compress_threshold: 100)
    s.write("text", "abc" * 10_000)
    assert_equal "abc" * 10_000, s.read("text")
    assert_equal ["text", 30_004], peek.get_first_row("SELECT typeof(value), size FROM rails_cache")
  end

  def test_a_marshal_dump_that_does_not_load_is_a_miss
    s = store
    dump = Marshal.dump(ActiveSupport::Cache::Entry.new("x")).sub("Entry", "Entri")
    peek.execute("INSERT INTO rails_cache(key, value) VALUES ('gone', CAST(? AS TEXT))", [SQLite3::Blob.new("\xFFm".b + dump)])
    assert_nil s.read("gone")
    assert_equal({}, s.read_multi("gone"))
    assert_equal "new", s.fetch("gone") { "new" }
  end

  def test_the_local_cache_answers_repeated_reads_in_a_block
    s = store
    s.write("k", 1)
    s.with_local_cache do
      3.times { assert_equal 1, s.read("k") }
    end
    assert_equal 1, s.stats[:hits]
  end

  def test_two_stores_on_one_file_share_entries_and_the_table_keeps_its_settings
    a = store(capacity: "1MiB", table: "shared")
    b = store(table: "shared")
    a.write("k", "from a")
    assert_equal "from a", b.read("k")
    assert_equal 1_048_576, b.stats[:capacity]
    store(capacity: "2MiB", table: "shared")
    assert_equal 2_097_152, a.stats[:capacity]
    e = assert_raises(ArgumentError) { store(policy: :fifo, table: "shared") }
    assert_equal "ActiveSupport::Cache::AcornStore.new: policy: :fifo, but the table \"shared\" in #{@path} " \
                 "has policy :lru (fixed when a table is created: give :lru, or another table:)", e.message
  end

  def test_bad_options_are_refused_with_what_is_allowed
    {
      [{ policy: :random }, ArgumentError] =>
        "ActiveSupport::Cache::AcornStore.new: policy must be :lru or :fifo; got :random",
      [{ capacity: 1.5 }, TypeError] =>
        "ActiveSupport::Cache::AcornStore.new: capacity must be an Integer number of bytes or a String " \
        "with a unit B, kB, MB, GB, KiB, MiB or GiB (\"64MiB\"); got Float",
      [{ capacity: 0 }, ArgumentError] =>
        "ActiveSupport::Cache::AcornStore.new: capacity must be a positive number of bytes or a String " \
        "with a unit B, kB, MB, GB, KiB, MiB or GiB (\"64MiB\"); got 0",
      [{ journal_mode: :off }, ArgumentError] =>
        "ActiveSupport::Cache::AcornStore.new: journal_mode must be :wal, :delete, :truncate, :persist " \
        "or nil (the file's as it is); got :off",
      [{ table: "my cache" }, ArgumentError] =>
        "ActiveSupport::Cache::AcornStore.new: table must be a name of letters, digits and _ " \
        "(not starting with a digit); got \"my cache\"",
      [{ capacity: "10 apples" }, ArgumentError] =>
        "ActiveSupport::Cache::AcornStore.new: cache: bad capacity '10 apples'; expected a positive number " \
        "of bytes, optionally with a unit B, kB, MB, GB, KiB, MiB or GiB (e.g. 1048576, '64MiB' or '1.5GiB'; a fraction needs a unit above B), at most 4611686018427387904 bytes",
    }.each do |(options, klass), message|
      e = assert_raises(klass, options.inspect) { store(**options) }
      assert_equal message, e.message
    end
    e = assert_raises(ArgumentError) { store(coder: ActiveSupport::Cache::NullCoder) }
    assert_equal "ActiveSupport::Cache::AcornStore.new: coder: the store writes values by acorn's convention " \
                 "across languages, and Marshal for what it cannot hold; another coder " \
                 "(ActiveSupport::Cache::NullCoder) is not taken", e.message
    assert_equal 1, (store(coder: Marshal).write("k", 1) && store.read("k"))
    e = assert_raises(TypeError) { ActiveSupport::Cache::AcornStore.new(5) }
    assert_equal "ActiveSupport::Cache::AcornStore.new: path must be a String or Pathname (the database " \
                 "file, or \":memory:\"); got Integer", e.message
  end

  # ActiveSupport's AutoloadingCacheBehavior (activesupport/test/cache/
  # behaviors/autoloading_cache_behavior.rb), which FileStore, MemCacheStore
  # and RedisCacheStore pass: an entry holding objects of classes not loaded
  # yet reads once Marshal has autoloaded them (ActiveSupport's
  # core_ext/marshal), through the classic autoloader of ActiveSupport 6.1.
  def with_autoloading_fixtures
    require "active_support/dependencies"
    dir = File.join(@dir, "autoloading_fixtures")
    FileUtils.mkdir_p(dir)
    File.write(File.join(dir, "em.rb"), "class EM\nend\n")
    File.write(File.join(dir, "class_folder.rb"), "class ClassFolder\nend\n")
    prior_paths = ActiveSupport::Dependencies.autoload_paths
    prior_mechanism = ActiveSupport::Dependencies.mechanism
    ActiveSupport::Dependencies.autoload_paths = [dir]
    ActiveSupport::Dependencies.mechanism = :load
    yield
  ensure
    ActiveSupport::Dependencies.autoload_paths = prior_paths
    ActiveSupport::Dependencies.mechanism = prior_mechanism
    ActiveSupport::Dependencies.clear
  end

  def remove_constants(*constants)
    constants.each { |c| Object.send(:remove_const, c) if Object.const_defined?(c, false) }
  end

  def test_simple_autoloading
    s = store
    with_autoloading_fixtures { s.write("foo", EM.new) }
    remove_constants(:EM)
    ActiveSupport::Dependencies.clear
    with_autoloading_fixtures { assert_kind_of EM, s.read("foo") }
  ensure
    remove_constants(:EM)
  end

  def test_two_classes_autoloading
    s = store
    with_autoloading_fixtures { s.write("foo", [EM.new, ClassFolder.new]) }
    remove_constants(:EM, :ClassFolder)
    ActiveSupport::Dependencies.clear
    with_autoloading_fixtures do
      loaded = s.read("foo")
      assert_kind_of Array, loaded
      assert_equal 2, loaded.size
      assert_kind_of EM, loaded[0]
      assert_kind_of ClassFolder, loaded[1]
    end
  ensure
    remove_constants(:EM, :ClassFolder)
  end

  def test_threads_share_one_store
    s = store
    threads = Array.new(4) do |t|
      Thread.new do
        200.times do |i|
          s.write("t#{t}/#{i}", i)
          raise "t#{t}/#{i}" unless s.read("t#{t}/#{i}") == i
        end
      end
    end
    threads.each(&:join)
    assert_equal 800, s.stats[:entries]
  end
end

# The convention of docs/cache.md, "Values across languages", from Ruby's
# side: what the store writes, byte for byte as SQL sees it, and what it
# reads of each form another face (or acorn 0.2) writes.
class AcornStoreValuesTest < Minitest::Test
  Entry = ActiveSupport::Cache::Entry

  def setup
    @dir = Dir.mktmpdir("acorn-values")
    @path = File.join(@dir, "cache.db")
    @store = ActiveSupport::Cache.lookup_store(:acorn_store, @path)
    @foreign = ActiveSupport::Cache::AcornStore::ForeignValueError
    @db = SqliteAcorn.load(SQLite3::Database.new(@path))
    @db.busy_timeout = 5000
  end

  def teardown
    @db.close
    FileUtils.rm_rf(@dir)
  end

  # typeof(value) and the hex of its first bytes (up to 8), as SQL sees the
  # row; listing reads no value through the store.
  def stored(key)
    @db.get_first_row("SELECT typeof(value), hex(substr(CAST(value AS BLOB), 1, 8)), quote(value) " \
                      "FROM rails_cache WHERE key = ?", [key])
  end

  def put(key, sql_value, *binds)
    @db.execute("INSERT INTO rails_cache(key, value) VALUES (?, #{sql_value})", [key, *binds])
  end

  def self.hex(bytes)
    bytes.b.unpack1("H*").upcase
  end

  def hex(bytes)
    self.class.hex(bytes)
  end

  def marked(letter, payload)
    SQLite3::Blob.new("\xFF#{letter}".b + payload.b)
  end

  # [name, value, typeof, first bytes' hex, quote(value) or nil] for every
  # row of the convention's table that Ruby writes.
  ROWS = [
    ["utf8", "héllo", "text", hex("héllo"), "'héllo'"],
    ["ascii", "plain".encode("US-ASCII"), "text", hex("plain"), "'plain'"],
    ["empty text", "", "text", "", "''"],
    ["bytes", "\x89PNG\r\n\x1a\n".b, "blob", "89504E470D0A1A0A", "X'89504E470D0A1A0A'"],
    ["bytes with 0xFF", "\xFFj[]".b, "blob", "FF6A5B5D", "X'FF6A5B5D'"],
    ["empty bytes", "".b, "blob", "", "X''"],
    ["int", 42, "integer", hex("42"), "42"],
    ["int64 max", 2**63 - 1, "integer", hex("92233720"), "9223372036854775807"],
    ["int64 min", -2**63, "integer", hex("-9223372"), "-9223372036854775808"],
    ["int past int64", 2**63, "text", hex("\xFFi922337".b), nil],
    ["int below int64", -2**63 - 1, "text", hex("\xFFi-92233".b), nil],
    ["float", 2.5, "real", hex("2.5"), "2.5"],
    ["whole float", 2.0, "real", hex("2.0"), "2.0"],
    ["infinity", Float::INFINITY, "real", hex("Inf"), "Inf"],
    ["nan", Float::NAN, "text", hex("\xFFfnan".b), nil],
    ["true", true, "text", hex("\xFFjtrue".b), nil],
    ["false", false, "text", hex("\xFFjfalse".b), nil],
    ["nil", nil, "text", hex("\xFFjnull".b), nil],
    ["array", [1, "two", 3.5, true, nil, [2**53 - 1]], "text", hex("\xFFj[1,\"tw".b), nil],
    ["hash", { "a" => { "b" => [] } }, "text", hex("\xFFj{\"a\":{".b), nil],
  ].freeze

  # Values that need Ruby to read them: TEXT marked 'm'.
  MARSHALED = {
    "symbol" => :ready,
    "symbol keys" => { a: 1 },
    "a Time" => Time.at(0).utc,
    "an Integer past JSON's" => [2**53],
    "a NaN inside" => [Float::NAN],
    "Latin-1" => "café".encode("ISO-8859-1"),
    "invalid UTF-8" => "\xFFabc".dup.force_encoding("UTF-8"),
    "invalid inside" => ["\xC3".dup.force_encoding("UTF-8")],
    "bytes inside" => ["\x00".b],
    "a subclass" => ActiveSupport::SafeBuffer.new("<b>"),
    "a Hash with a default" => Hash.new(0).merge("a" => 1),
    "deep" => (1..101).reduce(1) { |v, _| [v] },
  }.freeze

  def same?(a, b)
    return b.is_a?(Float) && b.nan? if a.is_a?(Float) && a.nan?
    return false unless a.class == b.class
    return same_list?(a, b) if a.is_a?(Array)
    a == b && (!a.is_a?(String) || a.encoding == b.encoding || a.ascii_only?)
  end

  def same_list?(a, b)
    a.size == b.size && a.zip(b).all? { |x, y| same?(x, y) }
  end

  def test_every_row_of_the_convention_is_stored_as_the_table_says
    ROWS.each do |name, value, type, head, quoted|
      assert_equal true, @store.write(name, value), name
      got = stored(name)
      assert_equal [type, head], got[0, 2], name
      assert_equal quoted, got[2], name if quoted
      back = @store.read(name)
      assert same?(value, back), "#{name}: wrote #{value.inspect}, read #{back.inspect}"
    end
    assert_equal "\xFFi9223372036854775808".b, @db.get_first_value(
      "SELECT CAST(value AS BLOB) FROM rails_cache WHERE key = 'int past int64'"
    )
    assert_equal %(\xFFj[1,"two",3.5,true,null,[9007199254740991]]).b, @db.get_first_value(
      "SELECT CAST(value AS BLOB) FROM rails_cache WHERE key = 'array'"
    )
    assert_equal "9007199254740991", @db.get_first_value(
      "SELECT json_extract(CAST(substr(CAST(value AS BLOB), 3) AS TEXT), '$[5][0]') FROM rails_cache WHERE key = 'array'"
    ).to_s
  end

  def test_what_json_and_the_columns_cannot_hold_is_a_marshal_dump_of_the_entry
    MARSHALED.each do |name, value|
      @store.write(name, value)
      assert_equal ["text", "FF6D04086F3A2041"], stored(name)[0, 2], name
      back = @store.read(name)
      assert same?(value, back), "#{name}: #{back.inspect}"
      assert_equal value.class, back.class, name
    end
    assert_equal "café".encode("ISO-8859-1").encoding, @store.read("Latin-1").encoding
  end

  def test_an_entry_that_needs_more_than_its_value_is_a_marshal_dump
    @store.write("versioned", "v1", version: 1)
    @store.write("racing", 5, expires_in: 60, race_condition_ttl: 10)
    @store.write("expiring", 5, expires_in: 60)
    assert_equal ["text", "FF6D04086F3A2041"], stored("versioned")[0, 2]
    assert_equal ["text", "FF6D04086F3A2041"], stored("racing")[0, 2]
    assert_equal ["integer", hex("5")], stored("expiring")[0, 2]
    assert_equal "v1", @store.read("versioned", version: 1)
    assert_nil @store.read("versioned", version: 2)
    life = @db.get_first_value("SELECT expires - created FROM rails_cache WHERE key = 'expiring'")
    assert_in_delta 60_000, life, 50
    life = @db.get_first_value("SELECT expires - created FROM rails_cache WHERE key = 'racing'")
    assert_in_delta 70_000, life, 50
  end

  def test_each_form_written_in_sql_reads_as_the_table_says
    put("text", "'héllo'")
    put("blob", "x'89504e47'")
    put("integer", "42")
    put("real", "2.5")
    put("big", "CAST(? AS TEXT)", marked("i", "123456789012345678901234567890"))
    put("nan", "CAST(? AS TEXT)", marked("f", "nan"))
    put("json", "CAST(? AS TEXT)", marked("j", '{"a":[1,2.0,"é",null,true]}'))
    put("json null", "CAST(? AS TEXT)", marked("j", "null"))
    put("json false", "CAST(? AS TEXT)", marked("j", "false"))
    expect = {
      "text" => "héllo", "blob" => "\x89PNG".b, "integer" => 42, "real" => 2.5,
      "big" => 123456789012345678901234567890, "nan" => Float::NAN,
      "json" => { "a" => [1, 2.0, "é", nil, true] }, "json null" => nil, "json false" => false,
    }
    expect.each do |key, value|
      back = @store.read(key)
      assert same?(value, back), "#{key}: #{back.inspect}"
      assert @store.exist?(key), key
    end
    assert_equal Encoding::UTF_8, @store.read("text").encoding
    assert_equal Encoding::BINARY, @store.read("blob").encoding
    assert_equal expect.keys.sort, @store.read_multi(*expect.keys).keys.sort
    assert_equal 42, @store.fetch("integer") { flunk "a stored INTEGER is a hit" }
    assert_equal true, @store.fetch("json null") { flunk "a stored null is a hit" }.nil?
  end

  # acorn 0.2's Python Cache wrote an int or a float as TEXT marked 'i' or
  # 'f' and Python's repr(); its Ruby store, a Marshal dump of the Entry as a
  # BLOB (compressed, or with a version, as ActiveSupport made it).
  def test_values_acorn_0_2_wrote_still_read
    { "i42" => 42, "i-7" => -7, "f2.5" => 2.5, "f1e+100" => 1e100, "f-0.0" => -0.0, "finf" => Float::INFINITY,
      "f-inf" => -Float::INFINITY, "fnan" => Float::NAN }.each do |form, value|
      put(form, "CAST(? AS TEXT)", marked(form[0], form[1..]))
      back = @store.read(form)
      assert same?(value, back), "#{form}: #{back.inspect}"
    end
    assert_equal 43, (@store.increment("i42") && @store.read("i42"))
    old = { "plain" => Entry.new({ a: 1 }, compress: false),
            "text" => Entry.new("hello", compress: false),
            "compressed" => Entry.new("x" * 5000, compress: true),
            "versioned" => Entry.new("v2 body", version: "2"),
            "expiring" => Entry.new(7, expires_in: 3600) }
    old.each { |key, entry| put(key, "?", Marshal.dump(entry)) }
    assert_equal "blob", stored("compressed")[0]
    assert_equal hex("\x04\bo: Act".b), stored("compressed")[1]
    assert_equal({ a: 1 }, @store.read("plain"))
    assert_equal "hello", @store.read("text")
    assert_equal "x" * 5000, @store.read("compressed")
    assert_equal "v2 body", @store.read("versioned", version: "2")
    assert_nil @store.read("versioned", version: "3")
    assert_equal 7, @store.read("expiring")
    assert_equal({ "plain" => { a: 1 }, "text" => "hello" }, @store.read_multi("plain", "text"))
  end

  ALL = ROWS.to_h { |name, value, *| [name, value] }.merge(MARSHALED).freeze

  def missing(store, prefix)
    ALL.reject { |k, v| same?(v, store.read("#{prefix}#{k}")) }.keys
  end

  # Each round: both processes write every value at once, then each reads
  # what the other wrote; and both write one key in turn with values of
  # every form while reading it: a read gives one of them, whole.
  def test_two_processes_read_what_each_other_writes_in_wal_and_in_a_rollback_journal
    %i[wal delete].each do |mode|
      path = File.join(@dir, "#{mode}.db")
      s = ActiveSupport::Cache.lookup_store(:acorn_store, path, journal_mode: mode)
      forms = ALL.values
      50.times do |round|
        go_r, go_w = IO.pipe
        done_r, done_w = IO.pipe
        report_r, report_w = IO.pipe
        pid = fork do
          go_w.close
          done_r.close
          report_r.close
          go_r.read(1)
          ALL.each { |k, v| s.write("child:#{k}", v) }
          done_w.write("w")
          done_w.close
          go_r.read(1)
          bad = missing(s, "parent:")
          40.times do |i|
            s.write("shared", forms[(i * 7) % forms.size])
            back = s.read("shared")
            bad << "shared: #{back.inspect}" unless forms.any? { |v| same?(v, back) }
          end
          report_w.write(bad.join(", "))
          report_w.close
          exit!(bad.empty? ? 0 : 1)
        end
        go_r.close
        done_w.close
        report_w.close
        go_w.write("g")
        ALL.each { |k, v| s.write("parent:#{k}", v) }
        assert_equal "w", done_r.read(1)
        assert_equal [], missing(s, "child:"), "#{mode} round #{round}"
        go_w.write("g")
        go_w.close
        40.times do |i|
          s.write("shared", forms[(i * 5) % forms.size])
          back = s.read("shared")
          assert forms.any? { |v| same?(v, back) }, "#{mode} round #{round}: shared read #{back.inspect}"
        end
        report = report_r.read
        Process.wait(pid)
        assert $?.success?, "#{mode} round #{round}: the child read wrong: #{report}"
      end
    end
  end

  def test_a_value_ruby_does_not_read_is_an_error_naming_the_key_the_format_and_who_wrote_it
    put("pickled", "CAST(? AS TEXT)", marked("p", "\x80\x04K*.".b))
    put("keyv", "CAST(? AS TEXT)", marked("k", "custom"))
    put("newer", "CAST(? AS TEXT)", marked("z", "whatever"))
    put("mark only", "CAST(x'ff' AS TEXT)")
    put("bad int", "CAST(? AS TEXT)", marked("i", "12a"))
    put("bad json", "CAST(? AS TEXT)", marked("j", "{"))
    n = "ActiveSupport::Cache::AcornStore"
    {
      "pickled" => ["pickle", "Python",
                    %(#{n}#read: the value at "pickled" is a Python pickle (TEXT marked 0xFF 'p'), written by Python: Ruby does not read it)],
      "keyv" => ["keyv", "Node",
                 %(#{n}#read: the value at "keyv" is a string of Keyv's (TEXT marked 0xFF 'k'), written by Node: Ruby does not read it)],
      "newer" => ["unknown", nil,
                  %(#{n}#read: the value at "newer" is a TEXT marked 0xFF and then 'z', a format acorn #{SqliteAcorn::VERSION} does not know: written by a newer acorn)],
      "mark only" => ["unknown", nil,
                      %(#{n}#read: the value at "mark only" is a TEXT marked 0xFF and then nothing after it, a format acorn #{SqliteAcorn::VERSION} does not know: written by a newer acorn)],
      "bad int" => ["malformed", nil,
                    %(#{n}#read: the value at "bad int" is a TEXT marked 0xFF 'i' whose rest does not read as an integer: "12a")],
    }.each do |key, (format, language, message)|
      e = assert_raises(@foreign, key) { @store.read(key) }
      assert_equal [message, key, format, language], [e.message, e.key, e.format, e.language]
      e = assert_raises(@foreign, key) { @store.fetch(key) { "overwritten" } }
      assert_equal message.sub("#read:", "#fetch:"), e.message
      e = assert_raises(@foreign, key) { @store.read_multi("text", key) }
      assert_equal message.sub("#read:", "#read_multi:"), e.message
      assert_equal true, @store.exist?(key), key
    end
    assert_match(/whose rest is not JSON/, assert_raises(@foreign) { @store.read("bad json") }.message)
    assert_equal ["text", "FF7080044B2A2E"], stored("pickled")[0, 2], "fetch did not overwrite it"
    assert_equal true, @store.delete("pickled")
    assert_nil @store.read("pickled")
  end
end
