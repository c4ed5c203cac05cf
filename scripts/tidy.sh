#!/usr/bin/env bash
# clang-tidy over the compile database, with the checks of .clang-tidy and every warning an error,
# with ONE pinned clang-tidy: 19 (19.1.7), the clang-tidy-19 package of both Debian releases the
# project builds on: Debian 13's own, and Debian 12's from its main archive (1:19.1.7-3~deb12u1,
# the same LLVM release). Each release's default clang-tidy differs (14 on Debian 12, 19 on
# Debian 13), and a newer clang-tidy holds more checks in bugprone-* and performance-*: a file
# clean for one is not for the other, so the checks are judged by version 19 only. CI (.ci/run)
# runs this script on the CI machine itself, after the style check, and fails on any finding.
# Where the release has no clang-tidy-19 the script says so and exits 2.
#
#   scripts/tidy.sh                 every translation unit of the repository (sources, tests, bench)
#   scripts/tidy.sh FILE.cpp...     these translation units only
#   scripts/tidy.sh --install       as root: install clang-tidy-19 (and the build's packages,
#                                   scripts/install-deps.sh build, with GoogleTest and Google
#                                   Benchmark for the tests and bench/) when missing, then run
#
# The compile database is build/compile_commands.json (DRIVELAB_TIDY_BUILD_DIR overrides the
# folder); when it is missing, the script configures that folder with cmake (configure only: no
# compiling). Generated sources in the build folder are not checked. DRIVELAB_TIDY_CONFIG, when
# set, replaces .clang-tidy (clang-tidy's -config; scripts/limits.sh runs one check so). Runs
# DRIVELAB_TIDY_JOBS clang-tidy processes at a time (run-clang-tidy-19 -j; default 2, CI's cores).
# Exit status: 0 clean, 1 findings (printed as errors with file:line:column and the check's name),
# 2 bad usage or the pinned clang-tidy is not here.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly version=19
install=false
files=()
for arg in "$@"; do
  case $arg in
    --install) install=true ;;
    -h|--help) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tidy: unknown option '$arg' (see --help)" >&2; exit 2 ;;
    *) files+=("$arg") ;;
  esac
done

tidy=clang-tidy-$version
runner=run-clang-tidy-$version
if $install && ! command -v "$tidy" >/dev/null; then
  [ "$(id -u)" -eq 0 ] || { echo "tidy: --install needs root (apt-get install $tidy)" >&2; exit 2; }
  apt-get update -qq
  if ! apt-cache show "$tidy" >/dev/null 2>&1; then
    echo "tidy: this release has no $tidy package (Debian 12 and 13 have it)" >&2
    exit 2
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$tidy" >/dev/null
fi
command -v "$tidy" >/dev/null || { echo "tidy: $tidy not found (apt-get install $tidy; or scripts/tidy.sh --install)" >&2; exit 2; }
command -v "$runner" >/dev/null || { echo "tidy: $runner not found (it comes with the $tidy package)" >&2; exit 2; }
"$tidy" --version | grep -q "version $version\." || { echo "tidy: $tidy is not clang-tidy $version" >&2; exit 2; }

build=${DRIVELAB_TIDY_BUILD_DIR:-build}
if [ ! -f "$build/compile_commands.json" ]; then
  if $install; then
    ./scripts/install-deps.sh build
    # The tests' and bench/'s headers (configure requires them: DRIVELAB_BUILD_TESTS, _BENCH).
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libgtest-dev libgmock-dev libbenchmark-dev >/dev/null
  fi
  echo "tidy: configuring $build/ for its compile database" >&2
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDRIVELAB_BUILD_BENCH=ON \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
fi

# The translation units: the tracked .cpp files (given, or all of them less those under a prefix
# of scripts/tidy-pending.txt, not yet judged) that the database has.
here=$(pwd)
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(git ls-files '*.cpp' | awk 'NR == FNR { sub(/#.*/, ""); gsub(/[ \t]+/, "");
    if ($0 != "") pending[++n] = $0; next }
    { for (i = 1; i <= n; i++) if (index($0, pending[i]) == 1) next; print }' scripts/tidy-pending.txt -)
fi
mapfile -t units < <(python3 - "$build/compile_commands.json" "$here" "${files[@]}" <<'PY'
import json, os, sys
db, here, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
known = {os.path.realpath(os.path.join(e["directory"], e["file"])) for e in json.load(open(db))}
for f in wanted:
    p = os.path.realpath(os.path.join(here, f))
    if p in known:
        print(p)
PY
)
[ ${#units[@]} -gt 0 ] || { echo "tidy: none of the files is in $build/compile_commands.json" >&2; exit 2; }

# run-clang-tidy takes regular expressions: one anchored alternative per file.
regex=$(printf '%s\n' "${units[@]}" | sed 's/[.[\*^$()+?{|]/\\&/g; s/^/^/; s/$/$/' | paste -sd'|')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
rc=0
config=()
[ -z "${DRIVELAB_TIDY_CONFIG:-}" ] || config=(-config="$DRIVELAB_TIDY_CONFIG")
"$runner" -clang-tidy-binary "$(command -v "$tidy")" -p "$build" -j "${DRIVELAB_TIDY_JOBS:-2}" -quiet "${config[@]}" \
  -extra-arg=-Wno-unknown-warning-option "$regex" >"$log" 2>&1 || rc=$?
# Only the findings (and a failure to run): not the "N warnings generated" counts of the headers;
# without run-clang-tidy's colours, so that the lines can be searched.
sed -i 's/\x1b\[[0-9;]*m//g' "$log"
grep -v -E '^([^ ]*clang-tidy-[0-9]+ |[0-9]+ warnings? (and [0-9]+ errors? )?generated\.|Suppressed [0-9]+ warnings|Use -header-filter|[0-9]+ warnings? treated as errors)' "$log" || true
findings=$(grep -c -E '^[^ ].*:[0-9]+:[0-9]+: error: ' "$log" || true)
echo "tidy: ${#units[@]} translation units, $findings findings, $(( $(date +%s) - start )) s (clang-tidy $version)"
[ "$rc" -eq 0 ] && [ "$findings" -eq 0 ] || exit 1
