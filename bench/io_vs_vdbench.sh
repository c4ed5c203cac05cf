#!/usr/bin/env bash
# The `io` and `vdbench` kinds on the SAME tmpfs file, engine, depth and batch: since both issue
# through the one pump (io/pump.hpp), a request's latency starts at the same point in both (just
# before its queue(), fio's start_time), so the two kinds must report the same mean latency for
# the same work. Before the pump, `vdbench` stamped a whole batch just before submit() and `io`
# each request before queue(), so their latencies started at different points.
#
#   bench/io_vs_vdbench.sh [TARGET_DIR] [BUILD_DIR]     (defaults: ./drivelab-target, ./build)
#
# TARGET_DIR is unused (the file lives on tmpfs, SHM_DIR) but kept for the bench scripts' shape.
# Environment (all optional):
#   RUNTIME=5  RAMP=1           measured and warm-up seconds per run
#   REPEAT=3                    runs per kind and case, alternating which kind goes first
#   ENGINES="psync libaio io_uring"   QDS="1 32"   (psync: QD n = n jobs of depth 1 on both sides)
#   SHM_DIR=/dev/shm/drivelab-io-vs-vdbench   SHM_SIZE=1GiB
#   SHOW_RUNS=1                 also print each run's mean latency (to see the spread behind a median)
# Work: 4 KiB random reads, buffered (tmpfs has no O_DIRECT), one job (psync: QD jobs), closed
# loop (vdbench iorate=max), with vdbench's batching on both sides: every I/O of a pass in one
# submit (io: iodepth_batch_submit = depth) and up to depth completions per reap
# (iodepth_batch_complete_min 1, _max = depth). Compared: the mean latency, issue to reap — `io`'s latency_avg_us against
# `vdbench`'s service_latency_avg_us of its iorate=max run (for a closed loop the intended start
# is the issue time, so its latency_avg_us is the same number).
# Verdict per case: the medians of the two kinds' means within 3% of each other (issue 31).
# Beside it, each kind's user / system CPU per I/O (the whole process over the measured phase: io's
# cpu_usr_pct / cpu_sys_pct over its iops, vdbench's cpu_usr_s / cpu_sys_s over its ios): the two
# kinds issue through the same pump, so a gap there is the kinds' own work (bench/bench_pump).
# Exit status: 0 every case within 3%, 1 a case outside, 2 bad usage or a run that failed.
set -euo pipefail
die() { echo "io_vs_vdbench: $*" >&2; exit 2; }
source "$(dirname "$0")/bench_lib.sh"
bench_setup "${1:-}" "${2:-}"
export RUNTIME=${RUNTIME:-5} RAMP=${RAMP:-1} REPEAT=${REPEAT:-3} ENGINES=${ENGINES:-psync libaio io_uring}
export QDS=${QDS:-1 32} SHM_DIR=${SHM_DIR:-/dev/shm/drivelab-io-vs-vdbench} SHM_SIZE=${SHM_SIZE:-1GiB}
mkdir -p "$SHM_DIR"
trap 'rm -rf "$SHM_DIR"' EXIT

python3 - <<'PY'
import json, os, statistics, subprocess, sys, tempfile

env = os.environ
drivelab, shm = env["DRIVELAB"], env["SHM_DIR"]
runtime, ramp, repeat = int(env["RUNTIME"]), int(env["RAMP"]), int(env["REPEAT"])
engines, qds, size = env["ENGINES"].split(), [int(q) for q in env["QDS"].split()], env["SHM_SIZE"]


def record(out):
    rec = json.load(open(os.path.join(out, "latest.json")))
    t = rec["tests"][0]
    if t["status"] != "complete":
        sys.exit(f"io_vs_vdbench: {t['kind']} test {t['status']}: {t.get('reason', '')}")
    return t


def metrics(obj):
    m = obj["metrics"]
    return {k: v["value"] for k, v in m.items()} if isinstance(m, dict) else {x["name"]: x["value"] for x in m}


def run_io(engine, qd, out):
    jobs, depth = (qd, 1) if engine == "psync" else (1, qd)
    subprocess.run([drivelab, "io", "--target", shm, "--name", "bench", "--engine", engine, "--rw", "randread",
                    "--xfersize", "4k", "--iodepth", str(depth), "--jobs", str(jobs), "--file-size", size,
                    "--direct", "false", "--iodepth-batch-submit", str(depth), "--iodepth-batch-complete-min", "1",
                    "--iodepth-batch-complete-max", str(depth), "--warmup", f"{ramp}s", "--duration", f"{runtime}s",
                    "--interval", f"{runtime}s", "--out", out, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    m = metrics(record(out))
    per_io = 1e9 / 100 / m["iops"] if m["iops"] > 0 else float("nan")  # percent of a core -> ns per I/O
    return m["latency_avg_us"], m["cpu_usr_pct"] * per_io, m["cpu_sys_pct"] * per_io


def run_vdbench(engine, qd, out):
    jobs = qd if engine == "psync" else 1
    proto = os.path.join(out, "p.yaml")
    with open(proto, "w") as f:
        f.write(f"""protocol: io-vs-vdbench
seed: 1
tests:
  - name: bench
    kind: vdbench
    warmup: {ramp}s
    duration: {runtime}s
    interval: {runtime}s
    vdbench:
      engine: {engine}
      threads: {qd}
      jobs: {jobs}
      file_size: {size}
      direct: false
      iorate: max
      workloads:
        - {{name: rr, xfersize: 4k, rdpct: 100, seekpct: 100}}
""")
    subprocess.run([drivelab, "run", proto, "--target", shm, "--out", out, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    t = record(out)
    for g in t.get("groups", {}).values():  # {group: {metric: {value, unit}}}
        if "service_latency_avg_us" in g:
            ios = g["ios"]["value"]
            per_io = 1e9 / ios if ios > 0 else float("nan")  # CPU seconds -> ns per I/O
            return g["service_latency_avg_us"]["value"], g["cpu_usr_s"]["value"] * per_io, \
                g["cpu_sys_s"]["value"] * per_io
    sys.exit("io_vs_vdbench: no service_latency_avg_us in the vdbench record")


print(f"drivelab: {drivelab};  {runtime}s runs after {ramp}s warm-up, {repeat} per kind, 4 KiB random reads on {shm}")
print("CPU ns/I/O: the whole process's user / system CPU over the measured phase per I/O (medians): at QD 32 the")
print("mean latency is queueing, so a kind that spends more CPU per I/O can show a longer mean latency")
print(f"{'engine':<9} {'QD':>4} {'io mean us':>11} {'vdbench mean us':>16} {'vdbench/io':>11}  verdict"
      f"{'':>9}{'io CPU ns/I/O':>16} {'vdbench CPU ns/I/O':>19}")
bad = 0
for engine in engines:
    for qd in qds:
        ours = {"io": [], "vdbench": []}
        for i in range(repeat):
            order = ["io", "vdbench"] if i % 2 == 0 else ["vdbench", "io"]
            for kind in order:
                with tempfile.TemporaryDirectory() as out:
                    ours[kind].append((run_io if kind == "io" else run_vdbench)(engine, qd, out))
        if env.get("SHOW_RUNS"):
            for k, v in ours.items():
                print(f"  {engine} QD{qd} {k} mean us per run: " + " ".join(f"{x[0]:.2f}" for x in v), flush=True)
        med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in ours.items()}
        a, b = med["io"][0], med["vdbench"][0]
        ratio = b / a if a > 0 else float("nan")
        ok = abs(ratio - 1.0) <= 0.03
        bad += not ok
        cpu = {k: f"{v[1]:.0f} / {v[2]:.0f}" for k, v in med.items()}
        print(f"{engine:<9} {qd:>4} {a:>11.2f} {b:>16.2f} {ratio:>11.3f}  {'PASS' if ok else 'FAIL'} (within 3%)"
              f"{cpu['io']:>16} {cpu['vdbench']:>19}", flush=True)
sys.exit(1 if bad else 0)
PY
