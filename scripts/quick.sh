#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build drivelab (Release) and
# run config/quick.yaml against a directory on the drive under test.
#
#   ./scripts/quick.sh DIR [extra drivelab run options, e.g. --out results-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: $0 DIR-ON-THE-DRIVE-UNDER-TEST [drivelab run options, e.g. --out RESULTS-DIR]"
case "${1:-}" in
  -h|--help) echo "$usage"; exit 0 ;;
  "") echo "$usage" >&2; exit 2 ;;
  -*) echo "$0: the first argument is the directory to test, not an option ('$1')" >&2; echo "$usage" >&2; exit 2 ;;
esac
target=$1
shift
"$here/scripts/install-deps.sh"
# No tests or benchmarks in this build: its `all` is drivelab and the package's generated files, so
# scripts/package-check.sh builds the Debian package from it without compiling anything more.
cmake -S "$here" -B "$here/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDRIVELAB_BUILD_TESTS=OFF \
  -DDRIVELAB_BUILD_BENCH=OFF >/dev/null
cmake --build "$here/build" --target drivelab -j "$(nproc)"
mkdir -p "$target"
exec "$here/build/apps/drivelab" run "$here/config/quick.yaml" --target "$target" "$@"
