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
# namespace), tag = the namespace, ttl = the time the row may live, and
# value = the entry by the convention every face of acorn follows
# (docs/cache.md, "Values across languages"), so that Python and Node read
# what Ruby writes and Ruby reads what they write:
#
#   an entry that needs nothing but its value (no version, no
#   race_condition_ttl; its expiry is the row's ttl) whose value is
#     a String in UTF-8 (valid) or US-ASCII    TEXT
#     a String in ASCII-8BIT (binary)          BLOB
#     an Integer in -2**63..2**63-1            INTEGER
#     another Integer                          TEXT: 0xFF 'i' decimal digits
#     a Float (infinities too)                 REAL
#     Float::NAN                               TEXT: 0xFF 'f' "nan"
#     true, false, nil, and Arrays and Hashes  TEXT: 0xFF 'j' JSON
#       (String keys) of those, of finite Floats and of Integers in
#       +-(2**53-1)
#   any other entry                            TEXT: 0xFF 'm' Marshal.dump(entry)
#
# The value of an entry stored as itself is stored whole: ActiveSupport's
# compression applies to the Marshal dumps only (another language could not
# read a deflated Marshal dump).  A TEXT that starts with the byte 0xFF is
# bound as a BLOB and CAST to TEXT (no UTF-8 text starts with 0xFF, so it
# never is a String of the user's).  Reading: an unmarked TEXT is a UTF-8
# String, a BLOB a binary String, except a BLOB that is a Marshal dump of an
# ActiveSupport::Cache::Entry (what acorn 0.2's store wrote), which is that
# entry; 'p' (a Python pickle), 'k' (a Keyv string) and letters this
# version does not know raise ForeignValueError, naming the key, the
# format and who wrote it: a value that is there is never a miss.
#
# The row's ttl: for an entry stored as itself, the entry's own lifetime;
# for a Marshal dump, until the entry expires plus race_condition_ttl (a
# stale entry must still be there to be served while one process
# recomputes it; RedisCacheStore adds 5 minutes for the same reason).  acorn
# reclaims a row whose ttl has passed, so expired entries do not hold
# capacity.
#
# increment and decrement add to an INTEGER in SQL (UPDATE ... SET value =
# value + ?), in one write transaction with the read of the sum, so that
# processes of any language adding to one value lose nothing.  Every public
# method runs named: its errors (a key that gives no String, a value it
# cannot store or read, SQLite's in their own class) start with
# "ActiveSupport::Cache::AcornStore#method: ".
#
# docs/ruby.md in acorn's repository specifies all of it.
require "json"
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
      JOURNAL_MODES = %i[wal delete truncate persist].freeze
      TABLE_NAME = /\A[A-Za-z_][A-Za-z0-9_]*\z/.freeze
      MAX_TTL = 1e12            # the table's bound on ttl, in seconds
      BUSY_TIMEOUT_MS = 5000
      IN_CHUNK = 500            # keys per SELECT ... WHERE key IN (...)
      # Connections a forked child found open: never used or closed there
      # (the parent owns them), only kept from the garbage collector.
      INHERITED = []

      # A value stored at a key that this store cannot give back as a Ruby
      # value: a Python pickle, a Keyv string, a value marked by a newer
      # acorn, or a marked value whose payload does not read.  key is the
      # row's key, format what the value is ("pickle", "keyv", "unknown",
      # "malformed"), language who wrote it.
      class ForeignValueError < StandardError
        attr_reader :key, :format, :language

        def initialize(message = nil, key: nil, format: nil, language: nil)
          super(message)
          @key = key
          @format = format
          @language = language
        end
      end

      MARK = 0xFF               # the first byte of a marked TEXT value
      INT64 = (-(2**63)..(2**63 - 1)).freeze
      JSON_INT = (-(2**53 - 1)..(2**53 - 1)).freeze
      JSON_DEPTH = 100          # JSON.generate's max_nesting
      # The first bytes of Marshal.dump(an ActiveSupport::Cache::Entry): a
      # BLOB that starts so was written by acorn 0.2's store
      ENTRY_DUMP = "\x04\bo: ActiveSupport::Cache::Entry".b.freeze
      # format, and who writes it, of the letters the store knows but does
      # not read
      FOREIGN = {
        "p" => ["pickle", "Python", "a Python pickle"],
        "k" => ["keyv", "Node", "a string of Keyv's"],
      }.freeze

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
      # journal_mode: :wal (the default), or a rollback journal (:delete,
      #   :truncate, :persist), set by every connection the store opens;
      #   nil leaves the file's as it is.  The file has one: give every
      #   store on it the same.
      # Other options are ActiveSupport's (namespace, expires_in, compress,
      # race_condition_ttl, ...); coder only as Marshal, the coder the
      # convention uses.
      def initialize(path, capacity: nil, policy: nil, table: "rails_cache", journal_mode: :wal, **options)
        if options.key?(:coder) && !options[:coder].equal?(Marshal)
          raise ArgumentError, "#{self.class.name}.new: coder: the store writes values by acorn's convention " \
                               "across languages, and Marshal for what it cannot hold; another coder " \
                               "(#{options[:coder].inspect}) is not taken"
        end
        super(options)
        @path = check_path(path)
        @capacity = check_capacity(capacity)
        @policy = check_policy(policy)
        @table = check_table(table)
        @journal_mode = check_journal_mode(journal_mode)
        @monitor = Monitor.new
        @pid = nil
        @db = nil
        run_sql { nil }
      end

      # Every public method runs named: an error of the store's (a key that
      # gives no String, a value it cannot store or read, SQLite's) names
      # it, "ActiveSupport::Cache::AcornStore#write: ...", whatever path
      # through ActiveSupport and the local cache led there.  Errors of the
      # caller's own code (fetch's block) pass as they are.
      def read(name, options = nil)
        named(:read) { super }
      end

      # A value the store cannot read (ForeignValueError) is there all the
      # same: true.
      def exist?(name, options = nil)
        named(:exist?) { super }
      rescue ForeignValueError
        true
      end

      def write(name, value, options = nil)
        named(:write) { super }
      rescue TypeError => e # Marshal's, for a value it cannot dump
        raise renamed(e, :write)
      end

      def fetch(name, options = nil)
        named(:fetch) { super }
      end

      def delete(name, options = nil)
        named(:delete) { super }
      end

      def read_multi(*names)
        named(:read_multi) { super }
      end

      def fetch_multi(*names)
        named(:fetch_multi) { super }
      end

      def write_multi(hash, options = nil)
        named(:write_multi) { super }
      rescue TypeError => e
        raise renamed(e, :write_multi)
      end

      def delete_multi(names, options = nil)
        named(:delete_multi) { super }
      end

      # Adds amount (an Integer) to the Integer stored at name and returns
      # the new value; nil, writing nothing, if there is none (as FileStore
      # and MemoryStore do).  An INTEGER value is added to in SQL (UPDATE
      # ... SET value = value + ?), in a write transaction with the read
      # that gives the new value: atomic across processes.  The entry keeps
      # its expiry (the row's ttl) and namespace; options[:expires_in] does
      # not change it.  A value that is not an Integer is a TypeError.
      def increment(name, amount = 1, options = nil)
        named(:increment) { modify_value(:increment, name, amount, options) }
      end

      # increment by -amount.
      def decrement(name, amount = 1, options = nil)
        named(:decrement) { modify_value(:decrement, name, amount, options) }
      end

      # Deletes every entry of the namespace (options[:namespace], or the
      # store's), found by the tag's index; without a namespace, every entry
      # of the table.  Returns the number of entries deleted.
      def clear(options = nil)
        named(:clear) do
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
      end

      # Reclaims the rows whose ttl has passed (acorn's purge command; every
      # write does it too) and returns how many it reclaimed.
      def cleanup(options = nil)
        named(:cleanup) do
          in_transaction do |db|
            before = expired_count(db)
            db.execute(%(INSERT INTO "#{@table}"("#{@table}") VALUES ('purge')))
            expired_count(db) - before
          end
        end
      end

      # Deletes the entries whose key (with its namespace) matches matcher, a
      # Regexp or a String, which is a regular expression's source (FileStore
      # matches with key.match(matcher), which reads a String so); with a
      # namespace only that namespace's entries are listed (by the tag's
      # index).  Only TEXT keys in valid UTF-8 are matched (a key another
      # language wrote as a BLOB or an INTEGER is no String of a name).
      # Listing keys reads no value, so it is not a use.  Returns the number
      # deleted.
      def delete_matched(matcher, options = nil)
        named(:delete_matched) do
          regexp = matcher_regexp(matcher)
          options = merged_options(options)
          instrument(:delete_matched, matcher.inspect) do
            pattern = key_matcher(regexp, options)
            ns = namespace_of(options)
            in_transaction do |db|
              keys = if ns
                       db.execute(%(SELECT key FROM "#{@table}" WHERE tag = ?), [ns])
                     else
                       db.execute(%(SELECT key FROM "#{@table}"))
                     end
              keys.count do |(key)|
                key.is_a?(String) && key.encoding == Encoding::UTF_8 && key.valid_encoding? &&
                  key.match?(pattern) && delete_row(db, key)
              end
            end
          end
        end
      end

      # The table's counters, as cache_stats gives them: capacity, entries,
      # bytes, hits, misses (nil under :fifo), evictions, expired.
      def stats
        named(:stats) do
          run_sql do |db|
            row = db.execute("SELECT * FROM cache_stats(?)", [@table]).first
            %i[capacity entries bytes hits misses evictions expired].zip(row).to_h
          end
        end
      end

      def inspect # :nodoc:
        "#<#{self.class.name} path=#{@path.inspect} table=#{@table.inspect} options=#{@options.inspect}>"
      end

      private
        METHOD = :acorn_store_method # the fiber's innermost public method
        private_constant :METHOD

        def named(method)
          outer = Thread.current[METHOD]
          Thread.current[METHOD] = method
          yield
        ensure
          Thread.current[METHOD] = outer
        end

        # "ActiveSupport::Cache::AcornStore#write", or ".new" outside them.
        def where
          method = Thread.current[METHOD]
          method ? "#{self.class.name}##{method}" : "#{self.class.name}.new"
        end

        # error with the method in front of its message, if it has none yet.
        def renamed(error, method = nil)
          return error if error.message.start_with?(self.class.name)
          error.exception("#{method ? "#{self.class.name}##{method}" : where}: #{error.message}")
        end

        # ActiveSupport's, refusing a key that gives no String (nil, [],
        # [nil], true): it would reach the table as NULL, or fail in
        # ActiveSupport or the driver with a message naming neither.
        def normalize_key(key, options = nil)
          expanded = expanded_key(key)
          unless expanded.is_a?(String)
            raise ArgumentError, "#{where}: the key must not be nil" if key.nil?
            raise ArgumentError, "#{where}: the key #{key.inspect} gives #{expanded.inspect}, not a String " \
                                 "(a key is a String, or an object whose cache_key or to_param is one)"
          end
          namespace_key(expanded, options)
        end

        def matcher_regexp(matcher)
          case matcher
          when Regexp then matcher
          when String
            begin
              Regexp.new(matcher)
            rescue RegexpError => e
              raise ArgumentError, "#{where}: matcher #{matcher.inspect} is not a regular expression: #{e.message}"
            end
          else
            raise ArgumentError, "#{where}: matcher must be a Regexp, or a String that is one's source (as " \
                                 "FileStore takes it); got #{matcher.class} #{matcher.inspect}"
          end
        end

        def synchronize(&block)
          @monitor.synchronize(&block)
        end

        # Runs the block with this process's connection, under the monitor;
        # SQLite's errors come out naming the method, in their own class.
        def run_sql
          synchronize { yield connection }
        rescue SQLite3::Exception => e
          raise renamed(e)
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
          db.execute("PRAGMA journal_mode = #{@journal_mode}") if @journal_mode && @path != ":memory:"
          # NORMAL is safe in WAL (the last commits may not survive a power
          # cut, the file does); in a rollback journal SQLite's FULL stays
          if db.get_first_value("PRAGMA journal_mode") == "wal"
            db.execute("PRAGMA synchronous = NORMAL")
          end
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
          @set_marked = db.prepare(%(INSERT INTO "#{@table}"(key, value, ttl, tag) VALUES (?, CAST(? AS TEXT), ?, ?)))
          @has = db.prepare(%(SELECT 1 FROM "#{@table}" WHERE key = ?))
          # the value alone: the row keeps its ttl and tag
          @add = db.prepare(%(UPDATE "#{@table}" SET value = value + ? WHERE key = ? AND typeof(value) = 'integer'))
          @put = db.prepare(%(UPDATE "#{@table}" SET value = ? WHERE key = ?))
          @put_marked = db.prepare(%(UPDATE "#{@table}" SET value = CAST(? AS TEXT) WHERE key = ?))
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
          value = run_sql do
            row = @get.execute!(@table, key).first
            @get.reset!
            row && row[0]
          end
          decode_entry(key, value)
        end

        def write_entry(key, entry, **options)
          value, marked, native = encode_entry(entry, options)
          ttl = native ? own_ttl(entry) : row_ttl(entry, options)
          tag = namespace_of(merged_options(options))
          set = marked ? @set_marked : @set
          if options[:unless_exist]
            in_transaction do |db|
              next false if @has.execute!(key).any?
              insert_row(set, key, value, ttl, tag)
            end
          else
            run_sql { insert_row(set, key, value, ttl, tag) }
          end
        end

        # One statement: atomic without a transaction of its own.
        def delete_entry(key, **options)
          run_sql { |db| delete_row(db, key) }
        end

        # One SELECT ... WHERE key IN (...) per IN_CHUNK keys: each value
        # read is a use, each key not found a miss.
        def read_multi_entries(names, **options)
          keys = names.to_h { |name| [name, normalize_key(name, options)] }
          payloads = {}
          run_sql do |db|
            keys.values.uniq.each_slice(IN_CHUNK) do |slice|
              marks = Array.new(slice.size, "?").join(", ")
              db.execute(%(SELECT key, value FROM "#{@table}" WHERE key IN (#{marks})), slice).each do |k, v|
                payloads[k] = v
              end
            end
          end
          names.each_with_object({}) do |name, results|
            entry = decode_entry(keys[name], payloads[keys[name]])
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

        # An INTEGER whose sum stays in int64 is added to in SQL; any other
        # stored Integer (past int64, marked 'i', in a Marshal dump of
        # acorn 0.2 or of an entry with a version) is added to in Ruby and
        # written back in the form the convention gives the sum: as itself
        # for an entry that needs nothing else, a Marshal dump keeping the
        # version and expiry for one that does.  Either way one UPDATE of
        # the value alone, so the row keeps its ttl and tag.
        def modify_value(op, name, amount, options)
          unless amount.is_a?(Integer)
            raise ArgumentError, "#{where}: amount must be an Integer; got " \
                                 "#{amount.class} #{amount.inspect}"
          end
          delta = op == :decrement ? -amount : amount
          options = merged_options(options)
          key = normalize_key(name, options)
          instrument(op, name, amount: amount) do
            in_transaction do |db|
              value = @get.execute!(@table, key).first&.first
              @get.reset!
              if value.is_a?(Integer) && INT64.cover?(value + delta)
                @add.execute!(delta, key)
                next value + delta if db.changes == 1
              end
              add_in_ruby(op, key, value, delta, normalize_version(name, options))
            end
          end
        end

        def add_in_ruby(op, key, value, delta, version)
          entry = decode_entry(key, value)
          return nil if entry.nil? || entry.expired? || entry.mismatched?(version)
          old = entry.value
          unless old.is_a?(Integer)
            raise TypeError, "#{where}: the value at #{key.inspect} is #{old.class}, not an Integer"
          end
          sum = old + delta
          if entry.version || entry.expires_at
            kept = Entry.new(sum, version: entry.version, compress: false)
            kept.expires_at = entry.expires_at
            @put_marked.execute!("\xFFm".b << Marshal.dump(kept), key)
          else
            bind, marked = encode_value(sum)
            (marked ? @put_marked : @put).execute!(bind, key)
          end
          sum
        end

        # [value to bind, marked (bound as a BLOB and CAST to TEXT), native
        # (the value itself, not a Marshal dump)] for entry, by the
        # convention of docs/cache.md.
        def encode_entry(entry, options)
          if entry.version.nil? && options[:race_condition_ttl].to_f <= 0
            native = encode_value(entry.value)
            return native + [true] if native
          end
          ["\xFFm".b << Marshal.dump(entry), true, false]
        end

        # [value to bind, marked] for a value stored as itself, nil for one
        # that is not (only exact Strings, Arrays and Hashes: a subclass, an
        # ActiveSupport::SafeBuffer say, would read back as its parent).
        def encode_value(value)
          case value
          when Integer
            INT64.cover?(value) ? [value, false] : ["\xFFi".b << value.to_s, true]
          when Float
            value.nan? ? ["\xFFfnan".b, true] : [value, false]
          when String
            return nil unless value.instance_of?(String)
            return [value, false] if value.encoding == Encoding::BINARY
            [value, false] if text?(value)
          when nil, true, false, Array, Hash
            ["\xFFj".b << ::JSON.generate(value).b, true] if json_value?(value, 0)
          end
        end

        def text?(string)
          (string.encoding == Encoding::UTF_8 || string.encoding == Encoding::US_ASCII) &&
            string.valid_encoding?
        end

        # Whether value reads back the same from JSON in every language.
        def json_value?(value, depth)
          case value
          when nil, true, false then true
          when Integer then JSON_INT.cover?(value)
          when Float then value.finite?
          when String then value.instance_of?(String) && text?(value)
          when Array
            value.instance_of?(Array) && depth < JSON_DEPTH &&
              value.all? { |v| json_value?(v, depth + 1) }
          when Hash
            value.instance_of?(Hash) && depth < JSON_DEPTH && value.default.nil? &&
              value.default_proc.nil? && !value.compare_by_identity? &&
              value.all? { |k, v| k.instance_of?(String) && text?(k) && json_value?(v, depth + 1) }
          else false
          end
        end

        # The Entry for a stored value (nil: none).  A Marshal dump that
        # does not load (a class the application no longer has) is a miss,
        # logged, as in FileStore.
        def decode_entry(key, value)
          case value
          when nil then nil
          when String
            if value.encoding == Encoding::BINARY
              return load_entry(value) if value.start_with?(ENTRY_DUMP)
              Entry.new(value, compress: false)
            elsif value.getbyte(0) == MARK
              decode_marked(key, value.b)
            else
              Entry.new(value, compress: false)
            end
          else
            Entry.new(value, compress: false)
          end
        end

        def decode_marked(key, bytes)
          letter = bytes.byteslice(1, 1)
          payload = bytes.byteslice(2, bytes.bytesize)
          case letter
          when "m" then load_entry(payload)
          when "i"
            unless /\A[-+]?[0-9]+\z/.match?(payload)
              raise malformed(key, letter, "does not read as an integer", payload)
            end
            Entry.new(Integer(payload, 10), compress: false)
          when "f" then Entry.new(decode_float(key, payload), compress: false)
          when "j" then Entry.new(decode_json(key, payload), compress: false)
          else
            kind, language, what = FOREIGN[letter]
            if kind
              raise ForeignValueError.new(
                "#{where}: the value at #{key.inspect} is #{what} (TEXT marked 0xFF " \
                "'#{letter}'), written by #{language}: Ruby does not read it",
                key: key, format: kind, language: language
              )
            end
            shown = if letter.empty? then "nothing after it"
                    elsif letter.ord.between?(0x21, 0x7E) then "'#{letter}'"
                    else format("the byte 0x%02X", letter.ord)
                    end
            raise ForeignValueError.new(
              "#{where}: the value at #{key.inspect} is a TEXT marked 0xFF and then " \
              "#{shown}, a format acorn #{SqliteAcorn::VERSION} does not know: written by a newer acorn",
              key: key, format: "unknown", language: nil
            )
          end
        end

        # Python's repr() of a float, as acorn 0.2's Python Cache wrote it,
        # or "nan".
        def decode_float(key, payload)
          case payload.downcase
          when "nan", "+nan", "-nan" then Float::NAN
          when "inf", "+inf", "infinity", "+infinity" then Float::INFINITY
          when "-inf", "-infinity" then -Float::INFINITY
          else
            unless /\A[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\z/.match?(payload)
              raise malformed(key, "f", "does not read as a float", payload)
            end
            Float(payload)
          end
        end

        def decode_json(key, payload)
          text = payload.force_encoding(Encoding::UTF_8)
          raise malformed(key, "j", "is not UTF-8", payload) unless text.valid_encoding?
          ::JSON.parse(text, max_nesting: false)
        rescue ::JSON::ParserError => e
          raise malformed(key, "j", "is not JSON (#{e.message.lines.first.strip})", payload)
        end

        def malformed(key, letter, what, payload)
          shown = payload.bytesize > 40 ? "#{payload.byteslice(0, 40).inspect}..." : payload.inspect
          ForeignValueError.new(
            "#{where}: the value at #{key.inspect} is a TEXT marked 0xFF '#{letter}' whose " \
            "rest #{what}: #{shown}",
            key: key, format: "malformed", language: nil
          )
        end

        def load_entry(dump)
          entry = Marshal.load(dump)
          return entry if entry.is_a?(Entry)
          logger&.error("#{self.class.name}: a Marshal dump of a #{entry.class}, not an entry: a miss")
          nil
        rescue TypeError, ArgumentError, NameError, EncodingError => e
          logger&.error("#{self.class.name}: cannot load an entry (#{e.class}: #{e.message}): a miss")
          nil
        end

        # An entry stored as itself lives as long as it does: past its
        # expiry nothing could tell a reader it is stale.
        def own_ttl(entry)
          at = entry.expires_at
          at && (at - Time.now.to_f).clamp(0.0, MAX_TTL)
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

        def insert_row(set, key, value, ttl, tag)
          set.execute!(key, value, ttl, tag)
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
          run_sql do |db|
            next yield db if db.transaction_active?
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

        def check_journal_mode(mode)
          return nil if mode.nil?
          m = mode.respond_to?(:to_sym) ? mode.to_sym.downcase : mode
          return m if JOURNAL_MODES.include?(m)
          raise ArgumentError, "#{self.class.name}.new: journal_mode must be :wal, :delete, :truncate, " \
                               ":persist or nil (the file's as it is); got #{mode.inspect}"
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
