#!/usr/bin/env bash
# The render pipeline's multi-threaded phases (2 unpack, 4 repack) with 1 and with 2 threads, in
# mode none (RAM only: the drive does not take part), and the speedup 1 -> 2 threads of each phase
# and of the total. The same scene (same seed, same points) for both thread counts; each count runs
# REPEAT times and the median is printed.
#
#   bench/render_threads.sh [TARGET_DIR] [BUILD_DIR]
#   env: POINTS (default 8000000: 512 MB of 64-byte points), REPEAT (default 3), THREADS ("1 2")
#
# Prints one line per thread count (seconds per phase, median) and the speedups. On a machine whose
# cores are busy with other work the speedup says little; run it on a quiet machine.
set -euo pipefail

die() { echo "render_threads: $*" >&2; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_setup "${1:-}" "${2:-}"

exec python3 - <<'PY'
import json, os, statistics, subprocess, sys, tempfile

env = os.environ
drivelab, target = env["DRIVELAB"], os.path.abspath(env["TARGET_DIR"])
points = int(env.get("POINTS", "8000000"))
repeat = max(1, int(env.get("REPEAT", "3")))
counts = [int(t) for t in env.get("THREADS", "1 2").split()]
work = tempfile.mkdtemp(prefix="render-threads-")
phases = ["load", "unpack", "repack"]

results = {}
for threads in counts:
    runs = []
    for i in range(repeat):
        proto = os.path.join(work, f"t{threads}.yaml")
        with open(proto, "w") as f:
            f.write(f"""protocol: render-threads
seed: 1
tests:
  - name: render-t{threads}
    kind: render
    render: {{mode: none, points: {points}, threads: {threads}}}
""")
        out = os.path.join(work, f"out-t{threads}-{i}")
        r = subprocess.run([drivelab, "run", proto, "--target", target, "--out", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
            sys.exit(f"render_threads: drivelab failed (exit {r.returncode})")
        rec = json.load(open(os.path.join(out, "latest.json")))
        t = rec["tests"][0]
        if t["status"] != "complete":
            sys.exit(f"render_threads: test {t['status']}: {t.get('reason')}")
        m = t["metrics"]
        runs.append({p: m[f"{p}_s"]["value"] for p in phases} | {"total": m["total_s"]["value"]})
    results[threads] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    x = results[threads]
    print(f"threads {threads}: load {x['load']:.3f} s  unpack {x['unpack']:.3f} s  repack {x['repack']:.3f} s  "
          f"total {x['total']:.3f} s  (median of {repeat}, {points} points, {points * 64 / 1e6:.0f} MB)")

base = results[counts[0]]
for threads in counts[1:]:
    x = results[threads]
    sp = lambda k: base[k] / x[k] if x[k] > 0 else float("nan")
    print(f"speedup {counts[0]} -> {threads} threads: unpack {sp('unpack'):.2f}x  repack {sp('repack'):.2f}x  "
          f"multi-threaded phases {(base['unpack'] + base['repack']) / (x['unpack'] + x['repack']):.2f}x  "
          f"total {sp('total'):.2f}x (load is single-threaded)")
PY
