#!/usr/bin/env bats
# The Python package's cache (sqlite_acorn.Cache, memoize, the Django
# backend) from the source tree with this build's acorn.so: the same
# programs `make test-dist` runs against the installed wheel
# (tests/dist/python_cache_test.py says what each checks).

load test_helper

setup() {
  python_pkg "$BATS_TEST_TMPDIR/pkg"
  mkdir -p "$BATS_TEST_TMPDIR/scratch"
  export PYTHONPATH="$BATS_TEST_TMPDIR/pkg"
}

run_mode() {
  run python_run "$TESTS/dist/python_cache_test.py" "$1" "$BATS_TEST_TMPDIR/scratch"
  echo "$output"
  assert_success
  [[ "${lines[-1]}" == "PASS wheel-$1 "* ]]
}

@test "Cache: every method, each type of value stored as documented, options, threads and fork" {
  run_mode cache
}

@test "memoize: one computer while threads and processes wait, a killed computer's lock taken over" {
  run_mode memoize
}

@test "the Django backend through django.core.cache.caches: every method and timeout case" {
  /usr/bin/env "$PYTHON" -c 'import django' 2>/dev/null ||
    fail "Debian's python3-django is missing (tests/install-deps test installs it)"
  run_mode django
}
