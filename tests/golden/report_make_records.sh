#!/usr/bin/env bash
# Regenerates the real records tests/golden/report_run_{disk,loop}_{1,2}.json that the reporter's
# golden and browser tests read: tests/golden/report_protocol.yaml run twice on each of two targets,
#   disk: a directory on the filesystem of the checkout (O_DIRECT files on that disk);
#   loop: a directory on ext4 on a loop device whose backing file is on tmpfs (/dev/shm).
# Needs root (losetup, mount). Paths of this machine are scrubbed from the records (replaced by
# <disk-dir>, <loop-dir>, <out-dir>) so that no machine path enters the repository.
# Usage: tests/golden/report_make_records.sh BUILD_DIR   (e.g. build-dbg; uses BUILD_DIR/apps/drivelab)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
exe=$(cd "$1" && pwd)/apps/drivelab
work=$(mktemp -d "$repo/$1/report-golden.XXXXXX")
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
        -e "s#$repo/##g" -e "s#$shm#<shm-dir>#g" "$rec" > "$repo/tests/golden/report_run_${target}_${rep}.json"
  done
done
if grep -l -E '"/(work|tmp|root|home)/' "$repo"/tests/golden/report_run_*.json; then
  echo "a machine path is left in the records above" >&2
  exit 1
fi
echo "records written: tests/golden/report_run_{disk,loop}_{1,2}.json"
