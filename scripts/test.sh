#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: install what is missing, build with
# AddressSanitizer + UBSan, run every test with ctest (unit, integration, golden).
#
#   ./scripts/test.sh            (build directory: build-test/)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${DRIVELAB_TEST_BUILD_DIR:-$here/build-test}
"$here/scripts/install-deps.sh" test
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDRIVELAB_SANITIZE=ON \
  -DDRIVELAB_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
ctest --output-on-failure --timeout 600 -j 2
# libFuzzer targets of the trace readers, a few seconds each (scripts/fuzz.sh, docs/vdi.md).
"$here/scripts/fuzz.sh" "$build-fuzz"
