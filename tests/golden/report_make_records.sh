#!/usr/bin/env bash
# Regenerates the real records tests/golden/report_run_{disk,loop}_{1,2}.json that the reporter's
# golden and browser tests read: tests/golden/report_protocol.yaml run twice on each of two targets,
#   disk: a directory on the filesystem of the checkout (O_DIRECT files on that disk);
#   loop: a directory on ext4 on a loop device whose backing file is on tmpfs (/dev/shm).
# Needs root (losetup, mount). Paths of this machine are scrubbed from the records (replaced by
# <disk-dir>, <loop-dir>, <out-dir>; argv[0] becomes "drivelab") so that no machine path enters
# the repository, and the latency histograms are dropped (the reporter does not read them; with
# their bins the four files are 6.7 MB instead of 200 kB). Everything else is as the run wrote it.
# Usage: tests/golden/report_make_records.sh DRIVELAB_EXE   (e.g. build-dbg/apps/drivelab)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
exe=$(readlink -f "$1")
work=$(mktemp -d "$repo/build-report-golden.XXXXXX")  # on the checkout's disk
shm=$(mktemp -d /dev/shm/drivelab-report-golden.XXXXXX)
loopdev=""
cleanup() {
  umount "$work/loop" 2>/dev/null || true
  [ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null || true
  rm -rf "$shm" "$work"
}
trap cleanup EXIT
mkdir -p "$work/disk" "$work/loop" "$work/out"
truncate -s 1G "$shm/backing.img"
loopdev=$(losetup -f --show "$shm/backing.img")
mkfs.ext4 -q "$loopdev"
mount "$loopdev" "$work/loop"
for target in disk loop; do
  for rep in 1 2; do
    rm -rf "$work/out/run"
    nice -n 19 ionice -c3 "$exe" run "$repo/tests/golden/report_protocol.yaml" --target "$work/$target" \
      --out "$work/out/run" --quiet
    rec=$(readlink -f "$work/out/run/latest.json")
    sed -e "s#$work/disk#<disk-dir>#g" -e "s#$work/loop#<loop-dir>#g" -e "s#$work/out/run#<out-dir>#g" \
        -e "s#$repo/##g" -e "s#$shm#<shm-dir>#g" "$rec" |
      python3 -c 'import json,sys
d = json.load(sys.stdin)
d["command_line"][0] = "drivelab"
for t in d["tests"]:
    t["histograms"] = {}
print(json.dumps(d, indent=1, ensure_ascii=False, allow_nan=False))' > "$repo/tests/golden/report_run_${target}_${rep}.json"
  done
done
if grep -l -E '"/(work|tmp|root|home)/' "$repo"/tests/golden/report_run_*.json; then
  echo "a machine path is left in the records above" >&2
  exit 1
fi
echo "records written: tests/golden/report_run_{disk,loop}_{1,2}.json"
