#!/usr/bin/env bash
# Side-by-side: drivelab's `io` emulator against fio 3.x on the SAME file, same job:
# 4 KiB random read, QD 32, O_DIRECT, io_uring, one job.
#
#   bench/io_vs_fio.sh [TARGET_DIR] [BUILD_DIR]      (defaults: ./drivelab-target, ./build)
#   RUNTIME=20 (seconds per measured run) may be set in the environment for a quick check.
#
# What it does:
#   1. creates (once; later runs reuse it) the 2 GiB file TARGET_DIR/drivelab-bench.dat, filled
#      with incompressible data by drivelab itself;
#   2. runs ours then fio back to back, then fio then ours: the second order exposes any bias
#      from caches warmed by the first run (device, host or hypervisor caches; O_DIRECT only
#      bypasses this machine's page cache);
#   3. prints IOPS, mean and p99 latency of each run and the ratios ours/fio.
# Latency: ours is measured from submission to reap (fio's `lat` = slat + clat); fio's mean is
# its lat_ns mean, its p99 the clat_ns p99 (fio reports percentiles of clat by default).
set -euo pipefail

TARGET_DIR=${1:-./drivelab-target}
BUILD_DIR=${2:-./build}
RUNTIME=${RUNTIME:-20}
DRIVELAB="$BUILD_DIR/apps/drivelab"
FILE="$TARGET_DIR/drivelab-bench.dat"

die() { echo "io_vs_fio: $*" >&2; exit 1; }
[[ -x "$DRIVELAB" ]] || die "$DRIVELAB not found: build the 'drivelab' target first (cmake --build $BUILD_DIR --target drivelab)"
command -v fio >/dev/null || die "fio not found (apt-get install fio)"
command -v python3 >/dev/null || die "python3 not found"
mkdir -p "$TARGET_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# ours LABEL WARMUP DURATION: one drivelab run; prints "iops mean_us p99_us build_type".
ours() {
  local out="$WORK/ours-$1"
  if ! "$DRIVELAB" io --target "$TARGET_DIR" --name bench --engine io_uring --rw randread --xfersize 4k \
      --iodepth 32 --file-size 2GiB --direct true --warmup "$2" --duration "$3" --out "$out" --quiet \
      >"$out.log" 2>&1; then
    cat "$out.log" >&2
    die "drivelab run '$1' failed"
  fi
  python3 - "$out/latest.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["tests"][0]
if t["status"] != "complete":
    sys.exit(f"drivelab test status {t['status']}: {t.get('reason', '')}")
m = t["metrics"]
print(m["iops"]["value"], m["latency_avg_us"]["value"], m["latency_p99_us"]["value"],
      r.get("tool", {}).get("build_type", "?"))
PY
}

# theirs LABEL: one fio run with the reference command line; prints "iops mean_us p99_us".
theirs() {
  local out="$WORK/fio-$1.json"
  fio --name=randread --filename="$FILE" --ioengine=io_uring --direct=1 --rw=randread --bs=4k \
      --iodepth=32 --runtime="$RUNTIME" --time_based --output-format=json >"$out" 2>"$out.err" ||
    { cat "$out.err" >&2; die "fio run '$1' failed"; }
  python3 - "$out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print(j["iops"], j["lat_ns"]["mean"] / 1e3, j["clat_ns"]["percentile"]["99.000000"] / 1e3)
PY
}

echo "== preparing $FILE (2 GiB; filled once, then reused)"
res=$(ours prepare 0s 1s)
read -r _ _ _ build_type <<<"$res"
if [[ "$build_type" == "Debug" ]]; then
  echo "warning: $DRIVELAB is a Debug build; configure with -DCMAKE_BUILD_TYPE=Release for representative numbers"
fi
[[ -f "$FILE" ]] || die "drivelab did not leave $FILE"

echo "== order A: drivelab, then fio (${RUNTIME}s each)"
res=$(ours A 2s "${RUNTIME}s")
read -r a_ours_iops a_ours_mean a_ours_p99 _ <<<"$res"
res=$(theirs A)
read -r a_fio_iops a_fio_mean a_fio_p99 <<<"$res"
echo "== order B: fio, then drivelab"
res=$(theirs B)
read -r b_fio_iops b_fio_mean b_fio_p99 <<<"$res"
res=$(ours B 2s "${RUNTIME}s")
read -r b_ours_iops b_ours_mean b_ours_p99 _ <<<"$res"

python3 - "$a_ours_iops" "$a_ours_mean" "$a_ours_p99" "$a_fio_iops" "$a_fio_mean" "$a_fio_p99" \
  "$b_fio_iops" "$b_fio_mean" "$b_fio_p99" "$b_ours_iops" "$b_ours_mean" "$b_ours_p99" <<'PY'
import sys
v = [float(x) for x in sys.argv[1:]]
rows = [("A1 drivelab", v[0:3]), ("A2 fio", v[3:6]), ("B1 fio", v[6:9]), ("B2 drivelab", v[9:12])]
print()
print(f"{'run':<14}{'IOPS':>12}{'mean us':>10}{'p99 us':>10}")
for name, (iops, mean, p99) in rows:
    print(f"{name:<14}{iops:>12,.0f}{mean:>10.1f}{p99:>10.1f}")
print()
print(f"{'ours/fio':<14}{'IOPS':>12}{'mean':>10}{'p99':>10}")
for name, o, f in (("order A", v[0:3], v[3:6]), ("order B", v[9:12], v[6:9])):
    print(f"{name:<14}{o[0] / f[0]:>12.3f}{o[1] / f[1]:>10.3f}{o[2] / f[2]:>10.3f}")
ours_iops = (v[0] + v[9]) / 2
fio_iops = (v[3] + v[6]) / 2
print(f"{'both orders':<14}{ours_iops / fio_iops:>12.3f}{((v[1] + v[10]) / 2) / ((v[4] + v[7]) / 2):>10.3f}"
      f"{((v[2] + v[11]) / 2) / ((v[5] + v[8]) / 2):>10.3f}")
PY
