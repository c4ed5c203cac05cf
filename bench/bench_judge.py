"""Verdicts of the benchmark scripts on their pair ratios (issue 32; docs/confidence.md, "Benchmark
verdicts"): each ratio is ours / peer for one pair of runs next to each other in time, and the
verdict is bench/judge's (core/inference.hpp judge_pairs: the 95% interval of the ratios'
geometric mean, Student t on the logs) against a bound: PASS when the interval lies on the right
side of it, FAIL when on the wrong side, UNRESOLVED (with the pairs that would resolve it)
otherwise. One pair has no interval: UNRESOLVED."""
import math
import os
import re
import subprocess
import sys

RULES = ("at_least", "at_most", "not_below")
VERDICTS = ("PASS", "FAIL", "UNRESOLVED")


def build_programs(build, name, usage_error):
    """The absolute paths of a build directory's drivelab (BUILD/apps/drivelab) and judge
    (BUILD/bench/judge, built with -DDRIVELAB_BUILD_BENCH=ON); calls usage_error(name, message)
    when either is not an executable."""
    drivelab = os.path.abspath(os.path.join(build, "apps", "drivelab"))
    if not os.access(drivelab, os.X_OK):
        usage_error(name, f"{drivelab} not found: build the 'drivelab' target first")
    path = os.path.abspath(os.path.join(build, "bench", "judge"))
    if not os.access(path, os.X_OK):
        usage_error(name, f"{path} not found: build the 'judge' target first "
                          "(cmake -DDRIVELAB_BUILD_BENCH=ON, then cmake --build BUILD_DIR --target judge)")
    return drivelab, path


def judge(path, label, rule, bound, ratios):
    """Runs judge on the pair ratios; returns (line, verdict) with verdict one of VERDICTS. Ratios
    that were not measured (None, NaN, <= 0) are left out and the line says how many."""
    assert rule in RULES, rule
    kept = [r for r in ratios if r is not None and math.isfinite(r) and r > 0]
    dropped = len(ratios) - len(kept)
    note = f" ({dropped} pair(s) without a value left out)" if dropped else ""
    if not kept:
        return f"{label}: no pair ratio measured: UNRESOLVED{note}", "UNRESOLVED"
    p = subprocess.run([path, "--label", label, "--rule", rule, "--bound", repr(float(bound))] +
                       [repr(float(r)) for r in kept], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = re.findall(r": (PASS|FAIL|UNRESOLVED)\b", p.stdout)
    if p.returncode != 0 or not found:
        sys.exit(f"judge failed (exit {p.returncode}) on {label}: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout.strip() + note, found[-1]


def overall(verdicts):
    """FAIL when any verdict is FAIL, else UNRESOLVED when any is, else PASS."""
    for v in ("FAIL", "UNRESOLVED"):
        if v in verdicts:
            return v
    return "PASS"
