# Values across languages, Ruby's side (see cross.py): `write FILE` stores
# one value of each kind under 'rb/<kind>' with the ActiveSupport store;
# `read FILE` prints `key<TAB>canonical` for every key of the table.
require "json"
require "sqlite3"
require "active_support"
require "active_support/cache"
require "active_support/cache/acorn_store"

VALUES = {
  "str" => "h\u00e9llo \u2603",
  "str_empty" => "",
  "bytes" => "\x00\xff\x01".b,
  "bytes_empty" => "".b,
  "int" => 42,
  "int_unsafe" => -9007199254740993,
  "int_big" => 2**70,
  "float" => 1.5,
  "float_whole" => 2.0,
  "inf" => Float::INFINITY,
  "nan" => Float::NAN,
  "true" => true,
  "null" => nil,
  "list" => [1, "a", nil, true, 2.5],
  "dict" => { "a" => 1, "b" => [true, nil], "\u00e9" => "x" },
  "own" => :sym, # Marshal: only Ruby reads it
}.freeze

def sort_keys(v)
  case v
  when Array then v.map { |x| sort_keys(x) }
  when Hash then v.keys.sort.to_h { |k| [k, sort_keys(v[k])] }
  else v
  end
end

def canon(v)
  case v
  when true, false then "bool:#{v}"
  when nil then "null"
  when String
    v.encoding == Encoding::BINARY ? "bytes:#{v.unpack1('H*')}" : "str:#{v.b.unpack1('H*')}"
  when Integer then "num:#{v}"
  when Float
    return "nan" if v.nan?
    return(v.positive? ? "num:inf" : "num:-inf") if v.infinite?
    v == v.floor ? "num:#{v.to_i}" : "num:#{v}"
  when Array, Hash then "json:#{JSON.generate(sort_keys(v))}"
  else "own:#{v.inspect}"
  end
end

op, path = ARGV
store = ActiveSupport::Cache.lookup_store(:acorn_store, path, table: "cache")
if op == "write"
  VALUES.each { |kind, v| store.write("rb/#{kind}", v) }
else
  db = SQLite3::Database.new(path)
  SqliteAcorn.load(db)
  keys = db.execute("SELECT key FROM cache").map(&:first).sort
  db.close
  keys.each do |k|
    out = begin
      if store.exist?(k)
        canon(store.read(k))
      else
        "MISS"
      end
    rescue StandardError => e
      m = e.message
      "error:" + (m.include?("pickle") ? "pickle" : m.include?("Marshal") ? "marshal" : m.include?("Keyv") ? "keyv" : "other")
    end
    puts "#{k}\t#{out}"
  end
end
