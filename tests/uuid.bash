# Shared by tests/uuid.bats and tests/long/uuid.bats (after test_helper).

H='[0-9a-f]'
H4="$H$H$H$H"
# GLOB pattern of a canonical lowercase UUID of version $1.
canon() {
  echo "$H4$H4-$H4-$1$H$H$H-[89ab]$H$H$H-$H4$H4$H4"
}

# check_unique N: no blob generator repeats a value in N made in one
# statement.
check_unique() {
  local f
  for f in uuid4_blob uuid7_blob uuid8_blob ulid_blob; do
    run acorn_sql "SELECT count(DISTINCT b) FROM (SELECT $f() AS b FROM generate_series(1,$1));"
    assert_success
    assert_output "$1" || fail "generator $f"
  done
}

# check_increasing N: each of N values of uuid7, uuid8, ulid and their blob forms,
# made in one statement, is greater than the one before.
check_increasing() {
  local f
  for f in uuid7 uuid8 uuid7_blob uuid8_blob ulid ulid_blob; do
    run acorn_sql "CREATE TABLE t(i INTEGER PRIMARY KEY, u);
                   INSERT INTO t SELECT value, $f() FROM generate_series(1,$1);
                   SELECT count(*), sum(b.u <= a.u) FROM t a JOIN t b ON b.i = a.i+1;"
    assert_success
    assert_output "$(( $1 - 1 ))|0" || fail "generator $f"
  done
}
