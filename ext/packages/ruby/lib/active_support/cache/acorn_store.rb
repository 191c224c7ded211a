# frozen_string_literal: true

# ActiveSupport::Cache::AcornStore: a Rails cache store on acorn's cache
# table, bounded in bytes, evicting the least recently used entries (or the
# oldest sets, policy: :fifo), shared by every process on the file.
#
#   config.cache_store = :acorn_store, "tmp/cache.db", { capacity: "256MiB" }
#   # or
#   store = ActiveSupport::Cache.lookup_store(:acorn_store, "tmp/cache.db", capacity: "256MiB")
#
# ActiveSupport finds it by the symbol: lookup_store(:acorn_store, ...)
# requires "active_support/cache/acorn_store" (this file, on the gem's load
# path) and takes ActiveSupport::Cache::AcornStore.
#
# Each entry is one row of the table: key = the normalized key (with its
# namespace), value = the ActiveSupport::Cache::Entry as the store's coder
# dumps it (Marshal by default: value, version, expiry, compression), tag =
# the namespace, ttl = the time the row may live (the entry's expires_in,
# plus race_condition_ttl when that is given, so that a stale entry can
# still be served while one process recomputes it; as RedisCacheStore does
# with its 5 minutes).  acorn reclaims a row whose ttl has passed, so
# expired entries do not hold capacity.
#
# docs/ruby.md in acorn's repository specifies all of it.
require "monitor"
require "sqlite3"
require "active_support"
require "active_support/cache"
# Marshal.load that autoloads the classes it names, as FileStore,
# MemCacheStore and RedisCacheStore have it
require "active_support/core_ext/marshal"
require "sqlite_acorn"

module ActiveSupport
  module Cache
    class AcornStore < Store
      prepend Strategy::LocalCache

      POLICIES = %i[lru fifo].freeze
      TABLE_NAME = /\A[A-Za-z_][A-Za-z0-9_]*\z/.freeze
      MAX_TTL = 1e12            # the table's bound on ttl, in seconds
      BUSY_TIMEOUT_MS = 5000
      IN_CHUNK = 500            # keys per SELECT ... WHERE key IN (...)
      # Connections a forked child found open: never used or closed there
      # (the parent owns them), only kept from the garbage collector.
      INHERITED = []

      attr_reader :path, :table

      def self.supports_cache_versioning?
        true
      end

      # path: the database file (created if missing), or ":memory:".
      # capacity: bytes, an Integer or a String with a unit ("64MiB"); a new
      #   table gets it (acorn's default, 1GiB, without it); an existing one
      #   is set to it if it differs (a lower one evicts at once).
      # policy: :lru or :fifo, fixed when the table is created; given for an
      #   existing table, it must be the table's.
      # table: the cache table's name in the file ("rails_cache").
      # Other options are ActiveSupport's (namespace, expires_in, compress,
      # coder, race_condition_ttl, ...).
      def initialize(path, capacity: nil, policy: nil, table: "rails_cache", **options)
        super(options)
        @path = check_path(path)
        @capacity = check_capacity(capacity)
        @policy = check_policy(policy)
        @table = check_table(table)
        @monitor = Monitor.new
        @pid = nil
        @db = nil
        synchronize { connection }
      end

      # A nil name would reach the table as a NULL key: refused here, in the
      # name of the method it was given to.
      %i[read delete exist?].each do |m|
        define_method(m) do |name, options = nil|
          check_name(m, name)
          super(name, options)
        end
      end

      def write(name, value, options = nil)
        check_name(:write, name)
        super
      end

      def fetch(name, options = nil, &block)
        check_name(:fetch, name)
        super
      end

      # Increments the integer stored at name by amount and returns the new
      # value; nil, writing nothing, if there is none (as FileStore and
      # MemoryStore do).  Atomic across processes: one write transaction.
      def increment(name, amount = 1, options = nil)
        check_name(:increment, name)
        modify_value(name, amount, options)
      end

      # increment with -amount.
      def decrement(name, amount = 1, options = nil)
        check_name(:decrement, name)
        modify_value(name, -amount, options)
      end

      # Deletes every entry of the namespace (options[:namespace], or the
      # store's), found by the tag's index; without a namespace, every entry
      # of the table.  Returns the number of entries deleted.
      def clear(options = nil)
        ns = namespace_of(merged_options(options))
        in_transaction do |db|
          if ns
            db.execute(%(DELETE FROM "#{@table}" WHERE tag = ?), [ns])
          else
            db.execute(%(DELETE FROM "#{@table}"))
          end
          db.changes
        end
      end

      # Reclaims the rows whose ttl has passed (acorn's purge command; every
      # write does it too) and returns how many it reclaimed.
      def cleanup(options = nil)
        in_transaction do |db|
          before = expired_count(db)
          db.execute(%(INSERT INTO "#{@table}"("#{@table}") VALUES ('purge')))
          expired_count(db) - before
        end
      end

      # Deletes the entries whose key (with its namespace) matches matcher, a
      # Regexp, as FileStore does; with a namespace only that namespace's
      # entries are listed (by the tag's index).  Listing keys reads no
      # value, so it is not a use.  Returns the number deleted.
      def delete_matched(matcher, options = nil)
        unless matcher.is_a?(Regexp)
          raise ArgumentError, "#{self.class.name}#delete_matched: matcher must be a Regexp; " \
                               "got #{matcher.class} #{matcher.inspect}"
        end
        options = merged_options(options)
        instrument(:delete_matched, matcher.inspect) do
          pattern = key_matcher(matcher, options)
          ns = namespace_of(options)
          in_transaction do |db|
            keys = if ns
                     db.execute(%(SELECT key FROM "#{@table}" WHERE tag = ?), [ns])
                   else
                     db.execute(%(SELECT key FROM "#{@table}"))
                   end
            keys.count { |(key)| key.is_a?(String) && key.match?(pattern) && delete_row(db, key) }
          end
        end
      end

      # The table's counters, as cache_stats gives them: capacity, entries,
      # bytes, hits, misses (nil under :fifo), evictions, expired.
      def stats
        synchronize do
          db = connection
          row = db.execute("SELECT * FROM cache_stats(?)", [@table]).first
          %i[capacity entries bytes hits misses evictions expired].zip(row).to_h
        end
      end

      def inspect # :nodoc:
        "#<#{self.class.name} path=#{@path.inspect} table=#{@table.inspect} options=#{@options.inspect}>"
      end

      private
        def check_name(method, name)
          return unless name.nil?

          raise ArgumentError, "#{self.class.name}##{method}: the key must not be nil"
        end

        def synchronize(&block)
          @monitor.synchronize(&block)
        end

        # The connection of this process: a child of fork opens its own (a
        # SQLite connection must not cross a fork), once.
        def connection
          return @db if @pid == Process.pid
          INHERITED << @db if @db
          @db = open_database
          @pid = Process.pid
          @db
        end

        def open_database
          db = SQLite3::Database.new(@path)
          SqliteAcorn.load(db)
          db.busy_timeout = BUSY_TIMEOUT_MS
          db.execute("PRAGMA journal_mode = WAL") unless @path == ":memory:"
          db.execute("PRAGMA synchronous = NORMAL")
          db.execute("BEGIN IMMEDIATE")
          begin
            create_table(db)
            db.execute("COMMIT")
          ensure
            if db.transaction_active?
              db.execute("ROLLBACK")
              db.close
            end
          end
          @get = db.prepare("SELECT cache_get(?, ?)")
          @set = db.prepare(%(INSERT INTO "#{@table}"(key, value, ttl, tag) VALUES (?, ?, ?, ?)))
          @has = db.prepare(%(SELECT 1 FROM "#{@table}" WHERE key = ?))
          @del = db.prepare(%(DELETE FROM "#{@table}" WHERE key = ?))
          db
        end

        # Creates the table, or checks an existing one's policy and sets its
        # capacity; inside one write transaction, so two processes starting
        # at once agree.
        def create_table(db)
          exists = db.get_first_value("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", [@table])
          if exists
            hits = db.get_first_row("SELECT hits, capacity FROM cache_stats(?)", [@table])
            policy = hits[0].nil? ? :fifo : :lru
            if @policy && @policy != policy
              raise ArgumentError, "#{self.class.name}.new: policy: #{@policy.inspect}, but the table " \
                                   "#{@table.inspect} in #{@path} has policy #{policy.inspect} (fixed when " \
                                   "a table is created: give #{policy.inspect}, or another table:)"
            end
            if @capacity
              db.execute(%(INSERT INTO "#{@table}"("#{@table}", value) VALUES ('capacity', ?)), [@capacity])
            end
          else
            args = []
            args << "capacity = '#{@capacity.to_s.gsub("'", "''")}'" if @capacity
            args << "policy = #{@policy}" if @policy
            db.execute(%(CREATE VIRTUAL TABLE "#{@table}" USING cache(#{args.join(', ')})))
          end
        rescue SQLite3::SQLException => e
          raise ArgumentError, "#{self.class.name}.new: #{e.message}"
        end

        def read_entry(key, **options)
          payload = synchronize do
            connection
            row = @get.execute!(@table, key).first
            @get.reset!
            row && row[0]
          end
          deserialize_entry(payload)
        end

        def write_entry(key, entry, **options)
          payload = serialize_entry(entry)
          ttl = row_ttl(entry, options)
          tag = namespace_of(merged_options(options))
          if options[:unless_exist]
            in_transaction do |db|
              next false if @has.execute!(key).any?
              insert_row(key, payload, ttl, tag)
            end
          else
            synchronize do
              connection
              insert_row(key, payload, ttl, tag)
            end
          end
        end

        # One statement: atomic without a transaction of its own.
        def delete_entry(key, **options)
          synchronize { delete_row(connection, key) }
        end

        # One SELECT ... WHERE key IN (...) per IN_CHUNK keys: each value
        # read is a use, each key not found a miss.
        def read_multi_entries(names, **options)
          keys = names.to_h { |name| [name, normalize_key(name, options)] }
          payloads = {}
          synchronize do
            db = connection
            keys.values.uniq.each_slice(IN_CHUNK) do |slice|
              marks = Array.new(slice.size, "?").join(", ")
              db.execute(%(SELECT key, value FROM "#{@table}" WHERE key IN (#{marks})), slice).each do |k, v|
                payloads[k] = v
              end
            end
          end
          names.each_with_object({}) do |name, results|
            entry = deserialize_entry(payloads[keys[name]])
            next unless entry
            if entry.expired?
              delete_entry(keys[name], **options)
            elsif !entry.mismatched?(normalize_version(name, options))
              results[name] = entry.value
            end
          end
        end

        # In one write transaction.
        def write_multi_entries(hash, **options)
          in_transaction { hash.each { |key, entry| write_entry(key, entry, **options) } }
        end

        def delete_multi_entries(keys, **options)
          in_transaction { keys.count { |key| delete_entry(key, **options) } }
        end

        def modify_value(name, amount, options)
          options = merged_options(options)
          in_transaction do
            if (num = read(name, options))
              num = num.to_i + amount
              write(name, num, options)
              num
            end
          end
        end

        # A payload the coder cannot read (written by something else) is a
        # miss, as in FileStore.
        def deserialize_entry(payload)
          entry = super
          entry if entry.is_a?(Entry)
        rescue TypeError, ArgumentError, EncodingError => e
          logger&.error("#{self.class.name}: cannot read an entry (#{e.class}: #{e.message})")
          nil
        end

        # Seconds the row lives: until the entry expires, plus
        # race_condition_ttl (a stale entry must still be there to be served
        # while it is recomputed); at least options[:expires_in] (what
        # ActiveSupport passes when it puts a stale entry back); nil (never)
        # for an entry that does not expire.
        def row_ttl(entry, options)
          at = entry.expires_at
          return nil unless at
          ttl = at - Time.now.to_f + options[:race_condition_ttl].to_f
          ttl = [ttl, options[:expires_in].to_f].max if options[:expires_in]
          ttl.clamp(0.0, MAX_TTL)
        end

        def insert_row(key, payload, ttl, tag)
          @set.execute!(key, payload, ttl, tag)
          true
        rescue SQLite3::SQLException => e
          raise unless e.message.start_with?("cache: entry of ")
          # larger than the whole capacity: not stored (and nothing evicted)
          logger&.error("#{self.class.name}: #{e.message}")
          false
        end

        def delete_row(db, key)
          @del.execute!(key)
          db.changes > 0
        end

        def in_transaction
          synchronize do
            db = connection
            return yield db if db.transaction_active?
            # not SQLite3::Database#transaction, which returns true, not the
            # block's value; any way out of the block but its end rolls back
            db.execute("BEGIN IMMEDIATE")
            committed = false
            begin
              result = yield db
              db.execute("COMMIT")
              committed = true
              result
            ensure
              db.execute("ROLLBACK") if !committed && db.transaction_active?
            end
          end
        end

        def expired_count(db)
          db.get_first_value("SELECT expired FROM cache_stats(?)", [@table])
        end

        def namespace_of(options)
          ns = options[:namespace]
          ns = ns.call if ns.respond_to?(:call)
          ns&.to_s
        end

        def check_path(path)
          return path if path.is_a?(String)
          return path.to_path if path.respond_to?(:to_path)
          raise TypeError, "#{self.class.name}.new: path must be a String or Pathname (the database " \
                           "file, or \":memory:\"); got #{path.class}"
        end

        def check_capacity(capacity)
          case capacity
          when nil then nil
          when Integer
            return capacity if capacity.positive?
            raise ArgumentError, "#{self.class.name}.new: capacity must be a positive number of bytes " \
                                 "or a String with a unit B, kB, MB, GB, KiB, MiB or GiB (\"64MiB\"); got #{capacity}"
          when String then capacity
          else
            raise TypeError, "#{self.class.name}.new: capacity must be an Integer number of bytes or a " \
                             "String with a unit B, kB, MB, GB, KiB, MiB or GiB (\"64MiB\"); got #{capacity.class}"
          end
        end

        def check_policy(policy)
          return nil if policy.nil?
          p = policy.respond_to?(:to_sym) ? policy.to_sym : policy
          return p if POLICIES.include?(p)
          raise ArgumentError, "#{self.class.name}.new: policy must be :lru or :fifo; got #{policy.inspect}"
        end

        def check_table(table)
          t = table.is_a?(Symbol) ? table.to_s : table
          return t if t.is_a?(String) && TABLE_NAME.match?(t)
          raise ArgumentError, "#{self.class.name}.new: table must be a name of letters, digits and _ " \
                               "(not starting with a digit); got #{table.inspect}"
        end
    end
  end
end
