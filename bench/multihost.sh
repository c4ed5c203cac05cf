#!/usr/bin/env bash
# Multi-host runs on Open MPI (issue 16, docs/multihost.md): what the cohort costs and how it scales.
#
#   bench/multihost.sh [BUILD_DIR] [WORK_DIR]      (defaults: ./build, a temporary directory)
#
# Environment (optional): RUNTIME=10 (measured seconds per null-engine run), REPEAT=2 (runs per
# rank count; the order alternates 1 2 4 4 2 1 ... so drift of the machine hits every count alike),
# BARRIERS=20, MERGE_REPS (Google Benchmark's --benchmark_repetitions for the merge, default 3).
#
# It prints:
#  1. start skew across 4 ranks at runner::Cohort's phase barrier, p50/p99 over BARRIERS barriers
#     (build/bench/cohort_skew under mpirun on lo over TCP);
#  2. the CPU cost of one interval's merge (build/bench/bench_merge: merge_host_records of four
#     hosts' records, per interval of the merged test);
#  3. aggregate IOPS of `drivelab io --engine null` (one job, 4 KiB random reads: the tool's own
#     cost per I/O, no device) on 1, 2 and 4 ranks, from the merged records, and the ratios to one
#     rank. On 2 cores, 2 ranks must reach >= 1.9x one rank (each rank is one busy core; 4 ranks
#     share 2 cores, so 4 ranks is expected near 2 ranks, not 4x).
# and the load average before and after, so the reader knows what else ran.
set -euo pipefail
build=$(readlink -f "${1:-build}")
work=${2:-$(mktemp -d)}
mkdir -p "$work"
runtime=${RUNTIME:-10}
repeat=${REPEAT:-2}
barriers=${BARRIERS:-20}
exe="$build/apps/drivelab"
for f in "$exe" "$build/bench/cohort_skew" "$build/bench/bench_merge"; do
  [ -x "$f" ] || { echo "multihost.sh: $f is missing (build with libopenmpi-dev installed)" >&2; exit 2; }
done
command -v mpirun >/dev/null || { echo "multihost.sh: no mpirun (apt-get install openmpi-bin)" >&2; exit 2; }
# The one mpirun command line of the multihost tests (Open MPI 4.1 and 5.0 alike; docs/multihost.md).
# shellcheck source=../tests/multihost/mpirun.sh
. "$(dirname "$0")/../tests/multihost/mpirun.sh"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
echo "== 1. barrier start skew"
mpirun_local 4 "$build/bench/cohort_skew" "$barriers"

echo "== 2. merge cost"
"$build/bench/bench_merge" --benchmark_repetitions="${MERGE_REPS:-3}" --benchmark_report_aggregates_only=true

echo "== 3. aggregate null-engine IOPS"
declare -A sum=() n=()
order=()
for ((i = 0; i < repeat; i++)); do
  if ((i % 2 == 0)); then order+=(1 2 4); else order+=(4 2 1); fi
done
for ranks in "${order[@]}"; do
  out="$work/out-$ranks-$RANDOM"
  mpirun_local "$ranks" "$exe" io --engine null --rw randread --xfersize 4k --iodepth 32 --jobs 1 \
    --warmup 1s --duration "${runtime}s" --interval "${runtime}s" --target "$work/t{rank}" --out "$out" --quiet \
    >"$out.log" 2>&1 || { tail -20 "$out.log" >&2; echo "multihost.sh: the $ranks-rank run failed" >&2; exit 1; }
  iops=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["tests"][0]["metrics"]["iops"]["value"])' \
    "$(readlink -f "$out/latest.json")")
  printf '  %d rank(s): %.0f IOPS\n' "$ranks" "$iops"
  sum[$ranks]=$(python3 -c "print(${sum[$ranks]:-0} + $iops)")
  n[$ranks]=$(( ${n[$ranks]:-0} + 1 ))
done
python3 - "${sum[1]}" "${n[1]}" "${sum[2]}" "${n[2]}" "${sum[4]}" "${n[4]}" <<'PY'
import sys
s1, n1, s2, n2, s4, n4 = map(float, sys.argv[1:])
one, two, four = s1 / n1, s2 / n2, s4 / n4
print(f"  mean: 1 rank {one:,.0f}  2 ranks {two:,.0f} ({two / one:.2f}x)  4 ranks {four:,.0f} ({four / one:.2f}x)")
print("  2 ranks >= 1.9x one rank:", "PASS" if two / one >= 1.9 else "FAIL")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
