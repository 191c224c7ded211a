# cluster.bash: a dqlite cluster of dqlite-demo nodes on 127.0.0.1, each with
# acorn added by the preload library.  Sourced by tests/cluster/*.bats,
# tests/cluster/run and bench/cluster.sh.
#
# Everything lives in $CLUSTER_DIR (set it to a fresh directory first):
#   ports          one free loopback port per line: 2 per node
#                  (replication address, then HTTP API)
#   n<i>/          node i's data directory; n<i>/tmp is its TMPDIR
#   n<i>.pid       pid of node i's dqlite-demo while it runs
#   n<i>.log       its output
#   *.pid          any other process started for the cluster (cluster_stop
#                  stops everything recorded in a pid file)
# The functions keep no state in variables, so they work from any subshell
# (bats runs every test in its own).  Every process they start is recorded
# in a pid file, and cluster_stop stops exactly those.
#
#   cluster_start N       start N nodes (node 1 bootstraps, the others
#                         join it), wait until all N are voters
#   cluster_sql SQL       run SQL through the cluster (the dqlite shell finds
#                         the leader); prints rows as a|b|c, fails on an error
#   cluster_leader        the leader's replication address
#   cluster_node ADDR     the node number of a replication address
#   cluster_kill I SIG    signal node I (e.g. KILL); waits for it to exit
#   cluster_node_start I  start node I again (same address and directory)
#   cluster_wait_leader   wait until some node leads and answers SQL
#   cluster_stop          stop every node still running

CLUSTER_DB=demo                # dqlite-demo's database name
CLUSTER_TIMEOUT=${CLUSTER_TIMEOUT:-30}   # seconds for any one shell command

# cluster_ports N: N distinct free TCP ports on 127.0.0.1.  Sockets bound to
# port 0 hold their ports until all are known, so the N differ.
cluster_ports() {
  /usr/bin/python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print("\n".join(str(s.getsockname()[1]) for s in socks))
PY
}

cluster_addr() {    # replication address of node I
  echo "127.0.0.1:$(sed -n "$(( 2 * $1 - 1 ))p" "$CLUSTER_DIR/ports")"
}

cluster_api() {     # HTTP API address of node I
  echo "127.0.0.1:$(sed -n "$(( 2 * $1 ))p" "$CLUSTER_DIR/ports")"
}

cluster_size() {
  echo $(( $(wc -l < "$CLUSTER_DIR/ports") / 2 ))
}

cluster_servers() { # all replication addresses, comma-separated
  local i out=
  for (( i = 1; i <= $(cluster_size); i++ )); do
    out+="${out:+,}$(cluster_addr "$i")"
  done
  echo "$out"
}

# cluster_shell SERVERS ARGS...: the dqlite shell, bounded in time.
cluster_shell() {
  local servers=$1
  shift
  timeout -k 5 "$CLUSTER_TIMEOUT" dqlite -s "$servers" "$CLUSTER_DB" "$@"
}

# cluster_sql SQL: through the leader.  The shell runs a statement that starts
# with SELECT as a query and anything else as an exec; it exits 1 on an error
# (and prints its usage after the message: cut off here).
cluster_sql() {
  local out rc=0
  out=$(cluster_shell "$(cluster_servers)" "$1" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf '%s\n' "${out%%Usage:*}" | sed '/^$/d' >&2
    return "$rc"
  fi
  [ -z "$out" ] || printf '%s\n' "$out"
}

cluster_leader() {
  cluster_shell "$(cluster_servers)" .leader 2>/dev/null
}

cluster_node() {    # node number of replication address ADDR
  local i
  for (( i = 1; i <= $(cluster_size); i++ )); do
    [ "$(cluster_addr "$i")" = "$1" ] && { echo "$i"; return 0; }
  done
  return 1
}

cluster_pid() {
  cat "$CLUSTER_DIR/n$1.pid" 2>/dev/null
}

# cluster_node_start I: start node I, in the background, with acorn
# preloaded.  fd 3 is closed so bats does not wait for the node.
cluster_node_start() {
  local i=$1 join=()
  mkdir -p "$CLUSTER_DIR/n$i/tmp"
  [ "$i" -eq 1 ] || join=(-j "$(cluster_addr 1)")
  LD_PRELOAD="$ACORN_AUTO" TMPDIR="$CLUSTER_DIR/n$i/tmp" \
    dqlite-demo -d "$(cluster_addr "$i")" -a "$(cluster_api "$i")" \
      -D "$CLUSTER_DIR/n$i" "${join[@]}" >> "$CLUSTER_DIR/n$i.log" 2>&1 3>&- &
  echo $! > "$CLUSTER_DIR/n$i.pid"
  # Out of the shell's job table: no "Killed" notice when a test kills it.
  disown $! 2>/dev/null || true
}

# cluster_wait CMD...: retry CMD every 0.2 s until it succeeds, for at most
# $CLUSTER_TIMEOUT seconds.
cluster_wait() {
  local deadline=$(( $(date +%s) + CLUSTER_TIMEOUT ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "cluster: timed out waiting for: $*" >&2
      return 1
    fi
    sleep 0.2
  done
}

cluster_voters_are() {  # the cluster lists N voters
  [ "$(cluster_shell "$(cluster_servers)" .cluster 2>/dev/null | grep -c '|voter$')" -eq "$1" ]
}

cluster_answers() {     # a live node leads, as every node asked says, and runs SQL
  local l n pid
  cluster_sql "SELECT 1" >/dev/null 2>&1 || return 1
  # Right after a crash a follower may still name the dead leader.
  l=$(cluster_leader) && [ -n "$l" ] || return 1
  n=$(cluster_node "$l") && pid=$(cluster_pid "$n") && ! cluster_gone "$pid"
}

cluster_knows_leader() {  # node I is up and knows who leads
  local l
  l=$(cluster_shell "$(cluster_addr "$1")" .leader 2>/dev/null) && [ -n "$l" ]
}

cluster_wait_leader() {
  cluster_wait cluster_answers
}

cluster_start() {
  local n=$1 i
  mkdir -p "$CLUSTER_DIR"
  cluster_ports $(( 2 * n )) > "$CLUSTER_DIR/ports"
  cluster_node_start 1
  cluster_wait cluster_answers || return 1
  for (( i = 2; i <= n; i++ )); do
    cluster_node_start "$i"
  done
  cluster_wait cluster_voters_are "$n"
}

# cluster_kill I SIG: send SIG to node I and wait until it has exited.
cluster_kill() {
  local pid
  pid=$(cluster_pid "$1") || return 1
  kill -s "$2" "$pid" 2>/dev/null || true
  cluster_wait cluster_gone "$pid" || return 1
  rm -f "$CLUSTER_DIR/n$1.pid"
}

cluster_gone() {   # process PID has exited (a zombie counts)
  ! kill -0 "$1" 2>/dev/null || [[ "$(ps -o stat= -p "$1" 2>/dev/null)" == Z* ]]
}

# cluster_stop: TERM every process recorded in a pid file (the nodes, and
# any other process a caller recorded there), KILL what is left after 10 s.
cluster_stop() {
  local f pid pids=()
  for f in "$CLUSTER_DIR"/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    rm -f "$f"
  done
  for pid in "${pids[@]}"; do
    CLUSTER_TIMEOUT=10 cluster_wait cluster_gone "$pid" 2>/dev/null ||
      kill -KILL "$pid" 2>/dev/null || true
  done
}
