#!/usr/bin/env bash
# The size limits of the house (docs/contributing.md): a function of more than 120 lines, or a
# source file (not a test) of more than 700 lines, is too long to read in one sitting. This script
# lists every one; it changes nothing.
#
#   scripts/limits.sh              both lists
#   scripts/limits.sh --files      the files only (seconds: no clang-tidy)
#   scripts/limits.sh FILE.cpp...  the files, and the functions of these translation units only
#
# Files: the tracked .cpp/.hpp/.h outside tests/, counted with wc -l. Functions: clang-tidy's
# readability-function-size with LineThreshold 120 (the lines of the body, comments and blank
# lines included), run by scripts/tidy.sh (its pinned clang-tidy 19, its compile database) over
# every translation unit (a few minutes); a function defined in a header is listed once.
# Exit status: 0 nothing over a limit, 1 something is (it is listed), 2 the tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly max_function_lines=120 max_file_lines=700
files_only=false
[ "${1:-}" != --files ] || { files_only=true; shift; }
case ${1:-} in
  -h|--help) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
units=("$@")  # scripts/tidy.sh refuses what is not a translation unit of the database
# Every translation unit by default, those of scripts/tidy-pending.txt too (tidy.sh without
# arguments leaves them out).
[ ${#units[@]} -gt 0 ] || mapfile -t units < <(git ls-files '*.cpp')

over=0
echo "limits: source files over $max_file_lines lines (tests excluded):"
while read -r n f; do
  [ "$f" != total ] || continue
  if [ "$n" -gt "$max_file_lines" ]; then
    printf '  %5d  %s\n' "$n" "$f"
    over=1
  fi
done < <(git ls-files '*.cpp' '*.hpp' '*.h' | grep -v '^tests/' | xargs wc -l | sort -rn)
$files_only && exit $over

config="{Checks: '-*,readability-function-size', WarningsAsErrors: '',
  HeaderFilterRegex: '$(sed -n "s/^HeaderFilterRegex: '\(.*\)'$/\1/p" .clang-tidy)',
  CheckOptions: [{key: readability-function-size.LineThreshold, value: $max_function_lines}]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
DRIVELAB_TIDY_CONFIG=$config ./scripts/tidy.sh "${units[@]}" >"$log" 2>&1 || rc=$?
[ "$rc" -ne 2 ] || { cat "$log" >&2; exit 2; }
echo "limits: functions over $max_function_lines lines:"
# "FILE:L:C: warning: function 'NAME' exceeds recommended size/complexity thresholds", then
# "note: N lines including whitespace and comments (threshold 120)".
python3 - "$log" "$(pwd)/" <<'PY' || over=1
import re, sys
text = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1], errors="replace").read())  # run-clang-tidy's colours
log, here = text.splitlines(), sys.argv[2]
seen, rows = set(), []
for i, line in enumerate(log):
    m = re.match(r"(\S+?):(\d+):\d+: warning: function '(.+?)' exceeds recommended size", line)
    if not m or (m.group(1), m.group(2)) in seen:
        continue
    seen.add((m.group(1), m.group(2)))
    n = next((re.search(r"(\d+) lines including", l).group(1) for l in log[i + 1:i + 6] if "lines including" in l), "?")
    rows.append((int(n) if n != "?" else 0, m.group(1).replace(here, ""), m.group(2), m.group(3)))
for n, f, l, name in sorted(rows, reverse=True):
    print(f"  {n:5d}  {f}:{l}  {name}")
sys.exit(1 if rows else 0)
PY
exit $over
