#!/usr/bin/env bash
# Builds the fuzz targets (tests/fuzz/: the trace readers, one per registered format, and the YAML config toolkit) with clang and libFuzzer, then runs each for
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
status=0
# run NAME CORPUS_DIR [BINARY]: one target for $seconds (the trace reader binary reads NAME from
# DRIVELAB_FUZZ_FORMAT); a crash, timeout or sanitizer report fails the run.
run() {
  local name=$1 dir=$2 binary=${3:-$build/fuzz_$1} log="$build/fuzz_$1.log"
  if DRIVELAB_FUZZ_FORMAT=$name "$binary" "$dir" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
       -rss_limit_mb=1024 -print_final_stats=1 >"$log" 2>&1; then
    echo "fuzz: $name ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds}s)"
  else
    echo "fuzz: $name FAILED, log: $log" >&2
    tail -40 "$log" >&2
    status=1
  fi
}
# The trace formats come from the registration list (trace/src/formats.cpp): the binary writes each
# row's detection sample as a seed and prints "NAME [SEED_FILE]" per format, then "auto".
corpus="$build/corpus"
rm -rf "$corpus" && mkdir -p "$corpus"
formats=$(DRIVELAB_FUZZ_SEEDS="$corpus" "$build/fuzz_trace_reader")
while read -r format seed_file; do
  [ -n "$format" ] || continue
  if [ -n "$seed_file" ]; then
    cp "$seeds/$seed_file" "$corpus/$format/"
    cp "$seeds/$seed_file" "$corpus/auto/"
  fi
done <<<"$formats"
while read -r format _; do
  [ -n "$format" ] || continue
  run "$format" "$corpus/$format" "$build/fuzz_trace_reader"
done <<<"$formats"
dir="$build/corpus/config_document"
rm -rf "$dir" && mkdir -p "$dir" && cp "$root"/config/*.yaml "$dir/"
run config_document "$dir"
exit $status
