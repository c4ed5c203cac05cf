#!/usr/bin/env bash
# Builds the trace-reader fuzz targets (tests/fuzz/) with clang and libFuzzer, then runs each for
# DRIVELAB_FUZZ_SECONDS (default 8) from a seed corpus of tests/data/traces. Fails on any crash,
# uncaught exception, timeout or sanitizer report. Budget: build + run about 3 minutes on 2 cores.
# Usage: scripts/fuzz.sh [BUILD_DIR]   (default build-fuzz)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-fuzz}
seconds=${DRIVELAB_FUZZ_SECONDS:-8}

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (scripts/install-deps.sh installs clang)" >&2
  exit 1
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
cmake --build "$build" -j2

seeds="$root/tests/data/traces"
declare -A corpus=(
  [fio_iolog_v2]="fio_v2.iolog" [fio_iolog_v3]="fio_v3.iolog" [blkparse]="blkparse.txt"
  [msr_cambridge]="msr_cambridge.csv" [cloudphysics_csv]="cloudphysics_small.csv"
  [umass]="umass_small.trace umass_spc.csv" [alibaba]="alibaba.csv" [tencent]="tencent.csv"
  [cloudphysics_binary]="" [native]=""
  [automatic]="fio_v2.iolog fio_v3.iolog blkparse.txt msr_cambridge.csv cloudphysics_small.csv umass_small.trace umass_spc.csv alibaba.csv tencent.csv"
)
status=0
for format in fio_iolog_v2 fio_iolog_v3 blkparse msr_cambridge cloudphysics_csv umass alibaba tencent \
              cloudphysics_binary native automatic; do
  dir="$build/corpus/$format"
  rm -rf "$dir" && mkdir -p "$dir"
  for f in ${corpus[$format]}; do cp "$seeds/$f" "$dir/"; done
  log="$build/fuzz_$format.log"
  if "$build/fuzz_$format" "$dir" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
       -rss_limit_mb=1024 -print_final_stats=1 >"$log" 2>&1; then
    echo "fuzz: $format ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds}s)"
  else
    echo "fuzz: $format FAILED, log: $log" >&2
    tail -40 "$log" >&2
    status=1
  fi
done
exit $status
