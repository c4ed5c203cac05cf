#!/usr/bin/env bash
# Installs the Debian packages drivelab needs (as root), on Debian 12 (bookworm) and 13 (trixie)
# alike. Does nothing when all are present, so it is cheap to call from every script.
#
#   scripts/install-deps.sh [build|package|test]        (default: build)
#
#   build  what the build and the main job need (README command 1, scripts/quick.sh): the
#          compiler, the libraries and the packaging tools of the `package` target. No server,
#          nothing only the tests use.
#   package  build, and lintian (scripts/package-check.sh).
#   test   build, and what the test suite needs (README command 2, scripts/test.sh): GoogleTest,
#          the database servers the tests start privately (PostgreSQL, MariaDB), sshd and Open
#          MPI's mpirun for the multi-host tests, fio, sysbench, clang's libFuzzer, Chromium, ...
#
# Package names are chosen by what the release has, never typed for one release: the
# `postgresql` metapackage (PostgreSQL 15 on Debian 12, 17 on Debian 13) and the clang runtime
# that matches the release's clang (libclang-rt-14-dev, libclang-rt-19-dev).
#
# No service is left enabled or running: while the packages install, /usr/sbin/policy-rc.d (the
# interface invoke-rc.d and deb-systemd-invoke ask, as Debian's chroot builders use it) keeps
# every service from starting, unless the machine already has a policy of its own; after the
# install, every systemd unit the install enabled (postgresql, mariadb, ssh, prometheus, ...) is
# disabled again, and stopped if it runs, and the script says which. Units that were enabled
# before are left as they were, and so are systemd's own (getty, remote-fs.target, ...) where the
# install brought systemd itself into a root that had no init. The tests start their own private servers
# (scripts/test-services.sh, tests/multihost/netns.sh).
set -euo pipefail

footprint=${1:-build}
[ $# -le 1 ] || { echo "install-deps: one footprint (build, package or test), not '$*'" >&2; exit 2; }
case $footprint in
  build|package|test) ;;
  -h|--help) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-deps: the footprint is build, package or test, not '$footprint'" >&2; exit 2 ;;
esac

# README command 1: build and run drivelab.
build_packages=(
  build-essential cmake ninja-build pkg-config git python3
  libyaml-cpp-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libsqlite3-dev liburing-dev libaio-dev libblkid-dev libzstd-dev
  libpq-dev libmysqlcppconn-dev unixodbc-dev libboost-dev
  prometheus-cpp-dev libopenmpi-dev
  help2man dpkg-dev file
)
# help2man, dpkg-dev (dpkg-shlibdeps) and file (CPack DEB sorts the ELF files with it): the man
# page and the Debian package built from command 1's build (README, packaging/).
# libopenmpi-dev: multi-host runs (docs/multihost.md); prometheus-cpp-dev: --metrics-listen.

# README command 2: everything the tests use besides.
test_packages=(
  libgtest-dev libgmock-dev libbenchmark-dev
  sqlite3 unixodbc postgresql mariadb-server mariadb-client odbc-postgresql odbc-mariadb
  fio sysbench clang dmsetup e2fsprogs
  gnuplot-nox chromium libpng-dev
  openmpi-bin openssh-server openssh-client iproute2
  lintian python3-jsonschema prometheus sysstat
)
# postgresql, mariadb-server: the servers the tests start privately (scripts/test-services.sh,
# managed-server tests); their packages' services are disabled after the install (above).
# openmpi-bin (mpirun), openssh-server/-client, iproute2 (`ip netns`): the multi-host tests (sshd
# in a network namespace with its own config, started and stopped by the test).
# clang (and its runtime, added below): the libFuzzer targets of scripts/fuzz.sh.
# e2fsprogs (mkfs.ext4, fsck.ext4): the block-device safety tests on loop devices.
# gnuplot-nox, chromium, libpng-dev: the reporter's charts and the browser test of the report.
# lintian: scripts/package-check.sh. python3-jsonschema (JSON Schema 2020-12): `drivelab results
# validate` and the check of every record the tests write. prometheus: its promtool checks the
# scraped output in tests/integration/metrics_test.cpp (its server is never started). sysstat: its
# iostat is what tests/unit/telemetry/block_stats_loop_test.cpp compares r_await and aqu-sz with
# (its sysstat.service, data collection for sar, is disabled after the install like the others).

packages=("${build_packages[@]}")
case $footprint in
  package) packages+=(lintian) ;;
  test) packages+=("${test_packages[@]}") ;;
esac

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
lists_updated=0
update_lists() {
  [ "$lists_updated" -eq 1 ] && return 0
  apt-get update -qq
  lists_updated=1
}

as_root_or_say() {  # as_root_or_say PACKAGES...: exit with the apt-get line when not root
  [ "$(id -u)" -eq 0 ] && return 0
  echo "install-deps: missing packages: $*" >&2
  echo "install-deps: run as root (or: sudo apt-get install $*)" >&2
  exit 1
}

# The clang runtime (libFuzzer, sanitizers) of the release's clang: libclang-rt-<major>-dev.
if [ "$footprint" = test ]; then
  clang_major=""
  if command -v clang >/dev/null; then
    clang_major=$(clang -dumpversion | cut -d. -f1)
  else
    as_root_or_say clang
    update_lists
    clang_major=$({ apt-cache depends --no-recommends --no-suggests clang 2>/dev/null || true; } |
      sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | sed -n 1p)
  fi
  [ -n "$clang_major" ] || { echo "install-deps: cannot tell which clang this release has (apt-cache depends clang)" >&2; exit 1; }
  packages+=("libclang-rt-$clang_major-dev")
fi

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
as_root_or_say "${missing[@]}"

# ---- services: none starts during the install, none stays enabled after it ----------------------
enabled_units() {  # the units systemd would start: symlinks in the *.wants/*.requires directories
  { find /etc/systemd/system -mindepth 2 -maxdepth 2 \( -path '*.wants/*' -o -path '*.requires/*' \) \
    -printf '%f\n' 2>/dev/null || true; } | sort -u
}
before=$(enabled_units)
# systemd's own units (getty@tty1, remote-fs.target, ...), where the install brought systemd itself
# (a root without an init: openssh-server depends on it): the machine's init, not a service.
not_systemds() {  # the unit names of stdin that no systemd unit file (template included) ships
  local u t systemd_units
  systemd_units=$({ dpkg-query -L systemd 2>/dev/null || true; } | sed -n 's|.*/systemd/system/\([^/]*\)$|\1|p' | sort -u)
  while read -r u; do
    t=$u
    case $u in *@*.*) t=${u%%@*}@.${u##*.} ;; esac
    grep -qxF "$t" <<<"$systemd_units" || printf '%s\n' "$u"
  done
}
policy=/usr/sbin/policy-rc.d
own_policy=0
# Run on every way out, a failed or interrupted install too: the packages configured before the
# failure may have enabled their units already.
after_install() {
  local unit new_units systemd_runs=0
  [ "$own_policy" -eq 0 ] || rm -f "$policy"
  new_units=$(comm -13 <(printf '%s\n' "$before") <(enabled_units) | sed '/^$/d' | not_systemds)
  [ -n "$new_units" ] || return 0
  [ -d /run/systemd/system ] && systemd_runs=1
  for unit in $new_units; do
    if command -v systemctl >/dev/null; then
      systemctl disable --quiet "$unit" 2>/dev/null || true
      [ "$systemd_runs" -eq 0 ] || systemctl stop "$unit" 2>/dev/null || true
    fi
    # Without systemctl (a root without systemd), or a link systemctl left: remove the links
    # the install made, as `systemctl disable` would. (A root without systemd also gets SysV
    # rc.d links from update-rc.d; they start nothing unless it boots SysV init.)
    find /etc/systemd/system -mindepth 2 -maxdepth 2 \( -path '*.wants/*' -o -path '*.requires/*' \) \
      -name "$unit" -delete 2>/dev/null || true
  done
  echo "install-deps: disabled what the install enabled (the tests start private servers): $(echo $new_units)"
}
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# drivelab install-deps: no service starts while packages install\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  own_policy=1
fi
trap after_install EXIT
trap 'exit 130' INT TERM HUP

echo "install-deps ($footprint): installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
update_lists
apt-get install -y -qq --no-install-recommends "${missing[@]}"
