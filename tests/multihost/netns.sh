#!/usr/bin/env bash
# Two "hosts" on one machine for the multi-host tests (issue 16): two network namespaces joined by
# a veth pair, each with its own host name, and an sshd in the second one that mpirun's ssh
# launcher reaches from the first. Needs root and `ip netns` (iproute2), sshd and ssh.
#
#   netns.sh up NAME            create NAME-a and NAME-b; prints the state lines below
#   netns.sh down NAME          remove everything `up` made (idempotent: nothing left is no error)
#   netns.sh exec NAME a|b CMD  run CMD on host a or b (its network, host name; on b also the
#                               mount namespace the sshd sessions see)
#   netns.sh agent NAME         print the ssh wrapper for `mpirun --mca plm_rsh_agent`
#
# The layout (docs/multihost.md, "A second host in a network namespace"):
#   NAME-a: lo, veth0 198.18.0.1/24; host name NAME-a (its own UTS namespace per `exec`)
#   NAME-b: lo, veth0 198.18.0.2/24; host name NAME-b; sshd on 198.18.0.2:22
# The addresses are from 198.18.0.0/15, the range RFC 2544 reserves for benchmark networks
# ("Benchmarking" in RFC 6890's special-purpose address registry). Neither namespace has a default route and nothing is bridged to the machine's own
# network namespace (the veth pair is created inside NAME-a with its peer inside NAME-b), so no
# traffic leaves the two namespaces.
#
# Everything of ssh is in the state directory ${TMPDIR:-/tmp}/drivelab-netns.NAME: sshd's config,
# host key, pid file, log and authorized_keys; the client key, known_hosts, the client config and
# the wrapper `ssh` that runs `ssh -F <that config>` (with -F, ssh reads neither /etc/ssh/ssh_config
# nor creates ~/.ssh). sshd: no PAM, root by key only, StrictModes no. Debian's sshd needs its
# privilege-separation directory /run/sshd: it gets a private tmpfs on /run in a mount namespace
# of its own (only sshd and its sessions see it), so nothing is created on the machine.
#
# State lines printed by `up` (key=value, for `eval` or grep):
#   dir=<state dir>  agent=<ssh wrapper>  host_a=NAME-a  host_b=NAME-b  addr_a=198.18.0.1
#   addr_b=198.18.0.2  subnet=198.18.0.0/24
set -euo pipefail

readonly addr_a=198.18.0.1 addr_b=198.18.0.2 subnet=198.18.0.0/24 prefix=24

usage() {
  echo "usage: netns.sh up|down|agent NAME | netns.sh exec NAME a|b CMD..." >&2
  exit 2
}

[ $# -ge 2 ] || usage
cmd=$1 name=$2
shift 2
case $name in
  *[!A-Za-z0-9_-]* | "" | -*) echo "netns.sh: NAME must be letters, digits, - and _: '$name'" >&2; exit 2 ;;
esac
[ ${#name} -le 48 ] || { echo "netns.sh: NAME longer than 48 characters" >&2; exit 2; }
ns_a=$name-a ns_b=$name-b
dir=${TMPDIR:-/tmp}/drivelab-netns.$name

ns_exists() { ip netns list | awk '{print $1}' | grep -qxF -- "$1"; }

# Every process in namespace $1, ended: SIGTERM, up to 5 s, then SIGKILL (by pid: only the
# processes inside the namespaces this script made).
kill_ns_processes() {
  local ns=$1 pids i
  ns_exists "$ns" || return 0
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for i in $(seq 50); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
  for i in $(seq 50); do
    [ -n "$(ip netns pids "$ns" 2>/dev/null || true)" ] || return 0
    sleep 0.1
  done
  echo "netns.sh: processes left in $ns: $(ip netns pids "$ns" | tr '\n' ' ')" >&2
  return 1
}

down() {
  local rc=0
  kill_ns_processes "$ns_b" || rc=1
  kill_ns_processes "$ns_a" || rc=1
  for ns in "$ns_b" "$ns_a"; do
    if ns_exists "$ns"; then ip netns delete "$ns" || rc=1; fi
  done
  rm -rf -- "$dir"
  return $rc
}

exec_in() {
  local host=$1
  shift
  [ $# -ge 1 ] || usage
  case $host in
    a)
      # shellcheck disable=SC2016  # $0 and $@ are the inner shell's
      exec ip netns exec "$ns_a" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$ns_a" "$@"
      ;;
    b)
      local pid
      pid=$(cat "$dir/sshd.pid" 2>/dev/null) || { echo "netns.sh: $ns_b is not up (no sshd pid)" >&2; exit 1; }
      exec nsenter --target "$pid" --net --uts --mount -- "$@"
      ;;
    *) usage ;;
  esac
}

write_ssh_files() {
  ssh-keygen -q -t ed25519 -N '' -C "drivelab-netns-host-$name" -f "$dir/ssh_host_ed25519_key"
  ssh-keygen -q -t ed25519 -N '' -C "drivelab-netns-client-$name" -f "$dir/client_ed25519"
  cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
  echo "$addr_b $(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")" >"$dir/known_hosts"
  cat >"$dir/sshd_config" <<EOF
# sshd of the second "host" $ns_b (tests/multihost/netns.sh); nothing from /etc/ssh.
ListenAddress $addr_b:22
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PermitUserRC no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowAgentForwarding no
AllowTcpForwarding no
MaxStartups 64:30:128
LogLevel VERBOSE
EOF
  cat >"$dir/ssh_config" <<EOF
# ssh client of $ns_a to $ns_b (tests/multihost/netns.sh); used with -F, so /etc/ssh is not read.
Host *
  User root
  Port 22
  IdentityFile $dir/client_ed25519
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile $dir/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org
  BatchMode yes
  PasswordAuthentication no
  KbdInteractiveAuthentication no
  GSSAPIAuthentication no
  ControlMaster no
  ControlPath none
  ConnectTimeout 5
  LogLevel ERROR
EOF
  cat >"$dir/ssh" <<EOF
#!/bin/sh
# mpirun --mca plm_rsh_agent $dir/ssh: ssh with this pair's own client config.
exec ssh -F "$dir/ssh_config" "\$@"
EOF
  chmod 0755 "$dir/ssh"
}

up() {
  local missing=() t i
  for t in ip sshd ssh ssh-keygen unshare nsenter; do
    command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || missing+=("$t")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "netns.sh: missing: ${missing[*]} (scripts/install-deps.sh installs them)" >&2
    exit 1
  fi
  down 2>/dev/null || true  # what a killed earlier run with this NAME left
  trap 'rc=$?; [ $rc -eq 0 ] || { echo "netns.sh: up $name failed; removing it" >&2; down || true; }' EXIT
  mkdir -m 0700 "$dir"
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  ip -n "$ns_a" link set lo up
  ip -n "$ns_b" link set lo up
  ip -n "$ns_a" link add veth0 type veth peer name veth0 netns "$ns_b"
  ip -n "$ns_a" addr add "$addr_a/$prefix" dev veth0
  ip -n "$ns_b" addr add "$addr_b/$prefix" dev veth0
  ip -n "$ns_a" link set veth0 up
  ip -n "$ns_b" link set veth0 up
  write_ssh_files
  local sshd
  sshd=$(command -v sshd || echo /usr/sbin/sshd)
  # sshd checks its config (-t), then forks into the background once it listens; its pid is in $dir/sshd.pid.
  # shellcheck disable=SC2016  # $0..$3 are the inner shell's
  ip netns exec "$ns_b" unshare --mount --uts -- sh -c '
    mount -t tmpfs -o size=1m,mode=0755 drivelab-netns /run && mkdir -m 0755 /run/sshd &&
    hostname "$0" && "$1" -t -f "$2" && exec "$1" -f "$2" -E "$3"' "$ns_b" "$sshd" "$dir/sshd_config" "$dir/sshd.log"
  for i in $(seq 100); do
    if ip netns exec "$ns_a" "$dir/ssh" "$addr_b" true 2>/dev/null; then
      break
    fi
    [ "$i" -lt 100 ] || { echo "netns.sh: sshd in $ns_b not reachable from $ns_a in 10 s; its log:" >&2; cat "$dir/sshd.log" >&2; exit 1; }
    sleep 0.1
  done
  trap - EXIT
  printf 'dir=%s\nagent=%s\nhost_a=%s\nhost_b=%s\naddr_a=%s\naddr_b=%s\nsubnet=%s\n' \
    "$dir" "$dir/ssh" "$ns_a" "$ns_b" "$addr_a" "$addr_b" "$subnet"
}

case $cmd in
  up) [ $# -eq 0 ] || usage; up ;;
  down) [ $# -eq 0 ] || usage; down ;;
  agent) [ $# -eq 0 ] || usage; echo "$dir/ssh" ;;
  exec) [ $# -ge 2 ] || usage; exec_in "$@" ;;
  *) usage ;;
esac
