# bench/as_readthrough.rb (run by bench/as_readthrough.sh, which lays out
# the gem's lib/ around this build's acorn.so): ActiveSupport's cache API as
# a read-through cache under Zipf traffic, on AcornStore against
# ActiveSupport's FileStore.
#
# For each N keys and Zipf exponent s: every request draws a key (rank r
# with probability ~ 1/r^s, from a seeded generator, the same sequence for
# both sides), reads it with store.read, and on a miss writes it with
# store.write (1 KiB of random bytes, compress: false on both sides, so
# neither spends time in zlib).  AcornStore's table holds 10% of the keys'
# bytes (capacity = 0.1 * N * the bytes one entry counts for, measured: the
# key and the Marshal-dumped Entry); FileStore has no bound on bytes or
# entries (it keeps a file per key until cleanup or clear), so it keeps
# every key it was given, and its size on disk is reported.  AcornStore's
# file is WAL, synchronous = NORMAL (the store's settings); FileStore writes
# each entry to a temporary file and renames it (no fsync).  Each side first
# runs WARMUP requests (not measured), then REQUESTS measured ones, in
# chunks of CHUNK, alternating between the sides and which side goes first,
# so both see the same machine load.
#
# Usage: ruby as_readthrough.rb DIR [N...]   environment:
#   AS_REQUESTS (default 20000), AS_WARMUP (10000), AS_CHUNK (1000)
require "fileutils"
require "sqlite3"
require "active_support"
require "active_support/cache"
require "active_support/cache/acorn_store"

dir = ARGV.shift or abort "usage: ruby as_readthrough.rb DIR [N...]"
sizes = ARGV.map { |a| Integer(a) }
REQUESTS = Integer(ENV.fetch("AS_REQUESTS", "20000"))
WARMUP = Integer(ENV.fetch("AS_WARMUP", "10000"))
CHUNK = Integer(ENV.fetch("AS_CHUNK", "1000"))
if REQUESTS % CHUNK != 0 || WARMUP % CHUNK != 0
  abort "AS_REQUESTS and AS_WARMUP must be multiples of AS_CHUNK (#{CHUNK})"
end
VALUE = Random.new(1).bytes(1024)

# Ranks 0..n-1 with P(r) ~ 1/(r+1)^s: a cumulative table and a binary search.
def zipf_keys(n, s, count, seed)
  cdf = Array.new(n)
  sum = 0.0
  n.times { |i| sum += 1.0 / ((i + 1)**s); cdf[i] = sum }
  rng = Random.new(seed)
  Array.new(count) { "k#{cdf.bsearch_index { |c| c >= rng.rand * sum } || n - 1}" }
end

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

Side = Struct.new(:name, :store, :keys, :pos, :hits, :gets, :secs)

def run(side, n, measured)
  t0 = now
  hits = 0
  store = side.store
  n.times do
    k = side.keys[side.pos]
    side.pos += 1
    if store.read(k).nil?
      store.write(k, VALUE)
    else
      hits += 1
    end
  end
  return unless measured
  side.secs += now - t0
  side.hits += hits
  side.gets += n
end

def fmt(x)
  x.round.to_s.reverse.scan(/\d{1,3}/).join(",").reverse
end

def mib(bytes)
  format("%.1f", bytes / 1048576.0)
end

def file_bytes(path)
  ["", "-wal"].sum { |x| File.exist?(path + x) ? File.size(path + x) : 0 }
end

def readthrough(dir, n, s)
  keys = zipf_keys(n, s, WARMUP + REQUESTS, 20260101 + n + (s * 100).round)

  fa = File.join(dir, "acorn-#{n}-#{s}.db")
  probe = ActiveSupport::Cache::AcornStore.new(fa, table: "probe", compress: false)
  probe.write("k0", VALUE)
  db = SqliteAcorn.load(SQLite3::Database.new(fa))
  entry = db.get_first_value("SELECT size FROM probe WHERE key = 'k0'")
  db.execute("DROP TABLE probe")
  db.close
  capacity = (0.1 * n * entry).round
  acorn = ActiveSupport::Cache::AcornStore.new(fa, capacity: capacity, compress: false)
  a = Side.new("AcornStore", acorn, keys, 0, 0, 0, 0.0)

  fdir = File.join(dir, "file-#{n}-#{s}")
  b = Side.new("FileStore", ActiveSupport::Cache::FileStore.new(fdir, compress: false), keys, 0, 0, 0, 0.0)

  (WARMUP / CHUNK).times do
    run(a, CHUNK, false)
    run(b, CHUNK, false)
  end
  (REQUESTS / CHUNK).times do |c|
    first, second = c.even? ? [a, b] : [b, a]
    run(first, CHUNK, true)
    run(second, CHUNK, true)
  end

  st = acorn.stats
  files = Dir.glob(File.join(fdir, "**", "*")).select { |f| File.file?(f) }
  fbytes = files.sum { |f| File.size(f) }
  fdisk = Integer(`du -sk #{fdir}`.split.first) * 1024
  rate = ->(x) { x.gets / x.secs }
  ratio = ->(x) { x.hits.to_f / x.gets }
  puts
  puts "#{fmt(n)} keys, Zipf s = #{s}, 1 KiB values, #{fmt(WARMUP)} requests of warm-up then " \
       "#{fmt(REQUESTS)} measured per side, chunks of #{CHUNK} interleaved"
  puts "| side | requests/s | hit ratio | entries | bytes of entries | on disk |"
  puts "|---|--:|--:|--:|--:|--:|"
  puts "| AcornStore, capacity #{fmt(capacity)} B (10% of #{fmt(n)} x #{entry} B) | #{fmt(rate.(a))} | " \
       "#{format('%.3f', ratio.(a))} | #{fmt(st[:entries])} | #{fmt(st[:bytes])} | #{mib(file_bytes(fa))} MiB (db+wal) |"
  puts "| FileStore, no bound | #{fmt(rate.(b))} | #{format('%.3f', ratio.(b))} | #{fmt(files.size)} | " \
       "#{fmt(fbytes)} | #{mib(fdisk)} MiB (du) |"
  puts "ratio AcornStore/FileStore: requests/s #{format('%.2f', rate.(a) / rate.(b))}, " \
       "hit ratio #{format('%.2f', ratio.(a) / ratio.(b))}"
  FileUtils.rm_rf(fdir)
  [n, s, rate.(a) / rate.(b), ratio.(a), ratio.(b)]
end

puts "#{RUBY_DESCRIPTION}; sqlite3 gem #{SQLite3::VERSION} (SQLite #{SQLite3::SQLITE_VERSION}), " \
     "activesupport #{ActiveSupport.version}"
summary = []
sizes.each do |n|
  [0.99, 0.7].each { |s| summary << readthrough(dir, n, s) }
end
puts
puts "Summary: requests/s of AcornStore over FileStore (AcornStore holds 10% of the keys' bytes, FileStore all)"
puts "| keys | s | requests/s ratio | hit ratio AcornStore | hit ratio FileStore |"
puts "|--:|--:|--:|--:|--:|"
summary.each { |n, s, r, ha, hb| puts "| #{fmt(n)} | #{s} | #{format('%.2f', r)} | #{format('%.3f', ha)} | #{format('%.3f', hb)} |" }
