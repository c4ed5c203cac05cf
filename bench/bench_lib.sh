# Sourced by the benchmark scripts written in bash (bench/*.sh): the checks each makes before it
# starts, and the start of those written in Python, written once. A script that calls bench_setup
# defines die (its own name and exit status) first.

# bench_setup [TARGET_DIR] [BUILD_DIR]: sets TARGET_DIR (default ./drivelab-target; created),
# BUILD_DIR (default ./build) and DRIVELAB (the build's drivelab binary), exports DRIVELAB and
# TARGET_DIR; dies when drivelab is not built or python3 is missing (the scripts run their
# measurements in python3).
bench_setup() {
  TARGET_DIR=${1:-./drivelab-target}
  BUILD_DIR=${2:-./build}
  DRIVELAB="$BUILD_DIR/apps/drivelab"
  [[ -x "$DRIVELAB" ]] || die "$DRIVELAB not found: build the 'drivelab' target first (cmake --build $BUILD_DIR --target drivelab)"
  command -v python3 >/dev/null || die "python3 not found"
  mkdir -p "$TARGET_DIR"
  export DRIVELAB TARGET_DIR
}

# bench_need_judge: sets and exports JUDGE (BUILD_DIR's bench/judge, built with
# -DDRIVELAB_BUILD_BENCH=ON), the program that turns a script's pair ratios into an interval and a
# PASS / FAIL / UNRESOLVED verdict (docs/confidence.md, "Benchmark verdicts"); dies when it is not
# built. Call it after bench_setup; the scripts' Python reads JUDGE (bench/bench_judge.py).
bench_need_judge() {
  JUDGE="$BUILD_DIR/bench/judge"
  [[ -x "$JUDGE" ]] || die "$JUDGE not found: build the 'judge' target first (cmake -DDRIVELAB_BUILD_BENCH=ON, then cmake --build $BUILD_DIR --target judge)"
  export JUDGE
}

# bench_python ARGS... <<'PY' ... PY: runs the Python program on its standard input (the script's
# here-document) in place of the calling script, with ARGS as sys.argv[1:]; exports REPO (the
# repository), SCRIPT (the calling script, whose header comment bench_options.parse_options prints
# for --help) and PYTHONPATH (bench/, for bench_options, bench_judge and bench_proc).
bench_python() {
  REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  SCRIPT="${BASH_SOURCE[1]}"
  PYTHONPATH="$REPO/bench${PYTHONPATH:+:$PYTHONPATH}"
  export REPO SCRIPT PYTHONPATH
  exec python3 - "$@"
}
