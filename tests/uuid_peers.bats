#!/usr/bin/env bats
# acorn answers the statements that each peer's documentation shows, with the
# outputs documented there (random ids compared by shape).  Where acorn
# differs on purpose, the test says so; docs/uuid.md lists the differences.

load test_helper
load uuid

# SQLite's ext/misc/uuid.c: uuid(), uuid_str(X), uuid_blob(X)
@test "SQLite's uuid extension: uuid(), uuid_str() and uuid_blob() as its header describes" {
  run acorn_sql "SELECT uuid() GLOB '$(canon 4)', length(uuid());
                 SELECT uuid_str('{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}'),
                        hex(uuid_blob('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')),
                        uuid_str(x'a0eebc999c0b4ef8bb6d6bb9bd380a11'), quote(uuid_str('not a uuid'));"
  assert_success
  assert_output "1|36
a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|A0EEBC999C0B4EF8BB6D6BB9BD380A11|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|NULL"
}

@test "SQLite's uuid extension: a schema with DEFAULT (uuid()) works unchanged" {
  run acorn_sql "CREATE TABLE t(id TEXT PRIMARY KEY DEFAULT (uuid()), v);
                 INSERT INTO t(v) VALUES (1), (2);
                 SELECT count(DISTINCT id), min(uuid_version(id)) FROM t;"
  assert_success
  assert_output "2|4"
}

# sqlean's uuid: uuid4(), gen_random_uuid(), uuid7(), uuid7_timestamp_ms(X)
@test "sqlean: uuid4(), gen_random_uuid(), uuid7() and the uuid7_timestamp_ms examples of its docs" {
  run acorn_sql "SELECT uuid4() GLOB '$(canon 4)', gen_random_uuid() GLOB '$(canon 4)', uuid7() GLOB '$(canon 7)';
                 SELECT uuid7_timestamp_ms('018ff38a-a5c9-712d-bc80-0550b3ad41a2');
                 SELECT datetime(uuid7_timestamp_ms('018ff38a-a5c9-712d-bc80-0550b3ad41a2') / 1000, 'unixepoch');
                 SELECT uuid7_timestamp_ms(uuid4()) IS NULL;"
  assert_success
  assert_output "1|1|1
1717777901001
2024-06-07 16:31:41
1"
}

@test "sqlean: uuid_str and uuid_blob convert as its docs show" {
  run acorn_sql "SELECT uuid_str(uuid_blob('d5a80b20-0d8f-11e5-b8cb-080027b6ec40'));
                 SELECT hex(uuid_blob('d5a80b20-0d8f-11e5-b8cb-080027b6ec40'));"
  assert_success
  assert_output "d5a80b20-0d8f-11e5-b8cb-080027b6ec40
D5A80B200D8F11E5B8CB080027B6EC40"
}

@test "sqlean differs on purpose: uuid7_timestamp_ms is NULL for every id that is not version 7" {
  run acorn_sql "SELECT quote(uuid7_timestamp_ms(uuid8())), quote(uuid7_timestamp_ms(uuid_nil())),
                        quote(uuid7_timestamp_ms('C232AB00-9414-11EC-B3C8-9F6BDECED846'));"
  assert_success
  assert_output "NULL|NULL|NULL"
}

# PostgreSQL 18: gen_random_uuid(), uuidv4(), uuidv7([shift]),
# uuid_extract_timestamp(uuid), uuid_extract_version(uuid)
@test "PostgreSQL 18: the generators of its docs make version 4 and 7 UUIDs" {
  run acorn_sql "SELECT gen_random_uuid() GLOB '$(canon 4)', uuidv4() GLOB '$(canon 4)',
                        uuidv7() GLOB '$(canon 7)', uuidv7('-1 hour') GLOB '$(canon 7)';"
  assert_success
  assert_output "1|1|1|1"
}

@test "PostgreSQL 18: uuid_extract_timestamp of its docs' example, in UTC (the docs print it at -05)" {
  run acorn_sql "SELECT uuid_extract_timestamp('019535d9-3df7-79fb-b466-fa907fa17f9e');
                 SELECT quote(uuid_extract_timestamp(gen_random_uuid()));"
  assert_success
  assert_output "2025-02-24 02:46:24.503
NULL"
}

@test "PostgreSQL 18: uuid_extract_version(gen_random_uuid()) is 4, NULL for another variant" {
  run acorn_sql "SELECT uuid_extract_version(gen_random_uuid()), uuid_extract_version(uuidv7()),
                        quote(uuid_extract_version(uuid_max()));"
  assert_success
  assert_output "4|7|NULL"
}

@test "PostgreSQL 18: a shifted uuidv7 sorts by its shifted time, and a shift out of range is an error" {
  run acorn_sql "SELECT uuidv7('-1 hour') < uuidv7(), uuidv7('+1 hour') > uuidv7();"
  assert_success
  assert_output "1|1"
  run acorn_sql "SELECT uuidv7('-60 years');"
  assert_failure "uuidv7: shift must be a date modifier such as '-1 hour' or '+30 days' giving a time in 1970..9999"
}

# turso's uuid extension: uuid4_str(), uuid7_str(), gen_random_uuid(),
# uuid7_timestamp_ms(X), uuid_str(X), uuid_blob(X)
@test "turso: the text generators and the converters under its names" {
  run acorn_sql "SELECT uuid4_str() GLOB '$(canon 4)', uuid7_str() GLOB '$(canon 7)', gen_random_uuid() GLOB '$(canon 4)',
                        uuid7_timestamp_ms(uuid7_blob(1700000000000)) = 1700000000000,
                        uuid_str(uuid_blob(uuid7_str())) GLOB '$(canon 7)';"
  assert_success
  assert_output "1|1|1|1|1"
}

@test "turso differs: its uuid4() and uuid7() are blobs; acorn's are text and its blobs are uuid4_blob() and uuid7_blob()" {
  run acorn_sql "SELECT typeof(uuid4()), typeof(uuid7()), typeof(uuid4_blob()), typeof(uuid7_blob());"
  assert_success
  assert_output "text|text|blob|blob"
}

# asg017/sqlite-ulid: ulid(), ulid_bytes(), ulid(blob)
@test "sqlite-ulid: the same 128 bits give its docs' ULID, in the spec's uppercase" {
  run acorn_sql "SELECT uuid_to_ulid(X'0185f0dc8ec7613cfa43034128935a60');
                 SELECT lower(uuid_to_ulid(X'0185f0dc8ec7613cfa43034128935a60')) = '01gqrds3p7c4yfmgr384m96pk0';
                 SELECT ulid_timestamp('01gqr4j69cc7w1xdbarkcbpq17') = CAST(round((julianday('2023-01-26 22:53:20.556') - 2440587.5) * 86400000) AS INTEGER);"
  assert_success
  assert_output "01GQRDS3P7C4YFMGR384M96PK0
1
1"
}
