#!/usr/bin/env bash
# The real-run proof of `drivelab compare` (issue 32, Done-when): on the same target,
#  1. A/A: five runs against five more runs of the same test (alternated A B B A A B ...) are
#     "no difference detected" on every metric, and `--fail-if-worse 3%` exits 0;
#  2. a candidate rate-limited to 90% of the baseline (the same vdbench-kind test with
#     `iorate: <0.9 x the baseline's geometric-mean IOPS>`, open loop, against `iorate: max`) is
#     detected as slower at N = 5, its 95% interval of the IOPS change contains -10%, and
#     `--fail-if-worse 3%` exits 1.
# Both for two targets: the null engine (no I/O: drivelab's own loop) and a file on tmpfs (psync).
#
#   bench/compare_aa.sh [TARGET_DIR] [BUILD_DIR]     (defaults: ./drivelab-target, ./build)
#
# TARGET_DIR holds the records (TARGET_DIR/compare-aa/<case>/{a,b,c}); the tmpfs file lives in
# SHM_DIR. Environment (all optional):
#   RUNTIME=3  RAMP=1      measured and warm-up seconds per run
#   N=5                    runs per side
#   THREADS=1              vdbench threads (outstanding I/Os); with 8 on this 2-core VM a tmpfs run's
#                          IOPS varied ~10% from run to run (five runs then detect only ~15-20%)
#   CASES="null tmpfs"     SHM_DIR=/dev/shm/drivelab-compare-aa   SHM_SIZE=256MiB
# Exit status: 0 every check held, 1 a check failed (each printed as FAIL), 2 bad usage or a run
# that failed.
set -euo pipefail
die() { echo "compare_aa: $*" >&2; exit 2; }
source "$(dirname "$0")/bench_lib.sh"
bench_setup "${1:-}" "${2:-}"
export RUNTIME=${RUNTIME:-3} RAMP=${RAMP:-1} N=${N:-5} THREADS=${THREADS:-1} CASES=${CASES:-null tmpfs}
export SHM_DIR=${SHM_DIR:-/dev/shm/drivelab-compare-aa} SHM_SIZE=${SHM_SIZE:-256MiB}
mkdir -p "$SHM_DIR"
trap 'rm -rf "$SHM_DIR"' EXIT

python3 - <<'PY'
import json, math, os, shutil, subprocess, sys

env = os.environ
drivelab, target_dir, shm = env["DRIVELAB"], env["TARGET_DIR"], env["SHM_DIR"]
runtime, ramp, n, threads = int(env["RUNTIME"]), int(env["RAMP"]), int(env["N"]), int(env["THREADS"])
failed = []


def protocol(path, engine, iorate):
    with open(path, "w") as f:
        f.write(f"""protocol: compare-aa
seed: 1
tests:
  - name: aa
    kind: vdbench
    warmup: {ramp}s
    duration: {runtime}s
    interval: 1s
    vdbench:
      engine: {engine}
      threads: {threads}
      file_size: {env["SHM_SIZE"]}
      direct: false
      keep_file: true
      iorate: {iorate}
      workloads:
        - {{name: rr, xfersize: 4k, rdpct: 100, seekpct: 100}}
""")


def run(proto, target, out):
    r = subprocess.run([drivelab, "run", proto, "--target", target, "--out", out, "--quiet"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"compare_aa: drivelab run {proto} exited {r.returncode}: {r.stderr.strip()}")
    latest = os.path.join(out, "latest.json")
    path = os.path.join(out, os.readlink(latest))
    rec = json.load(open(path))
    t = rec["tests"][0]
    m = t["metrics"]
    iops = m["iops"]["value"] if isinstance(m, dict) else next(x["value"] for x in m if x["name"] == "iops")
    return path, iops


def compare(base, cand, json_out):
    r = subprocess.run([drivelab, "compare", "--fail-if-worse", "3%", "--json", json_out, *base, "--", *cand],
                       capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode == 2:
        sys.exit(f"compare_aa: drivelab compare: bad input: {r.stderr.strip()}")
    return r.returncode, json.load(open(json_out))


def check(what, ok):
    print(f"{'PASS' if ok else 'FAIL'}: {what}")
    if not ok:
        failed.append(what)


for case in env["CASES"].split():
    engine, target = ("null", shm) if case == "null" else ("psync", shm)
    base_dir = os.path.join(target_dir, "compare-aa", case)
    shutil.rmtree(base_dir, ignore_errors=True)
    os.makedirs(base_dir)
    full = os.path.join(base_dir, "max.yaml")
    protocol(full, engine, "max")
    a, b = [], []
    # A B B A A B ...: drift falls on both sides alike.
    for i in range(n):
        for side in ("ab" if i % 2 == 0 else "ba"):
            path, iops = run(full, target, os.path.join(base_dir, side))
            (a if side == "a" else b).append((path, iops))
    print(f"\n== {case}: A/A, {n} runs a side, {runtime} s each ({engine} engine)")
    rc, j = compare([p for p, _ in a], [p for p, _ in b], os.path.join(base_dir, "aa.json"))
    verdicts = [m["verdict"] for t in j["tests"] for m in t["metrics"]]
    check(f"{case} A/A: every metric 'no difference detected' ({verdicts})",
          all(v == "no difference detected" for v in verdicts))
    check(f"{case} A/A: --fail-if-worse 3% exits 0 (exit {rc})", rc == 0)

    gm = math.exp(sum(math.log(x) for _, x in a) / len(a))
    rate = int(gm * 0.9)
    limited = os.path.join(base_dir, "limited.yaml")
    protocol(limited, engine, rate)
    c = [run(limited, target, os.path.join(base_dir, "c")) for _ in range(n)]
    print(f"\n== {case}: iorate max against iorate {rate} (90% of the baseline's {gm:.0f} IOPS)")
    held = math.exp(sum(math.log(x) for _, x in c) / len(c))
    if held < 0.97 * rate:
        # The open-loop pacer could not issue at the asked rate (the null engine's closed loop is
        # faster than one job's schedule of sleeps): no rate-limited candidate on this target.
        print(f"SKIP: {case} 90%: the open-loop runs held {held:.0f} of the {rate} IOPS asked; "
              "no 90% candidate on this target (fewer THREADS, or a slower target)")
        continue
    rc, j = compare([p for p, _ in a], [p for p, _ in c], os.path.join(base_dir, "limited.json"))
    iops = next(m for t in j["tests"] for m in t["metrics"] if m["metric"] == "iops")
    lo, hi = iops["change_ci_pct"] or [float("nan")] * 2
    check(f"{case} 90%: iops judged slower ({iops['verdict_word']})", iops["verdict_word"] == "slower")
    check(f"{case} 90%: the 95% interval [{lo:+.1f}%, {hi:+.1f}%] contains -10%", lo <= -10 <= hi)
    check(f"{case} 90%: --fail-if-worse 3% exits 1 (exit {rc})", rc == 1)

print(f"\ncompare_aa: {'all checks passed' if not failed else f'{len(failed)} check(s) failed'}")
sys.exit(1 if failed else 0)
PY
