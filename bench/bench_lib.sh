# Sourced by the benchmark scripts written in bash (bench/*.sh): the checks each makes before it
# starts, written once. The script defines die (its own name and exit status) first.

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
