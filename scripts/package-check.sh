#!/usr/bin/env bash
# The Debian package, built and checked on this machine (as root; CI runs it in fresh-check's
# fresh root after ./scripts/quick.sh):
#
#   ./scripts/package-check.sh        (build directory: build/, the Release build quick.sh makes)
#
#   1. builds the package from that build (cmake --build build --target package: the man page,
#      the bash completion and the changelog are generated from the binary, CPack packs them);
#   2. lintian --fail-on error on it (its whole output is printed);
#   3. installs it with `apt-get install ./drivelab_<version>_<arch>.deb`, which also fetches what
#      its Depends name;
#   4. checks the installed package: `drivelab --version` prints the package's version, the
#      shipped protocols are all in /usr/share/drivelab/config, `drivelab validate` accepts
#      quick.yaml there, a short `drivelab io` run completes with a record, the man page is there,
#      and the installed bash completion offers, for every command path, exactly the subcommands
#      and options its `--help` lists (scripts/check-completion.sh);
#   5. purges it (also when a step failed or on Ctrl-C) and checks that nothing of it is left.
#
# It refuses to start when a drivelab package is installed already (it would remove it).
# Exit status: 0 all passed, 1 a check failed, 2 cannot start (not root, no Release build,
# drivelab installed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
say() { printf 'package-check: %s\n' "$*"; }
die() { printf 'package-check: %s\n' "$1" >&2; exit "${2:-1}"; }  # die MESSAGE [STATUS]

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get install and purge)" 2
grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt" 2>/dev/null ||
  die "no Release build in build/: run ./scripts/quick.sh first (it makes one)" 2
if dpkg-query -W -f='${Status}' drivelab 2>/dev/null | grep -q 'ok installed'; then
  die "a drivelab package is installed already; this check installs and purges its own (apt-get purge drivelab first)" 2
fi
"$here/scripts/install-deps.sh" package
export DEBIAN_FRONTEND=noninteractive

# ---- 1. build ----------------------------------------------------------------------------------
t0=$(date +%s)
cmake -S "$here" -B "$build" >/dev/null  # picks up help2man if it was installed after quick.sh
rm -f "$build"/drivelab_*.deb
cmake --build "$build" --target package -j "$(nproc)" >"$build/package.log" 2>&1 ||
  { tail -30 "$build/package.log" >&2; die "cmake --build build --target package failed (build/package.log)"; }
debs=("$build"/drivelab_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || die "expected one build/drivelab_*.deb, found: ${debs[*]}"
deb=${debs[0]}
version=$(dpkg-deb -f "$deb" Version)
say "built $(basename "$deb") ($(du -h "$deb" | cut -f1)) in $(($(date +%s) - t0)) s"
say "Depends: $(dpkg-deb -f "$deb" Depends)"
say "Recommends: $(dpkg-deb -f "$deb" Recommends); Suggests: $(dpkg-deb -f "$deb" Suggests)"

# ---- 2. lintian --------------------------------------------------------------------------------
lintian_rc=0
lintian_out=$(lintian --fail-on error "$deb" 2>&1) || lintian_rc=$?
say "lintian: exit $lintian_rc, $(grep -c '^E: ' <<<"$lintian_out" || true) errors, $(grep -c '^W: ' <<<"$lintian_out" || true) warnings"
[ -z "$lintian_out" ] || sed 's/^/  | /' <<<"$lintian_out"
[ "$lintian_rc" -eq 0 ] || die "lintian --fail-on error: exit $lintian_rc"

# ---- 3. install; 5. purge on every way out -----------------------------------------------------------
# What the package adds to this machine: its paths (files and folders) that do not exist yet. After
# the purge none of them may be left.
mapfile -t adds < <(dpkg-deb -c "$deb" | awk '{print substr($6, 2)}' | sed 's|/$||' | grep . |
  while read -r p; do [ -e "$p" ] || echo "$p"; done)
grep -qx /usr/bin/drivelab < <(printf '%s\n' "${adds[@]}") || die "the package has no /usr/bin/drivelab, or it exists already"
failed=0
fail() { say "FAILED: $*"; failed=1; }
purge() {
  local rc=$? p
  set +e
  apt-get purge -y -qq drivelab >"$build/package-purge.log" 2>&1 || { cat "$build/package-purge.log"; rc=1; }
  local left=()
  dpkg-query -W -f='${Status}' drivelab 2>/dev/null | grep -q 'installed' && left+=("the dpkg entry")
  for p in "${adds[@]}"; do
    [ ! -e "$p" ] || left+=("$p")
  done
  if [ ${#left[@]} -eq 0 ]; then
    say "purged: none of the ${#adds[@]} paths it added is left, /usr/bin/drivelab included"
  else
    say "FAILED: after the purge these are left: ${left[*]}"
    rc=1
  fi
  [ -z "${scratch:-}" ] || rm -rf "$scratch"
  exit "$rc"
}
trap purge EXIT
trap 'exit 130' INT TERM
(cd "$build" && apt-get install -y -qq "./$(basename "$deb")") >"$build/package-install.log" 2>&1 ||
  { tail -20 "$build/package-install.log" >&2; die "apt-get install ./$(basename "$deb") failed"; }
say "installed with apt-get install ./$(basename "$deb"): $(dpkg-query -L drivelab | wc -l) paths"

# ---- 4. the installed package ------------------------------------------------------------------
bin=/usr/bin/drivelab
[ "$(command -v drivelab)" = "$bin" ] || fail "drivelab on PATH is '$(command -v drivelab)', not $bin"
[ "$("$bin" --version)" = "drivelab $version" ] ||
  fail "drivelab --version prints '$("$bin" --version)', the package is version $version"

shipped=$(cd "$here/config" && find . -path ./include -prune -o -path ./src -prune -o -type f ! -name CMakeLists.txt -print | sort)
installed=$(cd /usr/share/drivelab/config && find . -type f | sort)
[ "$shipped" = "$installed" ] ||
  fail "/usr/share/drivelab/config differs from config/: $(diff <(echo "$shipped") <(echo "$installed") | grep '^[<>]' | tr '\n' ' ')"
if "$bin" validate /usr/share/drivelab/config/quick.yaml >"$build/package-validate.log" 2>&1; then
  say "$("$bin" --version); $(wc -l <<<"$installed") protocols in /usr/share/drivelab/config; validate quick.yaml there: ok"
else
  fail "drivelab validate /usr/share/drivelab/config/quick.yaml: $(cat "$build/package-validate.log")"
fi

scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/drivelab-package-check.XXXXXX")
if "$bin" io --target "$scratch" --out "$scratch/results" --rw randread --bs 4k --size 16MiB --duration 2s \
  --quiet >"$build/package-io.log" 2>&1 && grep -q '"status": *"complete"' "$scratch/results/latest.json"; then
  say "drivelab io: a 2 s 4k random-read run completed: $(grep -m1 -E ' IOPS' "$build/package-io.log" | tr -s ' ' || true)"
else
  fail "drivelab io (2 s, 16 MiB) did not complete with a record; its output:"
  sed 's/^/  | /' "$build/package-io.log"
fi

zcat /usr/share/man/man1/drivelab.1.gz | grep -q "^\.TH DRIVELAB \"1\"" || fail "no man page drivelab(1)"

if "$here/scripts/check-completion.sh" "$bin" /usr/share/bash-completion/completions/drivelab >"$build/package-completion.log" 2>&1; then
  say "bash completion: $(sed 's/^check-completion: //' "$build/package-completion.log")"
else
  fail "the installed bash completion does not match --help:"
  sed 's/^/  | /' "$build/package-completion.log"
fi

[ "$failed" -eq 0 ] || exit 1
say "passed: $(basename "$deb") builds, passes lintian, installs, works and purges"
