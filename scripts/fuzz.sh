#!/usr/bin/env bash
# Builds the fuzz targets (tests/fuzz/: the trace readers and the YAML config toolkit) with clang and libFuzzer, then runs each for
# DRIVELAB_FUZZ_SECONDS (default 8) from a seed corpus (tests/data/traces, config/*.yaml). Fails on any crash,
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
  [mqsim]="mqsim_small.trace" [spc]="spc.csv" [alibaba]="alibaba.csv" [tencent]="tencent.csv"
  [systor17]="systor17_vdi.csv"
  [cloudphysics_binary]="" [native]=""
  [automatic]="fio_v2.iolog fio_v3.iolog blkparse.txt msr_cambridge.csv cloudphysics_small.csv mqsim_small.trace spc.csv alibaba.csv tencent.csv systor17_vdi.csv"
)
status=0
# run NAME CORPUS_DIR: one target for $seconds; a crash, timeout or sanitizer report fails the run.
run() {
  local name=$1 dir=$2 log="$build/fuzz_$1.log"
  if "$build/fuzz_$name" "$dir" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
       -rss_limit_mb=1024 -print_final_stats=1 >"$log" 2>&1; then
    echo "fuzz: $name ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds}s)"
  else
    echo "fuzz: $name FAILED, log: $log" >&2
    tail -40 "$log" >&2
    status=1
  fi
}
for format in fio_iolog_v2 fio_iolog_v3 blkparse msr_cambridge cloudphysics_csv mqsim spc alibaba tencent \
              systor17 cloudphysics_binary native automatic; do
  dir="$build/corpus/$format"
  rm -rf "$dir" && mkdir -p "$dir"
  for f in ${corpus[$format]}; do cp "$seeds/$f" "$dir/"; done
  run "$format" "$dir"
done
dir="$build/corpus/config_document"
rm -rf "$dir" && mkdir -p "$dir" && cp "$root"/config/*.yaml "$dir/"
run config_document "$dir"
exit $status
