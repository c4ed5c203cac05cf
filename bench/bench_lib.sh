# Sourced by the benchmark scripts written in bash (bench/*.sh): the checks each makes before it
# starts, written once. The script defines die (its own name and exit status) and sets BUILD_DIR
# and TARGET_DIR first.

# bench_setup: DRIVELAB (the build's drivelab binary) exported with TARGET_DIR, created; dies when
# drivelab is not built or python3 is missing (the scripts run their measurements in python3).
bench_setup() {
  DRIVELAB="$BUILD_DIR/apps/drivelab"
  [[ -x "$DRIVELAB" ]] || die "$DRIVELAB not found: build the 'drivelab' target first (cmake --build $BUILD_DIR --target drivelab)"
  command -v python3 >/dev/null || die "python3 not found"
  mkdir -p "$TARGET_DIR"
  export DRIVELAB TARGET_DIR
}
