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
#                                  on SUBNET)
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
  fi
}
