#!/usr/bin/env bash
# The vdbench kind's accuracy checks on an O_DIRECT file (issue 4, "done when"):
#   1. a 4 KiB random read curve (128 threads, io_uring): a max run, then 10, 50, 70, 80, 90, 100,
#      110, 120% of its IOPS, open loop with exponential arrivals. Verdict: achieved within +-2% of
#      requested at every point up to 90%; at 110% and 120% achieved < requested, the latency from
#      the intended start above the 100% point's, and lateness reported (> 0).
#   2. the four corners at iorate=max (4K random read 128 threads, 4K random write 64, 64K
#      sequential read 16, 64K sequential write 8). Verdict: Little's law, IOPS x mean latency
#      within +-3% of the threads.
# The protocol is bench/vdbench_checks.yaml (3 s warm-up + 10 s per run, 2 GiB files).
#
#   bench/vdbench_checks.sh [TARGET_DIR] [BUILD_DIR]     (defaults: ./drivelab-target, ./build)
#
# Exit status 0 when every verdict passes, 1 otherwise, 2 when the run failed. Run it on a quiet
# machine: the checks measure the tool, and a busy CPU shows up as lateness and missed rates.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-./drivelab-target}
build=${2:-./build}
drivelab="$build/apps/drivelab"
[[ -x "$drivelab" ]] || { echo "vdbench_checks: $drivelab not found: build the 'drivelab' target" >&2; exit 2; }
mkdir -p "$target"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$drivelab" run "$here/bench/vdbench_checks.yaml" --target "$target" --out "$out" --quiet >"$out/run.log" 2>&1 || {
  [[ -f "$out/latest.json" ]] || { cat "$out/run.log" >&2; exit 2; }
}
python3 - "$out/latest.json" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1]))
v = lambda g, k: g[k]["value"] if k in g else float("nan")
failed = 0
curve = rec["tests"][0]
if curve["status"] != "complete":
    print(f"curve test {curve['status']}: {curve.get('reason', '')}"); sys.exit(2)
g = curve["groups"]
print("4 KiB random read curve, 128 threads, io_uring, O_DIRECT")
print(f"{'run':<6}{'requested':>11}{'achieved':>11}{'ach/req':>9}{'mean lat':>12}{'service':>10}{'lateness p99':>14}{'QD':>7}  verdict")
p100 = g.get("point_100")
for name in [k for k in g if k == "max" or k.startswith("point_")]:
    p = g[name]
    req, ach = v(p, "requested_iops"), v(p, "achieved_iops")
    ratio = ach / req if req else float("nan")
    verdict = ""
    if name != "max":
        pct = v(p, "requested_pct")
        if pct <= 90:
            ok = abs(ratio - 1) <= 0.02
            verdict = "PASS (within 2%)" if ok else "FAIL (not within 2%)"
        elif pct > 100:
            ok = ach < req and (p100 is None or v(p, "latency_avg_us") > v(p100, "latency_avg_us")) \
                 and v(p, "lateness_p99_us") > 0
            verdict = "PASS (achieved < requested, latency up, lateness)" if ok else "FAIL"
        else:
            ok = True
        failed += not ok
    print(f"{name:<6}{req:>11,.0f}{ach:>11,.0f}{ratio:>9.4f}{v(p, 'latency_avg_us'):>10,.0f}us"
          f"{v(p, 'service_latency_avg_us'):>8,.0f}us{v(p, 'lateness_p99_us'):>12,.0f}us{v(p, 'achieved_qd'):>7.1f}  {verdict}")
print()
print("Little's law at iorate=max (IOPS x mean latency vs threads, limit +-3%)")
for t in rec["tests"][1:]:
    if t["status"] != "complete":
        print(f"{t['name']:<26} {t['status']}: {t.get('reason', '')}"); failed += 1; continue
    m = t["groups"]["max"]
    dev = v(m, "qd_deviation_pct")
    ok = abs(dev) <= 3
    failed += not ok
    print(f"{t['name']:<26}{v(m, 'achieved_iops'):>10,.0f} IOPS x {v(m, 'latency_avg_us'):>8,.1f} us = "
          f"{v(m, 'achieved_qd'):>7.2f} of {v(m, 'threads'):.0f} ({dev:+.2f}%)  {'PASS' if ok else 'FAIL'}")
print()
print("all checks PASS" if not failed else f"{failed} check(s) FAIL")
sys.exit(1 if failed else 0)
PY
