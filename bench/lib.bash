# bench/lib.bash: what the benchmark scripts that draw a picture share,
# sourced by them (bash): the run's first line and the line under its
# picture, so that every run says the same of the machine it ran on.

# bench_start SCRIPT DIR [MORE]: note when the run starts and the load then
# ($started and $load0, which bench_label reads), and print the run's first
# line: cores, kernel, where the databases are and on which file system,
# then MORE as it is.
bench_start() {
  started=$(date -u +%Y-%m-%dT%H:%MZ)
  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "$1: $(nproc) cores, $(uname -r), databases in $2" \
       "($(df -T "$2" | awk 'NR==2{print $2}')), $started, load average $load0${3:-}"
}

# bench_label WHAT: the line under a picture: the CPU, WHAT (the versions
# the run measured), acorn's commit, and when the run started and the load
# then (bench_start).
bench_label() {
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus; $1; acorn $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $started; load average at start $load0"
}
