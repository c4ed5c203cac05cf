#!/usr/bin/env bash
# The C++ sources in the house style (.clang-format), with ONE pinned clang-format: Debian 12 ships
# clang-format 14 and Debian 13 clang-format 19, which format the same file differently, so the
# style is checked with neither. The pinned one is clang-format 22.1.8, the static Linux binary of
# the npm package clang-format-node@3.0.7 (checked against the tarball's SHA-512 below).
#
#   scripts/format.sh            reformat every tracked .cpp/.hpp/.h in place
#   scripts/format.sh --check    change nothing; list the files that differ and exit 1 if any
#   scripts/format.sh FILE...    reformat these files only (--check FILE... checks them)
#
# The binary is fetched once into build/tools/ (override with DRIVELAB_TOOLS_DIR), by `npm pack`
# when npm is there, else by python3 from the npm registry; nothing is installed system-wide.
# Exit status: 0 formatted (or nothing differs), 1 files differ (--check), 2 bad usage or the tool
# could not be fetched.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly version=22.1.8
readonly package=clang-format-node@3.0.7
readonly tarball_url=https://registry.npmjs.org/clang-format-node/-/clang-format-node-3.0.7.tgz
readonly tarball_sha512=b0a35be54c0a04173311ecdacfe7c21e2a9ba06260505761c2e2839fcf0453e8b4b66e8daaee50fb6a24229c3bf18d365a5e2207c39e1e5dc4b4bdcc03ee598d

check=false
files=()
for arg in "$@"; do
  case $arg in
    --check) check=true ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "format: unknown option '$arg' (see --help)" >&2; exit 2 ;;
    *) files+=("$arg") ;;
  esac
done

[ "$(uname -m)" = x86_64 ] || { echo "format: the pinned clang-format is fetched for x86_64 only, this is $(uname -m)" >&2; exit 2; }
tools=${DRIVELAB_TOOLS_DIR:-build/tools}
tool=$tools/clang-format-$version/clang-format
if [ ! -x "$tool" ]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  echo "format: fetching clang-format $version ($package) into $tools/" >&2
  if command -v npm >/dev/null; then
    (cd "$scratch" && npm pack --silent "$package" >/dev/null) || { echo "format: npm pack $package failed" >&2; exit 2; }
  elif command -v python3 >/dev/null; then
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
      "$tarball_url" "$scratch/clang-format-node-3.0.7.tgz" || { echo "format: cannot download $tarball_url" >&2; exit 2; }
  else
    echo "format: neither npm nor python3 is here to fetch $package" >&2; exit 2
  fi
  echo "$tarball_sha512  $scratch/clang-format-node-3.0.7.tgz" | sha512sum --quiet -c - \
    || { echo "format: $package does not have the pinned SHA-512: refusing it" >&2; exit 2; }
  tar -xzf "$scratch/clang-format-node-3.0.7.tgz" -C "$scratch" package/bin/cfn-linux-x64/clang-format
  mkdir -p "$(dirname "$tool")"
  install -m 755 "$scratch/package/bin/cfn-linux-x64/clang-format" "$tool"
fi
"$tool" --version | grep -q "version $version" || { echo "format: $tool is not clang-format $version" >&2; exit 2; }

[ ${#files[@]} -gt 0 ] || mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
if ! $check; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$tool" -i
  exit 0
fi
differ=()
for f in "${files[@]}"; do
  "$tool" "$f" | cmp -s - "$f" || differ+=("$f")
done
if [ ${#differ[@]} -gt 0 ]; then
  printf 'format: not in the house style (scripts/format.sh FILE fixes it): %s\n' "${differ[@]}" >&2
  exit 1
fi
echo "format: ${#files[@]} files in the house style (clang-format $version)"
