#!/usr/bin/env bats
# The id functions of ext/uuid.c, through the sqlite3 CLI.

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

@test "ms may be a REAL with no fractional part, as JavaScript numbers bind" {
  run acorn_sql "SELECT uuid_timestamp(uuid7(1700000000000.0)), uuid_timestamp(uuid8_blob(1e3)),
                        uuid_timestamp(uuid7(0.0)), uuid_timestamp(uuid8(281474976710655.0));"
  assert_success
  assert_output "1700000000000|1000|0|281474976710655"
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
