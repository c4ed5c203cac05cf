# Sourced by the scripts of tests/multihost/ (not run): their mpirun command lines, written once.
# Debian 12 ships Open MPI 4.1, Debian 13 Open MPI 5.0, whose mpirun is PRRTE's and takes other
# launcher parameters (docs/multihost.md, the table of the two; tests/support/mpirun.hpp is the same
# for the C++ tests).
#
#   ompi_major                     Open MPI's major version from `mpirun --version` (empty: unknown)
#   daemon                         the daemon mpirun starts on each other host: orted (4.1), prted (5.0)
#   mpirun_local NP ARGS...        mpirun of NP ranks on this host, then ARGS (more mpirun options,
#                                  then the command): TCP on loopback between the ranks,
#                                  --oversubscribe, --allow-run-as-root when root, the sanitizer
#                                  build's ASAN_OPTIONS for every rank (Open MPI dlcloses its
#                                  components in MPI_Finalize: LeakSanitizer cannot name them).
#                                  Open MPI's default kill timing unless MPIRUN_SIGKILL_TIMEOUT=S
#                                  (Open MPI 4.1's odls_base_sigkill_timeout; PRRTE has none).
#                                  Exported (export -f): usable inside `bash -c` and `timeout`.
#   netns_launch AGENT SUBNET      sets the array `launch`: the launcher options of a job over the
#                                  hosts of netns.sh (its ssh wrapper AGENT, mpirun's own messages
#                                  on SUBNET); with SHORT_KEEPALIVES=1 also Open MPI 4.1's out-of-band
#                                  keepalives short (5 s idle, 2 s apart, 3 probes: a lost host's
#                                  daemon noticed within about 10 s; PRRTE has no such parameter)
#   netns_require TEST NAME        exits 77 (skip) unless root and network namespaces can be made
#   wait_gone NS SSHD_PID REGEX SINCE_NS
#                                  waits until no process in namespace NS (but its sshd) has a name
#                                  matching REGEX, at most 60 s after SINCE_NS (date +%s%N); sets
#                                  `left` to what is left, as pid(name) ("" when nothing)
ompi_major=$(mpirun --version 2>/dev/null | sed -n 's/.*(Open MPI) \([0-9][0-9]*\)\..*/\1/p' | head -1)
export ompi_major
daemon=orted
[ "${ompi_major:-4}" -lt 5 ] || daemon=prted

mpirun_local() {
  local np=$1
  shift
  local args=(mpirun)
  [ "$(id -u)" -ne 0 ] || args+=(--allow-run-as-root)
  args+=(--oversubscribe -np "$np" --mca btl self,tcp --mca btl_tcp_if_include lo)
  # PRRTE never uses a loopback interface for its own messages (prte_if_include lo: "No network
  # interfaces were found"), and on one host needs none.
  if [ "${ompi_major:-4}" -lt 5 ]; then
    args+=(--mca oob_tcp_if_include lo)
    [ -z "${MPIRUN_SIGKILL_TIMEOUT:-}" ] || args+=(--mca odls_base_sigkill_timeout "$MPIRUN_SIGKILL_TIMEOUT")
  fi
  args+=(-x ASAN_OPTIONS=detect_leaks=0:abort_on_error=1)
  "${args[@]}" "$@"
}
export -f mpirun_local

# Open MPI 4.1: the ssh agent is plm_rsh_agent, mpirun's own network oob_tcp_if_include. Open MPI 5.0
# (PRRTE 3): plm_ssh_agent and prte_if_include, given with --prtemca, and --map-by
# node:OVERSUBSCRIBE: with `--host a,b` (one slot each) PRRTE 3.0.8 maps two ranks onto "not enough
# slots" otherwise (measured on Debian 13's Open MPI 5.0.7).
netns_launch() {
  local agent=$1 subnet=$2
  if [ "${ompi_major:-4}" -ge 5 ]; then
    launch=(--map-by node:OVERSUBSCRIBE --prtemca plm_ssh_agent "$agent" --prtemca prte_if_include "$subnet")
  else
    launch=(--mca plm_rsh_agent "$agent" --mca oob_tcp_if_include "$subnet")
    [ -z "${SHORT_KEEPALIVES:-}" ] ||
      launch+=(--mca oob_tcp_keepalive_time 5 --mca oob_tcp_keepalive_intvl 2 --mca oob_tcp_keepalive_probes 3)
  fi
}

netns_require() {
  local test=$1 name=$2 err
  [ "$(id -u)" -eq 0 ] || { echo "$test: SKIP: needs root (network namespaces, sshd)"; exit 77; }
  if ! command -v ip >/dev/null || ! err=$(ip netns add "$name-probe" 2>&1); then
    echo "$test: SKIP: no network namespaces here (ip netns add: ${err:-no ip command})"
    exit 77
  fi
  ip netns delete "$name-probe"
}

wait_gone() {
  local ns=$1 sshd=$2 regex=$3 since=$4 p c
  for _ in $(seq 600); do
    left=$(for p in $(ip netns pids "$ns" | grep -vxF "$sshd" || true); do
      c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
      if grep -qxE "$regex" <<<"$c"; then echo "$p($c)"; fi
    done)
    [ -n "$left" ] || return 0
    [ $(($(date +%s%N) - since)) -lt 60000000000 ] || return 0
    sleep 0.1
  done
}
