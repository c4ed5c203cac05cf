#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build drivelab (Release) and
# run config/quick.yaml against a directory on the drive under test.
#
#   ./scripts/quick.sh DIR [extra drivelab run options, e.g. --out results-dir]
# DIR is created if its parent exists.
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
# DIR, or its parent, must exist: it creates one level only, so that a typo in the path to the
# drive under test fails here instead of creating a directory tree on another filesystem and
# benchmarking that.
if [ ! -d "$target" ] && [ ! -d "$(dirname "$target")" ]; then
  echo "$0: neither '$target' nor its parent directory exists: give a directory on the drive under test" >&2
  exit 2
fi
"$here/scripts/install-deps.sh" build
# No tests or benchmarks in this build: its `all` is drivelab and the package's generated files, so
# scripts/package-check.sh builds the Debian package from it without compiling anything more.
cmake -S "$here" -B "$here/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDRIVELAB_BUILD_TESTS=OFF \
  -DDRIVELAB_BUILD_BENCH=OFF >/dev/null
cmake --build "$here/build" --target drivelab -j "$(nproc)"
[ -d "$target" ] || mkdir "$target"
exec "$here/build/apps/drivelab" run "$here/config/quick.yaml" --target "$target" "$@"
