#!/usr/bin/env bash
# The TP monitor at scale: 15,000 TPC-C terminals with the clause 5.2.5 keying and think times
# against 50 warehouses on a managed PostgreSQL (created in the target directory, removed after),
# 10 minutes measured. Prints what the DRIVER costs, read from the result record:
#
#   driver RSS peak      MiB, VmHWM of the drivelab process            target <= 200 MiB
#   driver CPU           % of one core, getrusage over the measured    target <= 25 %
#                        phase (the server's processes are not ours)
#   timer lateness p99   ms, how late keying/think timers fired         target <= 1 ms
#
# and, for context, TPS, tpmC, efficiency, response/queue-wait p50/p99, pool utilisation and
# the driver's CPU per transaction (ms of CPU / transaction = CPU% / 100 / TPS).
#
#   bench/tpcc_terminals.sh [--duration S] [--warmup S] [--warehouses N] [--terminals N]
#                           [--connections N] [--transactions procedures|statements]
#                           [--target DIR] [--build DIR]
#   defaults: 600 s measured, 60 s warm-up, 50 warehouses, 15000 terminals, the default pool,
#             the default transactions (procedures on PostgreSQL), ./drivelab-target, ./build
#   A short check: bench/tpcc_terminals.sh --duration 60 --warmup 20 --warehouses 5 --terminals 1500
#
# Needs: a Release build of `drivelab` (a Debug build works but its CPU figure means little),
# PostgreSQL server binaries (the newest /usr/lib/postgresql/*/bin), and a target directory the
# `postgres` user can reach when run as root (e.g. under /tmp or a mount of the drive under test).
# Run as root (or with CAP_SYS_NICE), the timer thread gets SCHED_FIFO, which the lateness target
# assumes (docs/oltp-tpcc.md section 4; the record's details.pool.timer_thread_policy says).
# The database is ~86 MB per warehouse (50 warehouses: ~4.3 GB, loaded first; the load time is
# printed). Exit status: 0 when every target is met, 1 when one is missed, 2 on a failed run.
set -euo pipefail

DURATION=600
WARMUP=60
WAREHOUSES=50
TERMINALS=15000
CONNECTIONS=""
TRANSACTIONS=""
TARGET_DIR=./drivelab-target
BUILD_DIR=./build

die() { echo "tpcc_terminals: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) DURATION=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --warehouses) WAREHOUSES=$2; shift 2 ;;
    --terminals) TERMINALS=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --transactions) TRANSACTIONS=$2; shift 2 ;;
    --target) TARGET_DIR=$2; shift 2 ;;
    --build) BUILD_DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_setup "$TARGET_DIR" "$BUILD_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

POOL_LINE=""
[[ -n "$CONNECTIONS" ]] && POOL_LINE="      connections: $CONNECTIONS"
TX_LINE=""
[[ -n "$TRANSACTIONS" ]] && TX_LINE="      transactions: $TRANSACTIONS"
cat >"$WORK/protocol.yaml" <<EOF
protocol: bench-tpcc-terminals
description: $TERMINALS TPC-C terminals with keying and think times on $WAREHOUSES warehouses, managed PostgreSQL
seed: 1
tests:
  - name: terminals
    kind: tpcc
    warmup: ${WARMUP}s
    duration: ${DURATION}s
    interval: 10s
    tpcc:
      backend: postgres
      server: {managed: postgres, buffer: 1GiB}
      warehouses: $WAREHOUSES
      users: $TERMINALS
      think: tpcc
      terminals: pooled
$POOL_LINE
$TX_LINE
EOF

echo "tpcc_terminals: $TERMINALS terminals, $WAREHOUSES warehouses, warm-up ${WARMUP}s, measured ${DURATION}s, target $TARGET_DIR"
started=$(date +%s)
if ! "$DRIVELAB" run "$WORK/protocol.yaml" --target "$TARGET_DIR" --out "$WORK/out" --quiet >"$WORK/run.log" 2>&1; then
  cat "$WORK/run.log" >&2
  [[ -f "$WORK/out/latest.json" ]] || die "drivelab run failed without a record"
fi
echo "tpcc_terminals: run took $(( $(date +%s) - started )) s in total (load + warm-up + measured + checks)"
RECORD="$TARGET_DIR/drivelab-bench-tpcc-terminals.json"
cp "$WORK/out/latest.json" "$RECORD"
echo "tpcc_terminals: record kept as $RECORD"

python3 - "$WORK/out/latest.json" "$WORK/run.log" <<'PY'
import json, sys
record = json.load(open(sys.argv[1]))
t = record["tests"][0]
m = {k: v["value"] for k, v in t.get("metrics", {}).items()} if isinstance(t.get("metrics"), dict) \
    else {x["name"]: x["value"] for x in t.get("metrics", [])}
build = record.get("tool", {}).get("build_type", "?")
if t["status"] != "complete":
    print(f"drivelab test status {t['status']}: {t.get('reason', '')}")
    print(open(sys.argv[2]).read()[-3000:])
    sys.exit(2)
load = t.get("details", {}).get("load", {})
if load:
    print(f"load: {load.get('seconds', 0):.0f} s, {load.get('rate_mb_s', 0):.1f} MB/s, {load.get('threads', '?')} threads")
print(f"context: tps {m.get('tps', 0):.1f}, tpm_c {m.get('tpm_c', 0):.0f}, efficiency {m.get('efficiency_pct', 0):.0f}%, "
      f"response p50/p99 {m.get('latency_p50_ms', 0):.1f}/{m.get('latency_p99_ms', 0):.1f} ms, "
      f"queue wait p50/p99 {m.get('queue_wait_p50_ms', 0):.2f}/{m.get('queue_wait_p99_ms', 0):.2f} ms, "
      f"service p50/p99 {m.get('service_time_p50_ms', 0):.1f}/{m.get('service_time_p99_ms', 0):.1f} ms, "
      f"pool {t.get('details', {}).get('pool', {}).get('workers', '?')} connections "
      f"{m.get('pool_utilisation_pct', 0):.0f}% busy, errors {m.get('errors', 0):.0f}, build {build}")
tps = m.get("tps", 0)
cpu = m.get("driver_cpu_pct")
tx = t.get("details", {}).get("transactions", "statements (before transactions: existed)")
if cpu is not None and tps > 0:
    print(f"transactions: {tx}; driver CPU per transaction {cpu / 100 / tps * 1000:.3f} ms")
for w in t.get("warnings", []):
    print(f"warning: {w}")
checks = [
    ("driver RSS peak", m.get("driver_rss_peak_mib"), "MiB", 200.0),
    ("driver CPU", m.get("driver_cpu_pct"), "% of one core", 25.0),
    ("timer lateness p99", m.get("timer_lateness_p99_ms"), "ms", 1.0),
]
failed = False
for name, value, unit, limit in checks:
    if value is None:
        print(f"{name:20s} missing from the record                FAIL")
        failed = True
        continue
    ok = value <= limit
    failed |= not ok
    print(f"{name:20s} {value:10.2f} {unit:14s} (target <= {limit:g})  {'PASS' if ok else 'FAIL'}")
if build not in ("Release", "RelWithDebInfo"):
    print(f"note: {build} build; CPU figures of a Debug build are pessimistic")
sys.exit(1 if failed else 0)
PY
