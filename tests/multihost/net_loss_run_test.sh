#!/usr/bin/env bash
# A host cut off the network mid-run, with `drivelab run` itself (issue 34, Done when 3: "2 netns
# hosts, one link down mid-run: mpirun has exited within barrier timeout + 10 s; the other host's
# record names the lost host; no drivelab or orted process is left on either"). Two "hosts" of
# netns.sh, rank 0 on a, rank 1 on b, a DURATION s io test on the null engine (1 s intervals,
# --barrier-timeout BARRIER s); b's port on the switch is taken down once rank 1 has journaled 3
# intervals. Each rank measures on to the end of its phase (no MPI call inside it), then waits at
# the verify barrier for the other, which never comes. Checks:
#   - each rank's record is final (failed or interrupted, no test `running`) and its reason names
#     the other rank and its host, "rank 1 (host NAME-b)" on a, "rank 0 (host NAME-a)" on b: with
#     Open MPI 4.1's keepalives short, mpirun notices the lost daemon ("ORTE has lost communication
#     with a remote daemon", about 8 s after the cut) and ends the job with SIGTERM while the ranks
#     wait at the verify barrier, which then names the rank not arrived there; with a shorter
#     barrier timeout, the barrier's own deadline does ("not arrived: rank 1 (host NAME-b)");
#   - mpirun has exited within BARRIER + 10 s of the end of the measured phase (rank 0's `run`
#     barrier + DURATION), the link still down: with the short keepalives Open MPI 4.1's mpirun
#     notices the lost daemon and ends the job; otherwise (Open MPI 5) its abort of the job waits
#     for b's daemon, which it cannot reach, and `mpirun --timeout` bounds it (docs/multihost.md,
#     "A host cut off the network"), set here to end the job 10 s after rank 0's deadline at the
#     latest;
#   - no drivelab process is left on either host, nor orted on b within 60 s of the cut (Open MPI
#     4.1's out-of-band keepalives short, as net_loss_test.sh; Open MPI 5's prted has no such
#     parameter: not checked there), and nothing of the job on a.
# Prints the times. Exit 0 pass, 1 fail, 77 skip (not root, no network namespaces).
#   net_loss_run_test.sh DRIVELAB
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
netns=$here/netns.sh
. "$here/mpirun.sh"  # ompi_major, daemon, netns_launch, netns_require, wait_gone
fail() { echo "net_loss_run_test: FAIL: $*" >&2; exit 1; }
[ $# -eq 1 ] || { echo "usage: net_loss_run_test.sh DRIVELAB" >&2; exit 2; }
exe=$(readlink -f "$1")
[ -x "$exe" ] || fail "no drivelab at $1"
name=dlnr$$
netns_require net_loss_run_test "$name"
command -v python3 >/dev/null || fail "python3 is needed to read the records"

work=$(mktemp -d "${TMPDIR:-/tmp}/drivelab-net-loss-run.XXXXXX")
mpirun_pid=""
cleanup() {
  [ -z "$mpirun_pid" ] || kill "$mpirun_pid" 2>/dev/null || true
  "$netns" down "$name" || echo "net_loss_run_test: netns.sh down $name failed" >&2
  rm -rf -- "$work"
}
trap cleanup EXIT
readonly duration=8 barrier=5
state=$("$netns" up "$name" 2)
get() { sed -n "s/^$1=//p" <<<"$state"; }
agent=$(get agent) host_a=$(get host_a) host_b=$(get host_b) addr_a=$(get addr_a) addr_b=$(get addr_b)
subnet=$(get subnet)
SHORT_KEEPALIVES=1 netns_launch "$agent" "$subnet"  # launch
cat >"$work/p.yaml" <<EOF
protocol: net-loss
seed: 1
tests:
  - name: null-randread
    kind: io
    warmup: 0s
    duration: ${duration}s
    interval: 1s
    io: {engine: null, rw: randread, xfersize: 4k, iodepth: 1, file_size: 1MiB}
EOF
mkdir -p "$work/out"
# The job's bound (mpirun --timeout counts from its start): the phase, rank 0's deadline at the
# verify barrier and 10 s, for the start (ssh, the daemon on b, MPI_Init, prepare: 1-4 s measured)
# and rank 0's record and abort: mpirun then ends 9 s after the deadline when the start took 1 s,
# sooner after a slower start, and after rank 0's deadline for any start below 10 s. (With 11 s, a
# 1.1 s start on a loaded machine and mpirun's own exit ended the job 10.18 s after the deadline.)
readonly mpirun_timeout=$((duration + barrier + 10))
t0=$(date +%s%N)
"$netns" exec "$name" a timeout -k 10 120 mpirun --allow-run-as-root -np 2 --host "$addr_a,$addr_b" "${launch[@]}" \
  --timeout "$mpirun_timeout" --mca btl self,tcp --mca btl_tcp_if_include "$subnet" \
  -x ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
  "$exe" run "$work/p.yaml" --target "$work/t{rank}" --out "$work/out" --barrier-timeout "${barrier}s" --quiet \
  >"$work/stdout" 2>"$work/stderr" &
mpirun_pid=$!
# Rank 1 three intervals into its phase (its journal on b is on the same file system).
for _ in $(seq 600); do
  j=$(ls "$work"/out/*-r1.journal.jsonl 2>/dev/null | head -1 || true)
  [ -z "$j" ] || [ "$(grep -c '"event":"interval"' "$j" || true)" -lt 3 ] || break
  kill -0 "$mpirun_pid" 2>/dev/null || { cat "$work/stderr" >&2; fail "mpirun ended before the cut"; }
  sleep 0.1
done
[ -n "${j:-}" ] || { cat "$work/stderr" >&2; fail "rank 1 never measured"; }
"$netns" link "$name" b down
cut=$(date +%s%N)
for _ in $(seq $(((mpirun_timeout + 20) * 10))); do
  kill -0 "$mpirun_pid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$mpirun_pid" 2>/dev/null && { cat "$work/stderr" >&2; fail "mpirun still running $((mpirun_timeout + 20)) s after its start"; }
rc=0
wait "$mpirun_pid" || rc=$?
mpirun_pid=""
t_end=$(date +%s%N)
# The records: final, each naming the other rank and its host; the times.
python3 - "$work/out" "$host_a" "$host_b" "$cut" "$t_end" "$duration" "$barrier" "$rc" <<'EOF' ||
import json, pathlib, sys
out, host_a, host_b = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
cut, t_end, duration, barrier, rc = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7]), sys.argv[8]
errors, times = [], []
recs = {}
for p in sorted(out.glob("*-r[01].json")):
    r = json.loads(p.read_text())
    recs[r["cohort"]["rank"]] = (r, p.stat().st_mtime_ns)
if sorted(recs) != [0, 1]:
    sys.exit(f"net_loss_run_test: the records of ranks {sorted(recs)}, want 0 and 1")
for rank, other, host in ((0, 1, host_b), (1, 0, host_a)):
    r, mtime = recs[rank]
    named = f"rank {other} (host {host})"
    if r["status"] not in ("failed", "interrupted") or r.get("reason", "").startswith("run in progress"):
        errors.append(f"rank {rank}: status {r['status']}, not final: {r.get('reason')}")
    if named not in r.get("reason", ""):
        errors.append(f"rank {rank}: the reason does not name {named}: {r.get('reason')}")
    for t in r["tests"]:
        if t["status"] == "running":
            errors.append(f"rank {rank}: test {t['name']} still running")
    times.append(f"r{rank} record {(mtime - cut) / 1e9:.2f} s")
run_ns = recs[0][0]["tests"][0]["barriers"]["run"]
phase_end = run_ns + duration * 1e9
after = (t_end - phase_end) / 1e9
if after > barrier + 10:
    errors.append(f"mpirun exited {after:.2f} s after the end of the measured phase (more than {barrier:g} + 10 s)")
for e in errors:
    print(f"net_loss_run_test: {e}", file=sys.stderr)
print(f"net_loss_run_test: {host_b} cut {(phase_end - cut) / 1e9:.2f} s before the end of the phase; after the cut: "
      f"{', '.join(times)}; mpirun exit {rc} {(t_end - cut) / 1e9:.2f} s after the cut, {after:.2f} s after the "
      f"phase end (--barrier-timeout {barrier:g}s)")
sys.exit(1 if errors else 0)
EOF
  { tail -n 30 "$work/stderr" >&2; fail "records"; }
# Nothing of the job left: on a at once; on b within 60 s of the cut, the link still down.
left_a=$(ip netns pids "$host_a" || true)
[ -z "$left_a" ] || fail "left on $host_a: $(for p in $left_a; do printf "%s(%s) " "$p" "$(cat "/proc/$p/comm" 2>/dev/null)"; done)"
watch="drivelab"
[ "$daemon" = prted ] || watch="drivelab|orted"
wait_gone "$host_b" "$(cat "$(get dir)/sshd-b.pid")" "$watch" "$cut"
[ -z "$left" ] || fail "left on $host_b 60 s after the cut, the link still down: $left"
echo "net_loss_run_test: nothing of the job ($watch) on $host_b $((($(date +%s%N) - cut) / 1000000)) ms after the cut"
echo "net_loss_run_test: PASS"
