#!/usr/bin/env bats
# make bench-record: how it records, with stand-in benchmark scripts (the
# real ones take minutes) in a copy of the tree.

load ../test_helper

# A copy of the tree whose bench/*.sh are quick stand-ins that write what
# the real ones write, each line saying which run made it.
fake_tree() {
  local r="$BATS_TEST_TMPDIR/repo"
  mkdir -p "$r"
  cp -a "$ROOT/Makefile" "$ROOT/VERSION" "$ROOT/ext" "$ROOT/dist" "$r/"
  mkdir -p "$r/bench/results"
  cp "$ROOT/bench/run" "$r/bench/run"
  cat >"$r/bench/experiments.sh" <<'SH'
set -e
echo "step 1/1: experiments of run $RUN"
for e in writers ids journals batching readers; do
  echo "$e csv of run $RUN" >"$BENCH_OUT/$e.csv"
  [ "${FAIL_AT:-}" != "$e" ] || exit 3
  [ "${SKIP:-}" = "$e.png" ] || echo "$e png of run $RUN" >"$BENCH_OUT/$e.png"
done
echo "machine of run $RUN" >"$BENCH_OUT/machine.txt"
SH
  printf '%s\n' 'echo "uuid table of run $RUN"' >"$r/bench/uuid.sh"
  echo "$r"
}

# results_of DIR: every file of DIR with its contents, one line each.
results_of() {
  (cd "$1" && for f in *; do printf '%s: %s\n' "$f" "$(cat "$f")"; done)
}

@test "bench-record replaces bench/results/ with one complete run, and nothing else does" {
  local r
  r=$(fake_tree)
  echo "from an older run" >"$r/bench/results/stale.txt"
  export GNUPLOT=true ACORN_PYTHON=/bin/true
  # make bench: into its own directory, bench/results/ untouched
  RUN=1 BENCH_OUT="$BATS_TEST_TMPDIR/out" run "$r/bench/run"
  assert_success
  assert_output_contains "[2/2] bench/uuid.sh: done in"
  assert_output_contains "[uuid    0s] uuid table of run 1"
  [ -f "$BATS_TEST_TMPDIR/out/readers.png" ]
  [ "$(results_of "$r/bench/results")" = "stale.txt: from an older run" ]
  # make bench-record: every file from the same run, the stale one gone
  RUN=2 run "$r/bench/run" --record
  assert_success
  run results_of "$r/bench/results"
  assert_output "batching.csv: batching csv of run 2
batching.png: batching png of run 2
experiments.txt: step 1/1: experiments of run 2
ids.csv: ids csv of run 2
ids.png: ids png of run 2
journals.csv: journals csv of run 2
journals.png: journals png of run 2
machine.txt: machine of run 2
readers.csv: readers csv of run 2
readers.png: readers png of run 2
uuid.txt: uuid table of run 2
writers.csv: writers csv of run 2
writers.png: writers png of run 2"
}

@test "bench-record leaves bench/results/ as it was when a benchmark fails or a file is missing" {
  local r before
  r=$(fake_tree)
  export GNUPLOT=true ACORN_PYTHON=/bin/true
  RUN=1 run "$r/bench/run" --record
  assert_success
  before=$(results_of "$r/bench/results")
  RUN=2 FAIL_AT=ids run "$r/bench/run" --record
  assert_failure "bench: FAILED: bench/experiments.sh"
  assert_output_contains "bench/results/ left as it was"
  [ "$(results_of "$r/bench/results")" = "$before" ]
  RUN=3 SKIP=readers.png run "$r/bench/run" --record
  assert_failure "bench: the run did not write readers.png; bench/results/ left as it was"
  [ "$(results_of "$r/bench/results")" = "$before" ]
}
