#!/usr/bin/env bash
# Both README commands, and the Debian package's check, on a fresh Debian root, so that "passes
# here" also means "passes on a new machine": nothing installed, configured or left behind by hand
# on this machine can hide a missing install step or a test that needs it.
#
#   scripts/fresh-check.sh [--release bookworm|trixie] [--only quick|package|test | --run 'COMMAND'] [--logs DIR] [--scratch PARENT] [--keep]
#
#   --release names the Debian release of the root (Debian 12 bookworm or 13 trixie; default:
#   this machine's), from the same archive apt uses here.
#   --only quick or test runs that one; --only package runs quick.sh and then the package check
#   (which packs quick.sh's build); --run runs COMMAND instead of them (in /src/drivelab of the root).
#
# As root, it
#   1. builds a minimal root of the release (default: this machine's, /etc/os-release) with
#      debootstrap, from the same archive apt uses here (`apt-get indextargets`: the mirror of
#      this machine's release, and the updates and security suites of the same origin, as a fresh
#      install has them; for another release the same sites with that release's suites);
#   2. copies a clean clone of HEAD (committed work only) to /src/drivelab in it and ../shared, read
#      only as CI has it, to /src/shared;
#   3. runs, inside it (chroot with /proc, /sys, /dev — loop devices, cgroups — and a /run of its
#      own), the README's two commands in the README's order, with the package check after the
#      first, as it packs the first one's Release build in build/:
#        ./scripts/quick.sh /src/target     (installs the packages, builds, runs config/quick.yaml)
#        ./scripts/package-check.sh          (builds the .deb, lintian, apt-get install, checks, purge)
#        ./scripts/test.sh                   (installs, builds with sanitizers, ctest, fuzz)
#      with an empty environment (HOME, PATH, LANG, CI only) and no standard input;
#   4. prints each command's result, time and counts, and the log's tail when one fails;
#   5. after each command, prints the systemd units the root has enabled (the *.wants/ and
#      *.requires/ links of /etc/systemd/system) that it did not have before the command, and
#      fails the command if there is one: the README's commands leave no service enabled
#      (scripts/install-deps.sh). Running services cannot be seen in a chroot; enabled ones can.
#
# Nothing outside the scratch folder (default: a new folder under ${TMPDIR:-/var/tmp}) is
# changed: debootstrap is unpacked there when this machine does not have it (`apt-get download`),
# every mount is undone and the folder removed at the end, also on Ctrl-C or failure (--keep
# leaves the root for a look; remove it with `umount -R` on its mounts first). Services the
# packages would start on install are not started in the root (policy-rc.d, as Debian's chroot
# builders do); the tests start their own (scripts/test-services.sh).
#
# Exit status: 0 all passed, 1 a command failed, 2 bad usage, 3 the root could not be built.
# Time on 2 cores: about 3 min for the root, then the two commands (README: 10-15 min build each);
# the package check adds about a minute (no compiling: quick.sh's build has everything it packs).
set -euo pipefail

# Run from a copy: bash reads a script as it goes, so editing this file during a run (an hour)
# would change the commands under it. The copy removes itself at the end.
if [ -z "${DRIVELAB_FRESH_CHECK_COPY:-}" ]; then
  copy=$(mktemp "${TMPDIR:-/tmp}/fresh-check.XXXXXX.sh")
  cp "$0" "$copy"
  DRIVELAB_FRESH_CHECK_COPY=$copy DRIVELAB_FRESH_CHECK_HERE=$(cd "$(dirname "$0")/.." && pwd) exec bash "$copy" "$@"
fi
rm -f "$DRIVELAB_FRESH_CHECK_COPY"

usage() {  # usage [WHAT WAS WRONG]
  [ $# -eq 0 ] || printf 'fresh-check: %s\n' "$1" >&2
  printf 'usage: %s\n' "$(sed -n '6p' "$here/scripts/fresh-check.sh" | sed 's/^#  *//')" >&2
  exit 2
}
value_of() {  # value_of OPTION VALUE: VALUE, or a usage error when it is missing or another option
  [ -n "$2" ] && [ "${2#-}" = "$2" ] || usage "$1 needs a value"
  printf '%s' "$2"
}

here=$DRIVELAB_FRESH_CHECK_HERE
release=""
only=""
run_cmd=""
logs=""
scratch_parent=${TMPDIR:-/var/tmp}
keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --release) release=$(value_of "$1" "${2:-}") || exit 2
               case $release in bookworm|trixie) ;; *) usage "--release takes bookworm or trixie, not '$release'" ;; esac
               shift 2 ;;
    --only) only=$(value_of "$1" "${2:-}") || exit 2
            case $only in quick|package|test) ;; *) usage "--only takes quick, package or test, not '$only'" ;; esac
            shift 2 ;;
    --run) run_cmd=$(value_of "$1" "${2:-}") || exit 2; shift 2 ;;
    --logs) logs=$(value_of "$1" "${2:-}") || exit 2; shift 2 ;;
    --scratch) scratch_parent=$(value_of "$1" "${2:-}") || exit 2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,43p' "$here/scripts/fresh-check.sh" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
[ -z "$only" ] || [ -z "$run_cmd" ] || usage "--only and --run are alternatives"
say() { printf 'fresh-check: %s\n' "$*"; }
die() { printf 'fresh-check: %s\n' "$1" >&2; exit "${2:-3}"; }  # die MESSAGE [STATUS]
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot, mounts)" 2
git -C "$here" rev-parse --verify -q HEAD >/dev/null || die "$here is not a git checkout with a commit" 2
[ -z "$logs" ] || mkdir -p "$logs"

# ---- scratch: everything lives below it ------------------------------------------------------------
scratch=$(mktemp -d "$scratch_parent/drivelab-fresh.XXXXXX")
root=$scratch/root
mounted=()
cleanup() {
  local rc=$?
  set +e
  if [ -d "$root" ]; then
    # Processes left in the root (a server a test did not stop) would hold its mounts.
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null
    done
    sleep 0.5
  fi
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[$i]}" 2>/dev/null || umount -R -l "${mounted[$i]}" 2>/dev/null
  done
  if [ "$keep" -eq 1 ]; then
    say "kept $scratch (its mounts are undone)"
  elif findmnt -rn -o TARGET | grep -q "^$scratch"; then
    say "NOT removing $scratch: something is still mounted below it" >&2
  else
    rm -rf --one-file-system "$scratch"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the archive apt uses here -------------------------------------------------------------------
. /etc/os-release
here_codename=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
codename=${release:-$here_codename}
arch=$(dpkg --print-architecture)
apt_opts=()
# One line per index target: site suite component origin. The release's own suite names the mirror.
index_targets() {
  apt-get "${apt_opts[@]}" indextargets --format '$(SITE) $(RELEASE) $(COMPONENT) $(ORIGIN)' \
    'Created-By: Packages' "Architecture: $arch" 2>/dev/null | sort -u
}
targets=$(index_targets)
if [ -z "$targets" ]; then
  # A new machine has no package lists yet: fetch them into the scratch folder, not /var/lib/apt.
  mkdir -p "$scratch/apt-lists/partial"
  apt_opts=(-o "Dir::State::Lists=$scratch/apt-lists")
  apt-get "${apt_opts[@]}" update -qq >"$scratch/apt-update.log" 2>&1 || { tail -5 "$scratch/apt-update.log" >&2; die "apt-get update (into the scratch folder) failed"; }
  targets=$(index_targets)
fi
mirror=$(awk -v s="$here_codename" '$2 == s && $4 == "Debian" {print $1; exit}' <<<"$targets")
[ -n "$mirror" ] || die "apt here has no Debian index for '$here_codename' in its sources"
# This machine's suites (bookworm, bookworm-updates, bookworm-security), renamed for the release.
sources=$(awk -v from="$here_codename" -v to="$codename" \
  '$4 == "Debian" && index($2, from) == 1 {print "deb " $1 " " to substr($2, length(from) + 1) " " $3}' <<<"$targets" | sort -u)

debootstrap_cmd=(debootstrap)
if ! command -v debootstrap >/dev/null; then
  # Unpacked into the scratch folder, not installed: this machine stays as it is.
  (cd "$scratch" && apt-get "${apt_opts[@]}" -o "Dir::Cache=$scratch/apt-cache" download -qq debootstrap >"$scratch/apt-download.log" 2>&1) ||
    die "apt-get download debootstrap failed"
  dpkg-deb -x "$scratch"/debootstrap_*.deb "$scratch/debootstrap"
  debootstrap_cmd=(env "DEBOOTSTRAP_DIR=$scratch/debootstrap/usr/share/debootstrap"
    "$scratch/debootstrap/usr/sbin/debootstrap")
fi

elapsed() { local s=$(($(date +%s) - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

t0=$(date +%s)
say "building a fresh $codename root ($arch, minbase) from $mirror in $root"
if ! "${debootstrap_cmd[@]}" --variant=minbase --arch="$arch" "$codename" "$root" "$mirror" \
  >"$scratch/debootstrap.log" 2>&1; then
  tail -20 "$scratch/debootstrap.log" >&2
  [ -z "$logs" ] || cp "$scratch/debootstrap.log" "$logs/"
  die "debootstrap failed"
fi
printf '%s\n' "$sources" >"$root/etc/apt/sources.list"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
proxy=$(apt-config dump | grep -i '^Acquire::https\?::Proxy' || true)
[ -z "$proxy" ] || apt-config dump | grep -i '^Acquire::https\?::Proxy' | sed 's/$/;/' >"$root/etc/apt/apt.conf.d/01proxy"
say "root ready in $(elapsed "$t0")"

mount_in() {  # mount_in TARGET MOUNT-ARGS...: mount below the root and remember it
  local target=$root/$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
}
# The root is a mount point of its own, as / is on a real machine (and in systemd-nspawn): a
# chroot into a plain directory has no mount for /, so /proc/self/mountinfo in it names no
# filesystem for the target directory.
mount --bind "$root" "$root"
mounted+=("$root")
mount_in proc -t proc proc
mount_in sys --rbind /sys
mount --make-rslave "$root/sys"
mount_in dev --rbind /dev
mount --make-rslave "$root/dev"
mount_in run -t tmpfs -o mode=755 tmpfs

# ---- the checkout, as a new user would get it (in the root: /src/drivelab, ../shared beside it) --------
mkdir -p "$root/src"
git clone -q --no-hardlinks "$here" "$root/src/drivelab"
head=$(git -C "$root/src/drivelab" rev-parse --short HEAD)
if [ -d "$here/../shared" ]; then
  cp -a "$here/../shared" "$root/src/shared"
  chmod -R a-w "$root/src/shared"
else
  say "warning: no ../shared beside the checkout; the tests that need it will skip"
fi
say "clean clone of HEAD ($head) in /src/drivelab"

enabled_units() {  # the units the root's systemd would start: links in its *.wants/ and *.requires/,
  # but systemd's own (getty@tty1, remote-fs.target: the init a package brought into the root)
  local own
  own=$({ chroot "$root" dpkg-query -L systemd 2>/dev/null || true; } | sed -n 's|.*/systemd/system/\([^/]*\)$|\1|p')
  find "$root/etc/systemd/system" -mindepth 2 -maxdepth 2 \( -path '*.wants/*' -o -path '*.requires/*' \) \
    -printf '%h %f\n' 2>/dev/null | sed "s|^$root/etc/systemd/system/||" | sort |
    while read -r dir unit; do
      t=$unit
      case $unit in *@*.*) t=${unit%%@*}@.${unit##*.} ;; esac
      grep -qxF "$t" <<<"$own" || printf '%s %s\n' "$dir" "$unit"
    done
}

in_root() {  # in_root LOG COMMAND: run COMMAND in the root with an empty environment
  local log=$1
  shift
  env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    TERM=dumb ${CI:+CI=$CI} chroot "$root" /bin/bash -c "cd /src/drivelab && $*" </dev/null >"$log" 2>&1
}

passed=0
failed=0
run_step() {  # run_step NAME COMMAND
  local name=$1 cmd=$2 log=$scratch/$1.log t rc=0 before added
  t=$(date +%s)
  say "running $cmd"
  before=$(enabled_units)
  in_root "$log" "$cmd" || rc=$?
  added=$(comm -13 <(printf '%s\n' "$before") <(enabled_units) | sed '/^$/d')
  if [ -n "$added" ]; then
    say "$cmd left services enabled in the root (it must leave none):"
    sed 's/^/  | /' <<<"$added"
    [ "$rc" -ne 0 ] || rc=1
  else
    say "$cmd: services check: none enabled by it; enabled in the root: $(enabled_units | awk '{print $2}' | tr '\n' ' ')"
  fi
  local took
  took=$(elapsed "$t")
  [ -z "$logs" ] || cp "$log" "$logs/$name.log"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    say "$cmd: passed in $took"
  else
    failed=$((failed + 1))
    say "$cmd: FAILED (exit $rc) after $took; the log's last lines:"
    tail -40 "$log" | sed 's/^/  | /'
  fi
  # The counts a reader wants: the quick run's summary, the package check's lines (with lintian's
  # output), ctest's and the fuzzers' closing lines.
  case $name in
    quick) [ "$rc" -ne 0 ] || tail -14 "$log" | sed 's/^/  | /' ;;  # drivelab's summary table
    package) [ "$rc" -ne 0 ] || grep -E '^(package-check: |  \| )' "$log" | sed 's/^/  | /' ;;
    command) [ "$rc" -ne 0 ] || tail -100 "$log" | sed 's/^/  | /' ;;
    test) grep -E 'tests passed|tests failed out of|Total Test time|^fuzz: ' "$log" | sed 's/^/  | /' || true ;;
  esac
}
if [ -n "$run_cmd" ]; then
  run_step command "$run_cmd"
else
  [ "$only" = test ] || run_step quick "./scripts/quick.sh /src/target"
  [ -n "$only" ] && [ "$only" != package ] || run_step package "./scripts/package-check.sh"
  [ -n "$only" ] && [ "$only" != test ] || run_step test "./scripts/test.sh"
fi
say "total $(elapsed "$t0") for HEAD $head"
echo "fresh-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
