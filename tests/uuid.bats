#!/usr/bin/env bats
# The id functions of ext/ids/uuid.c, through the sqlite3 CLI.

load test_helper
load uuid


@test "every text generator makes canonical lowercase ids of its version and variant 10" {
  n=$(big 100000)
  for g in "uuid4():4" "gen_random_uuid():4" "uuid7():7" "uuid8():8" \
           "uuid7(1700000000000):7" "uuid8(1700000000000):8"; do
    f=${g%:*} v=${g##*:}
    run acorn_sql "WITH g AS MATERIALIZED (SELECT $f AS u FROM generate_series(1,$n))
                   SELECT count(*) FROM g WHERE length(u)=36 AND u GLOB '$(canon "$v")';"
    assert_success
    assert_output "$n" || fail "generator $f"
  done
}

@test "every blob generator makes 16 bytes with its version nibble and variant 10" {
  n=$(big 100000)
  for g in "uuid4_blob():4" "uuid7_blob():7" "uuid8_blob():8" \
           "uuid7_blob(0):7" "uuid8_blob(281474976710655):8"; do
    f=${g%:*} v=${g##*:}
    run acorn_sql "WITH g AS MATERIALIZED (SELECT $f AS b FROM generate_series(1,$n))
                   SELECT count(*) FROM g WHERE typeof(b)='blob' AND length(b)=16
                     AND substr(hex(b),13,1)='$v'
                     AND substr(hex(b),17,1) IN ('8','9','A','B');"
    assert_success
    assert_output "$n" || fail "generator $f"
  done
}

# (tests/long/uuid.bats: 1,000,000 of each)
@test "no generator repeats a value in 100,000" {
  check_unique "$(big 100000)"
}

# (tests/long/uuid.bats: 1,000,000 of each)
@test "uuid7() and uuid8() strictly increase over 100,000 values made in one statement" {
  check_increasing "$(big 100000)"
}

@test "uuid7 and uuid8 stay strictly increasing across 4 threads on 4 connections, no repeats" {
  run wrap "$BUILD/uuid_proc" threads "$ACORN" "$(big 100000)"
  assert_success
  assert_output_contains "ok 4 threads"
}

@test "after fork() parent and child make different values" {
  run wrap "$BUILD/uuid_proc" fork "$ACORN"
  assert_success
  assert_output_contains "ok parent and child"
}

@test "uuid_timestamp gives back the ms given to uuid7(ms) and uuid8(ms), text and blob" {
  run acorn_sql "SELECT uuid_timestamp(uuid7(1700000000000)), uuid_timestamp(uuid8(1700000000000)),
                        uuid_timestamp(uuid7_blob(1700000000000)), uuid_timestamp(uuid8_blob(1700000000000)),
                        uuid_timestamp(uuid7(0)), uuid_timestamp(uuid8(281474976710655));"
  assert_success
  assert_output "1700000000000|1700000000000|1700000000000|1700000000000|0|281474976710655"
}

@test "uuid7(ms) fixes only the time bits: the rest is random" {
  run acorn_sql "SELECT substr(uuid7(1700000000000),1,13), count(DISTINCT u)
                   FROM (SELECT uuid7(1700000000000) u FROM generate_series(1,1000) GROUP BY value);"
  assert_success
  assert_output "018bcfe5-6800|1000"
}

@test "uuid_timestamp of uuid7() and uuid8() is the current unix time in ms" {
  run acorn_sql "SELECT abs(uuid_timestamp(uuid7()) - CAST((julianday('now')-2440587.5)*86400000 AS INTEGER)) < 5000,
                        abs(uuid_timestamp(uuid8()) - CAST((julianday('now')-2440587.5)*86400000 AS INTEGER)) < 5000;"
  assert_success
  assert_output "1|1"
}

@test "uuid_timestamp is NULL for the versions that hold no time: 0, 2 to 5, 9 to 15" {
  for v in 0 2 3 4 5 9 a b c d e f; do
    run acorn_sql "SELECT quote(uuid_timestamp('00000000-0000-${v}000-8000-000000000000')),
                          quote(uuid_extract_timestamp('00000000-0000-${v}000-8000-000000000000'));"
    assert_success
    assert_output "NULL|NULL" || fail "version $v"
  done
  run acorn_sql "SELECT quote(uuid_timestamp(uuid4())), quote(uuid_timestamp(uuid5(uuid_nil(), 'a')));"
  assert_success
  assert_output "NULL|NULL"
}

@test "uuid_version reads the version nibble" {
  run acorn_sql "SELECT uuid_version(uuid4()), uuid_version(uuid7_blob()), uuid_version(uuid8()),
                        uuid_version('00000000-0000-0000-0000-000000000000'),
                        uuid_version('ffffffff-ffff-ffff-ffff-ffffffffffff');"
  assert_success
  assert_output "4|7|8|0|15"
}

@test "round trips: uuid_str(uuid_blob(x)) = x and uuid_blob(uuid_str(b)) = b" {
  n=$(big 100000)
  # a table, not a CTE: SQLite 3.38 evaluates a MATERIALIZED CTE used once
  # again at each reference, which would compare two different ids
  run acorn_sql "CREATE TABLE g AS SELECT uuid7() x, uuid4_blob() b FROM generate_series(1,$n);
                 SELECT count(*) FROM g WHERE uuid_str(uuid_blob(x)) = x AND uuid_blob(uuid_str(b)) = b
                    AND uuid_str(b) = uuid_str(uuid_str(b)) AND uuid_blob(b) = b;"
  assert_success
  assert_output "$n"
}

# The input table of docs/uuid.md, row by row: input, then uuid_str's result.
@test "parsing accepts what SQLite's ext/misc/uuid.c accepts and gives NULL for the rest" {
  c=0123abcd-ef45-4789-8abc-def012345678
  while IFS='|' read -r input expect; do
    run acorn_sql "SELECT quote(uuid_str($input)), quote(uuid_blob($input)) IS 'NULL',
                          quote(uuid_version($input)) IS 'NULL';"
    assert_success
    if [ "$expect" = NULL ]; then
      assert_output "NULL|1|1" || fail "input $input"
    else
      assert_output "'$expect'|0|0" || fail "input $input"
    fi
  done <<ROWS
'$c'|$c
'0123ABCD-EF45-4789-8ABC-DEF012345678'|$c
'{$c}'|$c
'{$c'|$c
'$c}'|$c
'0123abcdef4547898abcdef012345678'|$c
'{0123abcdef4547898abcdef012345678}'|$c
'-01-23-ab-cd-ef-45-47-89-8a-bc-de-f0-12-34-56-78'|$c
'{-0123abcd-ef45-4789-8abc-def012345678}'|$c
x'0123abcdef4547898abcdef012345678'|$c
NULL|NULL
''|NULL
'{}'|NULL
' $c'|NULL
'$c '|NULL
'$c-'|NULL
'0123abcd--ef45-4789-8abc-def012345678'|NULL
'0123abc-d-ef45-4789-8abc-def012345678'|NULL
'0123abcd-ef45-4789-8abc-def01234567'|NULL
'0123abcd-ef45-4789-8abc-def0123456789'|NULL
'0123abcd-ef45-4789-8abc-def01234567g'|NULL
'{{$c}}'|NULL
'$c}x'|NULL
'urn:uuid:$c'|NULL
x'0123abcdef4547898abcdef0123456'|NULL
x'0123abcdef4547898abcdef01234567800'|NULL
x''|NULL
42|NULL
1.5|NULL
ROWS
}

@test "a 16-byte blob is taken as the UUID's bytes whatever its version" {
  run acorn_sql "SELECT uuid_str(x'00112233445566778899aabbccddeeff'), uuid_version(x'00112233445566778899aabbccddeeff'),
                        uuid_timestamp(x'0011223344557fff8899aabbccddeeff');"
  assert_success
  assert_output "00112233-4455-6677-8899-aabbccddeeff|6|73588229205"
}

@test "uuid7(ms) and friends reject ms outside 0..2^48-1 or not an integer" {
  for call in "uuid7(-1)" "uuid7(281474976710656)" "uuid7(1.5)" "uuid7('1700000000000')" \
              "uuid7(NULL)" "uuid7(x'01')" "uuid7_blob(-1)" "uuid8(281474976710656)" "uuid8_blob(1e300)" \
              "uuid8(-0.5)" "uuid7(281474976710655.5)" "uuid7(281474976710656.0)" "uuid7(-9223372036854775808)"; do
    name=${call%%(*}
    run acorn_sql "SELECT $call;"
    assert_failure "$name: ms must be an integer in 0..281474976710655" || fail "call $call"
  done
}

@test "a time below 10^11 is unix seconds, as sqlean's uuid7(seconds) takes; from 10^11 milliseconds" {
  run acorn_sql "SELECT uuid_timestamp(uuid7(1733668387)), uuid_timestamp(uuid7(1733668387000)),
                        uuid_timestamp(uuid7(99999999999)), uuid_timestamp(uuid7(100000000000)),
                        uuid_timestamp(uuid8(1)), uuid_timestamp(uuid7_blob(1733668387.0)),
                        substr(uuid7(1733668387), 1, 13) = substr(uuid7(1733668387000), 1, 13);"
  assert_success
  assert_output "1733668387000|1733668387000|99999999999000|100000000000|1000|1733668387000|1"
}

@test "ms may be a REAL with no fractional part, as JavaScript numbers bind" {
  run acorn_sql "SELECT uuid_timestamp(uuid7(1700000000000.0)), uuid_timestamp(uuid8_blob(1e3)),
                        uuid_timestamp(uuid7(0.0)), uuid_timestamp(uuid8(281474976710655.0));"
  assert_success
  assert_output "1700000000000|1000000|0|281474976710655"
}

# reload_many N: one sqlite3 process that N times opens a new database (closing
# the old one, the only user of acorn, so the library may be unloaded), loads
# acorn and makes a uuid7 and a uuid8.
reload_many() {
  local i
  for i in $(seq "$1"); do
    printf '.open :memory:\n.load %s\nSELECT 7, uuid7();\nSELECT 8, uuid8();\n' "$ACORN"
  done | wrap "$SQLITE3" -batch -bail -separator ' '
}

@test "the order survives closing the last connection and loading acorn again" {
  n=$(big 2000)
  run reload_many "$n"
  assert_success
  v7=$(echo "$output" | awk '$1==7 {print $2}')
  v8=$(echo "$output" | awk '$1==8 {print $2}')
  [ "$(echo "$v7" | wc -l)" -eq "$n" ] || fail "expected $n uuid7 values: $output"
  [ "$v7" = "$(echo "$v7" | sort)" ] && [ -z "$(echo "$v7" | uniq -d)" ] || fail "uuid7 out of order across reloads"
  [ "$v8" = "$(echo "$v8" | sort)" ] && [ -z "$(echo "$v8" | uniq -d)" ] || fail "uuid8 out of order across reloads"
}

@test "wrong argument counts are SQLite's own errors" {
  run acorn_sql "SELECT uuid4(1);"
  assert_failure "wrong number of arguments to function uuid4()"
  run acorn_sql "SELECT uuid7(1, 2);"
  assert_failure "wrong number of arguments to function uuid7()"
  run acorn_sql "SELECT uuid_str();"
  assert_failure "wrong number of arguments to function uuid_str()"
}

@test "converters are deterministic and usable in an index; generators are not" {
  run acorn_sql "CREATE TABLE t(x); CREATE INDEX i ON t(uuid_str(x));
                 INSERT INTO t VALUES (uuid7_blob());
                 SELECT count(*) FROM t WHERE uuid_str(x) IS NOT NULL;"
  assert_success
  assert_output "1"
  run acorn_sql "CREATE TABLE t(x); CREATE INDEX i ON t(uuid7());"
  assert_failure "non-deterministic functions prohibited in index expressions"
}

@test "generators are innocuous: usable in a trigger under trusted_schema=OFF" {
  run acorn_sql "PRAGMA trusted_schema=OFF;
                 CREATE TABLE t(id, v); CREATE TABLE log(id);
                 CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES (uuid7()); END;
                 CREATE VIEW w AS SELECT uuid_str(uuid4_blob()) AS u;
                 INSERT INTO t VALUES (1, 2);
                 SELECT count(*) FROM log WHERE uuid_version(id)=7; SELECT length(u) FROM w;"
  assert_success
  assert_output "1
36"
}

@test "uuid7 and uuid8 hold order with an injected clock held still, stepped back, jumping ahead" {
  run wrap "$BUILD/uuid_clock"
  assert_success
  assert_output_contains "ok uuid7 and uuid8 hold order"
}

@test "aliases of the peers make what the functions they name make" {
  n=$(big 10000)
  for g in "uuid():4" "uuidv4():4" "uuid4_str():4" "uuidv7():7" "uuid7_str():7"; do
    f=${g%:*} v=${g##*:}
    run acorn_sql "WITH g AS MATERIALIZED (SELECT $f AS u FROM generate_series(1,$n))
                   SELECT count(*) FROM g WHERE length(u)=36 AND u GLOB '$(canon "$v")';"
    assert_success
    assert_output "$n" || fail "generator $f"
  done
}

@test "uuidv7() and uuid7_str() share uuid7()'s sequence: interleaved they strictly increase" {
  run acorn_sql "CREATE TABLE t(i INTEGER PRIMARY KEY, u);
                 INSERT INTO t SELECT value, CASE value % 3 WHEN 0 THEN uuid7() WHEN 1 THEN uuidv7()
                   ELSE uuid7_str() END FROM generate_series(1,30000);
                 SELECT count(*), sum(b.u <= a.u) FROM t a JOIN t b ON b.i = a.i+1;"
  assert_success
  assert_output "29999|0"
}

@test "uuid_nil and uuid_max are all zeros and all ones, as text and blob" {
  run acorn_sql "SELECT uuid_nil(), uuid_max(), hex(uuid_nil_blob()), hex(uuid_max_blob()),
                        uuid_version(uuid_nil()), uuid_version(uuid_max()),
                        uuid_str(uuid_nil_blob()) = uuid_nil(), uuid_str(uuid_max_blob()) = uuid_max();"
  assert_success
  assert_output "00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff|00000000000000000000000000000000|FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF|0|15|1|1"
}

@test "uuid5 gives RFC 9562's and Python's known answers, namespace as text or blob" {
  dns=6ba7b810-9dad-11d1-80b4-00c04fd430c8
  run acorn_sql "SELECT uuid5('$dns', 'python.org'), uuid5(x'6ba7b8109dad11d180b400c04fd430c8', 'python.org'),
                        uuid5('{6BA7B810-9DAD-11D1-80B4-00C04FD430C8}', 'python.org'),
                        hex(uuid5_blob('$dns', 'python.org')),
                        uuid5('6ba7b811-9dad-11d1-80b4-00c04fd430c8', 'http://python.org/'),
                        uuid5('$dns', 'www.example.com');"
  assert_success
  assert_output "886313e1-3b8a-5372-9b90-0c9aee199e5d|886313e1-3b8a-5372-9b90-0c9aee199e5d|886313e1-3b8a-5372-9b90-0c9aee199e5d|886313E13B8A53729B900C9AEE199E5D|4c565f0d-3f5a-5890-b41b-20cf47701c5e|2ed6657d-e927-568b-95e1-2665a8aea6a2"
}

@test "uuid5's name: TEXT and BLOB by their bytes, INTEGER as its decimal text, NULL gives NULL, REAL is an error" {
  run acorn_sql "SELECT uuid5(uuid_nil(), 'abc') = uuid5(uuid_nil(), x'616263'),
                        uuid5(uuid_nil(), 42) = uuid5(uuid_nil(), '42'),
                        uuid5(uuid_nil(), -9223372036854775808) = uuid5(uuid_nil(), '-9223372036854775808'),
                        uuid5(uuid_nil(), '') = uuid5(uuid_nil(), x''),
                        uuid_version(uuid5(uuid_nil(), '')), substr(uuid5(uuid_nil(), 'a'), 20, 1) IN ('8','9','a','b'),
                        quote(uuid5(uuid_nil(), NULL)), quote(uuid5_blob(uuid_nil(), NULL)),
                        uuid5(uuid_nil(), 'a') <> uuid5(uuid_max(), 'a');"
  assert_success
  assert_output "1|1|1|1|5|1|NULL|NULL|1"
  for call in "uuid5(uuid_nil(), 1.5)" "uuid5_blob(uuid_nil(), 0.0)" "uuid5(NULL, 1e300)"; do
    name=${call%%(*}
    run acorn_sql "SELECT $call;"
    assert_failure "$name: name must be TEXT, BLOB or INTEGER" || fail "call $call"
  done
}

@test "uuid5's namespace that is not a UUID gives NULL, whatever its type" {
  for ns in NULL 42 1.5 "'x'" "x'00'" "'6ba7b810-9dad-11d1-80b4-00c04fd430c'" "x'6ba7b8109dad11d180b400c04fd430c8ff'"; do
    run acorn_sql "SELECT quote(uuid5($ns, 'a')), quote(uuid5_blob($ns, x'61')), quote(uuid5($ns, 7));"
    assert_success
    assert_output "NULL|NULL|NULL" || fail "namespace $ns"
  done
}

@test "uuid5 and the constants are deterministic: usable in an index and a generated column" {
  run acorn_sql "CREATE TABLE t(name TEXT, id TEXT AS (uuid5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', name)));
                 CREATE INDEX i ON t(uuid5_blob(uuid_nil_blob(), name));
                 INSERT INTO t(name) VALUES ('python.org');
                 SELECT id FROM t WHERE uuid5_blob(uuid_nil_blob(), name) IS NOT NULL AND id > uuid_nil() AND id < uuid_max();"
  assert_success
  assert_output "886313e1-3b8a-5372-9b90-0c9aee199e5d"
}

@test "uuid_timestamp reads versions 1 and 6 (RFC 9562 A.1 and A.5) and 7 (A.6): 2022-02-22 19:22:22 UTC" {
  run acorn_sql "SELECT uuid_timestamp('C232AB00-9414-11EC-B3C8-9F6BDECED846'),
                        uuid_timestamp('1EC9414C-232A-6B00-B3C8-9F6BDECED846'),
                        uuid_timestamp(x'017F22E279B07CC398C4DC0C0C07398F'),
                        uuid_extract_timestamp('C232AB00-9414-11EC-B3C8-9F6BDECED846'),
                        uuid_extract_timestamp('1EC9414C-232A-6B00-B3C8-9F6BDECED846'),
                        uuid_extract_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F');"
  assert_success
  assert_output "1645557742000|1645557742000|1645557742000|2022-02-22 19:22:22.000|2022-02-22 19:22:22.000|2022-02-22 19:22:22.000"
}

@test "version 1 and 6 timestamps are floored to ms, before 1970 too, from 1582-10-15 to 5236" {
  # 100-ns counts 1, 9999, 10000 after 1970, and 1 before; the smallest and largest counts
  run acorn_sql "SELECT uuid_timestamp('13814001-1dd2-11b2-8000-000000000000'),
                        uuid_timestamp('1b21dd21-3816-670f-8000-000000000000'),
                        uuid_timestamp('13816710-1dd2-11b2-8000-000000000000'),
                        uuid_timestamp('1b21dd21-3813-6fff-8000-000000000000'),
                        uuid_extract_timestamp('13813fff-1dd2-11b2-8000-000000000000'),
                        uuid_timestamp('00000000-0000-1000-8000-000000000000'),
                        uuid_extract_timestamp('00000000-0000-6000-8000-000000000000'),
                        uuid_extract_timestamp('ffffffff-ffff-1fff-8000-000000000000');"
  assert_success
  assert_output "0|0|1|-1|1969-12-31 23:59:59.999|-12219292800000|1582-10-15 00:00:00.000|5236-03-31 21:21:00.684"
}

@test "uuid_extract_timestamp writes the text of strftime('%Y-%m-%d %H:%M:%f'), NULL after year 9999" {
  n=$(big 20000)
  run acorn_sql "CREATE TABLE t AS SELECT 100000000000 + abs(random()) % 253302300800000 AS ms FROM generate_series(1,$n);
                 INSERT INTO t VALUES (0), (253402300799999), (951782400000), (4107542400000);
                 SELECT count(*) FROM t WHERE uuid_extract_timestamp(uuid7(ms)) = strftime('%Y-%m-%d %H:%M:%f', ms/1000.0, 'unixepoch');
                 SELECT quote(uuid_extract_timestamp(uuid7(253402300800000))), quote(uuid_extract_timestamp(uuid7(281474976710655))),
                        uuid_timestamp(uuid7(281474976710655));"
  assert_success
  assert_output "$((n + 4))
NULL|NULL|281474976710655"
}

@test "the PostgreSQL readers answer for variant 10 only; acorn's for any variant" {
  run acorn_sql "SELECT quote(uuid_extract_version('017f22e2-79b0-7cc3-08c4-dc0c0c07398f')),
                        quote(uuid_extract_timestamp('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f')),
                        uuid_version('017f22e2-79b0-7cc3-08c4-dc0c0c07398f'),
                        uuid_timestamp('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f'),
                        uuid_extract_version('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'),
                        quote(uuid_extract_version(uuid_max())), quote(uuid_extract_version(uuid_nil())),
                        quote(uuid_extract_timestamp(uuid8(1645557742000))), uuid_timestamp(uuid8(1645557742000));"
  assert_success
  assert_output "NULL|NULL|7|1645557742000|7|NULL|NULL|NULL|1645557742000"
}

@test "uuid7_timestamp_ms reads version 7 only" {
  run acorn_sql "SELECT uuid7_timestamp_ms('017F22E2-79B0-7CC3-98C4-DC0C0C07398F'), uuid7_timestamp_ms(uuid7_blob(100000000005)),
                        quote(uuid7_timestamp_ms(uuid8(5))), quote(uuid7_timestamp_ms(uuid4())),
                        quote(uuid7_timestamp_ms('C232AB00-9414-11EC-B3C8-9F6BDECED846'));"
  assert_success
  assert_output "1645557742000|100000000005|NULL|NULL|NULL"
}

@test "uuidv7(shift) is a version 7 UUID at now shifted by SQLite's date modifier" {
  run acorn_sql "SELECT uuid_version(uuidv7('-1 hour')),
                        abs(uuid_timestamp(uuidv7('-1 hour')) - CAST((julianday('now', '-1 hour')-2440587.5)*86400000 AS INTEGER)) < 5000,
                        abs(uuid_timestamp(uuidv7('+30 days')) - CAST((julianday('now', '+30 days')-2440587.5)*86400000 AS INTEGER)) < 5000,
                        abs(uuid_timestamp(uuidv7('1 hour')) - uuid_timestamp(uuidv7('+1 hour'))) < 5000,
                        uuid_extract_timestamp(uuidv7('start of day')) = date('now') || ' 00:00:00.000',
                        uuidv7('-10 years') < uuid7(), substr(uuidv7('+0 seconds'), 20, 1) IN ('8','9','a','b');"
  assert_success
  assert_output "7|1|1|1|1|1|1"
}

@test "uuidv7(shift) refuses what is not a date modifier or leaves 1970..9999, NULL and numbers included" {
  for shift in NULL 1 1.5 "x'2d3120686f7572'" "'bogus'" "''" "'-1 hour, -2 hours'" "'-100 years'" "'+9000 years'"; do
    run acorn_sql "SELECT uuidv7($shift);"
    assert_failure "uuidv7: shift must be a date modifier such as '-1 hour' or '+30 days' giving a time in 1970..9999" || fail "shift $shift"
  done
}

@test "uuidv7(shift) works inside a trigger and a view under trusted_schema=OFF" {
  run acorn_sql "PRAGMA trusted_schema=OFF;
                 CREATE TABLE t(id TEXT DEFAULT (uuidv7('-1 day')), v);
                 CREATE VIEW w AS SELECT uuid_version(uuidv7('+1 minute')) AS v;
                 INSERT INTO t(v) VALUES (1);
                 SELECT uuid_version(id), uuid_timestamp(id) < uuid_timestamp(uuid7()) - 80000000 FROM t; SELECT v FROM w;"
  assert_success
  assert_output "7|1
7"
}

@test "ulid() is 26 characters of Crockford base32, first 0-7, and ulid_blob() 16 bytes of version 7" {
  n=$(big 100000)
  run acorn_sql "WITH g AS MATERIALIZED (SELECT ulid() AS u, ulid_blob() AS b FROM generate_series(1,$n))
                 SELECT count(*) FROM g WHERE length(u)=26 AND typeof(u)='text'
                   AND u GLOB '[0-7]$(printf '[0-9A-HJKMNP-TV-Z]%.0s' $(seq 25))'
                   AND typeof(b)='blob' AND length(b)=16 AND uuid_version(b)=7
                   AND uuid_version(ulid_to_uuid(u))=7;"
  assert_success
  assert_output "$n"
}

@test "ulid() shares uuid7()'s sequence: interleaved they strictly increase as bytes" {
  run acorn_sql "CREATE TABLE t(i INTEGER PRIMARY KEY, b);
                 INSERT INTO t SELECT value, CASE value % 2 WHEN 0 THEN uuid7_blob()
                   ELSE uuid_blob(ulid_to_uuid(ulid())) END FROM generate_series(1,30000);
                 SELECT count(*), sum(b.b <= a.b) FROM t a JOIN t b ON b.i = a.i+1;"
  assert_success
  assert_output "29999|0"
}

@test "ulid_timestamp is the current time for ulid() and reads the ULID spec's example" {
  run acorn_sql "SELECT abs(ulid_timestamp(ulid()) - CAST((julianday('now')-2440587.5)*86400000 AS INTEGER)) < 5000,
                        ulid_timestamp('01ARZ3NDEKTSV4RRFFQ69G5FAV'), ulid_timestamp('01arz3ndektsv4rrffq69g5fav'),
                        ulid_timestamp(uuid7_blob(1700000000000)), ulid_timestamp('7ZZZZZZZZZZZZZZZZZZZZZZZZZ');"
  assert_success
  assert_output "1|1469922850259|1469922850259|1700000000000|281474976710655"
}

@test "uuid_to_ulid and ulid_to_uuid convert the same 128 bits both ways" {
  n=$(big 100000)
  run acorn_sql "CREATE TABLE g AS SELECT uuid4() u, ulid() l FROM generate_series(1,$n);
                 SELECT count(*) FROM g WHERE ulid_to_uuid(uuid_to_ulid(u)) = u AND uuid_to_ulid(ulid_to_uuid(l)) = l
                   AND uuid_to_ulid(uuid_blob(u)) = uuid_to_ulid(u) AND ulid_to_uuid(uuid_blob(ulid_to_uuid(l))) = ulid_to_uuid(l);
                 SELECT uuid_to_ulid(uuid_nil()), uuid_to_ulid(uuid_max()), uuid_to_ulid(x'0185f0dc8ec7613cfa43034128935a60'),
                        ulid_to_uuid('01GQRDS3P7C4YFMGR384M96PK0');"
  assert_success
  assert_output "$n
00000000000000000000000000|7ZZZZZZZZZZZZZZZZZZZZZZZZZ|01GQRDS3P7C4YFMGR384M96PK0|0185f0dc-8ec7-613c-fa43-034128935a60"
}

@test "ULID text: either case, I and L read as 1, O as 0; the rest is NULL" {
  l=01GQRDS3P7C4YFMGR384M96PK0
  want=0185f0dc-8ec7-613c-fa43-034128935a60
  while IFS='|' read -r input expect; do
    run acorn_sql "SELECT quote(ulid_to_uuid($input)), quote(ulid_timestamp($input)) IS 'NULL';"
    assert_success
    if [ "$expect" = NULL ]; then
      assert_output "NULL|1" || fail "input $input"
    else
      assert_output "'$expect'|0" || fail "input $input"
    fi
  done <<ROWS
'$l'|$want
'01gqrds3p7c4yfmgr384m96pk0'|$want
'O1GQRDS3P7C4YFMGR384M96PKO'|$want
'0IGQRDS3P7C4YFMGR384M96PK0'|$want
'0lGQRDS3P7C4YFMGR384M96PK0'|$want
'0LGQRDS3P7C4YFMGR384M96PK0'|$want
'0iGQRDS3P7C4YFMGR384M96PK0'|$want
x'0185f0dc8ec7613cfa43034128935a60'|$want
'8ZZZZZZZZZZZZZZZZZZZZZZZZZ'|NULL
'01GQRDS3P7C4YFMGR384M96PKU'|NULL
'01GQRDS3P7C4YFMGR384M96PK'|NULL
'01GQRDS3P7C4YFMGR384M96PK00'|NULL
' 01GQRDS3P7C4YFMGR384M96PK0'|NULL
'01GQRDS3-P7C4YFMGR384M96PK0'|NULL
'$want'|NULL
''|NULL
x'0185f0dc8ec7613cfa43034128935a'|NULL
NULL|NULL
42|NULL
1.5|NULL
ROWS
}

@test "every converter gives NULL for input of every type that is not an id" {
  for f in uuid_str uuid_blob uuid_version uuid_timestamp uuid_extract_version uuid_extract_timestamp \
           uuid7_timestamp_ms uuid_to_ulid ulid_to_uuid ulid_timestamp; do
    for x in NULL 42 1.5 "'x'" "x'00'" "''" "x''" -0.0 9223372036854775807; do
      run acorn_sql "SELECT quote($f($x));"
      assert_success
      assert_output "NULL" || fail "$f($x)"
    done
  done
}

@test "the new functions' wrong argument counts are SQLite's own errors" {
  run acorn_sql "SELECT uuid5('x');"
  assert_failure "wrong number of arguments to function uuid5()"
  run acorn_sql "SELECT uuid_nil(1);"
  assert_failure "wrong number of arguments to function uuid_nil()"
  run acorn_sql "SELECT ulid(1);"
  assert_failure "wrong number of arguments to function ulid()"
  run acorn_sql "SELECT uuidv7(1, 2);"
  assert_failure "wrong number of arguments to function uuidv7()"
}
