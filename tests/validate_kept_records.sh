#!/bin/sh
# The cleanup test of the ctest fixture `kept_records` (tests/CMakeLists.txt): validates every
# record and journal the tests kept in KEPT_DIR (DRIVELAB_KEEP_RECORDS_IN), the golden records and
# the golden report CSVs against the record schema, with `drivelab results validate`.
# Usage: validate_kept_records.sh DRIVELAB KEPT_DIR SOURCE_DIR
set -eu
drivelab=$1
kept=$2
src=$3
set --
if [ -d "$kept" ]; then
  for f in "$kept"/*; do
    [ -f "$f" ] && set -- "$@" "$f"
  done
fi
echo "validate_kept_records: $# files kept by the tests in $kept, plus the golden records and report CSVs"
exec "$drivelab" results validate "$@" "$src"/tests/golden/report_run_*.json "$src"/tests/golden/report_*.csv
