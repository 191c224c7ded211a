# What tests/oom.bats shares with its long run, tests/long/oom.bats.

# oom_dir: an empty scratch directory, on tmpfs when there is one (the
# bench_insert runs fsync there).
oom_dir() {
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    OOM_DIR=$(mktemp -d /dev/shm/acorn-oom.XXXXXX)
  else
    OOM_DIR="$BATS_TEST_TMPDIR/oom"
    mkdir "$OOM_DIR"
  fi
}

teardown() {
  [ -z "${OOM_DIR:-}" ] || rm -rf "$OOM_DIR"
  check_reports
}
