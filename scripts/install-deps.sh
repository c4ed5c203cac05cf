#!/usr/bin/env bash
# Installs the Debian 12 packages drivelab builds and tests with (as root). Does nothing when all
# are present, so it is cheap to call from every script.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git python3
  libyaml-cpp-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libsqlite3-dev sqlite3 liburing-dev libaio-dev libblkid-dev libzstd-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpq-dev libmysqlcppconn-dev unixodbc-dev unixodbc libboost-dev
  postgresql-15 mariadb-server mariadb-client odbc-postgresql odbc-mariadb
  fio sysbench clang libclang-rt-14-dev dmsetup
  gnuplot-nox chromium libpng-dev
  openmpi-bin libopenmpi-dev openssh-server openssh-client iproute2
  help2man dpkg-dev file lintian
  python3-jsonschema
  prometheus-cpp-dev prometheus
)
# help2man, dpkg-dev (dpkg-shlibdeps), file (CPack DEB sorts the ELF files with it) and lintian:
# the Debian package (packaging/, scripts/package-check.sh).
# openmpi-bin, libopenmpi-dev: multi-host runs (issue 16, docs/multihost.md); openssh-server,
# openssh-client and iproute2 (`ip netns`): the two-"host" test in tests/multihost/ (sshd in a
# network namespace with its own config, started and stopped by the test; Debian's openssh-server
# also enables the machine's ssh service on install, which the test does not use).
# python3-jsonschema (4.10, JSON Schema 2020-12): `drivelab results validate` and the test suite's
# check of every record it writes against docs/results.schema.json.
# prometheus-cpp-dev: --metrics-listen (docs/metrics.md); prometheus: its /usr/bin/promtool checks
# the scraped output in tests/integration/metrics_test.cpp (the package also installs the
# Prometheus server and its service, which nothing here starts or uses).

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
