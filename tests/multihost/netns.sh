#!/usr/bin/env bash
# N "hosts" on one machine for the multi-host tests (issues 16, 34): N network namespaces (default
# 2, at most 8) on one Ethernet segment, each with its own host name, and an sshd on every host but
# the first, which mpirun's ssh launcher reaches from the first. Needs root and `ip netns`
# (iproute2), sshd and ssh.
#
#   netns.sh up NAME [N]        create NAME-a, NAME-b, ... (N hosts); prints the state lines below
#   netns.sh down NAME          remove everything `up` made (idempotent: nothing left is no error)
#   netns.sh exec NAME X CMD    run CMD on host X (a, b, ...: its network, host name; on b, c, ...
#                               also the mount namespace the sshd sessions see)
#   netns.sh agent NAME         print the ssh wrapper for `mpirun --mca plm_rsh_agent`
#   netns.sh link NAME X down|up  cut host X off the segment, or put it back (a lost network: the
#                               host and its processes keep running, nothing reaches them)
#
# The layout (docs/multihost.md, "A second host in a network namespace"):
#   NAME-a: lo, veth0 198.18.0.1/24; host name NAME-a (its own UTS namespace per `exec`)
#   NAME-b: lo, veth0 198.18.0.2/24; host name NAME-b; sshd on 198.18.0.2:22; NAME-c .3, ...
#   NAME-sw: the switch, a bridge br0 with one veth port per host (port-X is the peer of X's veth0)
# The addresses are from 198.18.0.0/15, the range RFC 2544 reserves for benchmark networks
# ("Benchmarking" in RFC 6890's special-purpose address registry). No namespace has a default
# route and nothing is bridged to the machine's own network namespace (every veth pair is created
# inside the switch namespace with its peer inside a host's), so no traffic leaves them.
#
# Everything of ssh is in the state directory ${TMPDIR:-/tmp}/drivelab-netns.NAME: each sshd's
# config, pid file and log (sshd-X.config, sshd-X.pid, sshd-X.log), the host key and
# authorized_keys they share; the client key, known_hosts, the client config and the wrapper `ssh`
# that runs `ssh -F <that config>` (with -F, ssh reads neither /etc/ssh/ssh_config nor creates
# ~/.ssh). sshd: no PAM, root by key only, StrictModes no. Client and servers send keepalives
# (ServerAliveInterval/ClientAliveInterval 5, CountMax 3): an ssh session across a lost network
# ends after about 15 s on both sides instead of waiting for TCP's own timeout (docs/multihost.md,
# "Cleaning up after a lost host"). Debian's sshd needs its privilege-separation directory
# /run/sshd: each sshd gets a private tmpfs on /run in a mount namespace of its own (only it and
# its sessions see it), so nothing is created on the machine.
#
# State lines printed by `up` (key=value, for `eval` or grep):
#   dir=<state dir>  agent=<ssh wrapper>  host_a=NAME-a  addr_a=198.18.0.1  host_b=NAME-b
#   addr_b=198.18.0.2 ...  hosts=NAME-a,NAME-b,...  addrs=198.18.0.1,...  subnet=198.18.0.0/24
set -euo pipefail

readonly subnet=198.18.0.0/24 prefix=24 letters=abcdefgh

usage() {
  echo "usage: netns.sh up NAME [N] | netns.sh down|agent NAME | netns.sh exec NAME X CMD... |" \
    "netns.sh link NAME X down|up" >&2
  exit 2
}

[ $# -ge 2 ] || usage
cmd=$1 name=$2
shift 2
case $name in
  *[!A-Za-z0-9_-]* | "" | -*) echo "netns.sh: NAME must be letters, digits, - and _: '$name'" >&2; exit 2 ;;
esac
[ ${#name} -le 48 ] || { echo "netns.sh: NAME longer than 48 characters" >&2; exit 2; }
ns_sw=$name-sw
dir=${TMPDIR:-/tmp}/drivelab-netns.$name

# host X (a, b, ...): its index (0, 1, ...), namespace and address
host_index() {
  local i
  for ((i = 0; i < ${#letters}; i++)); do [ "${letters:i:1}" != "$1" ] || { echo $i; return 0; }; done
  return 1
}
host_ns() { echo "$name-$1"; }
host_addr() { echo "198.18.0.$(($(host_index "$1") + 1))"; }

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

# The namespaces of NAME that exist: its hosts (NAME-a, NAME-b, ...) and its switch.
existing_ns() { ip netns list | awk '{print $1}' | grep -xE -- "$name-([$letters]|sw)" || true; }

down() {
  local rc=0 ns
  # the hosts with an sshd first (the sessions mpirun opened), then the first host and the switch
  for ns in $(existing_ns | sort -r); do kill_ns_processes "$ns" || rc=1; done
  for ns in $(existing_ns | sort -r); do ip netns delete "$ns" || rc=1; done
  rm -rf -- "$dir"
  return $rc
}

exec_in() {
  local host=$1
  shift
  [ $# -ge 1 ] || usage
  host_index "$host" >/dev/null || usage
  if [ "$host" = a ]; then
    # shellcheck disable=SC2016  # $0 and $@ are the inner shell's
    exec ip netns exec "$(host_ns a)" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$(host_ns a)" "$@"
  fi
  local pid
  pid=$(cat "$dir/sshd-$host.pid" 2>/dev/null) || {
    echo "netns.sh: $(host_ns "$host") is not up (no sshd pid)" >&2
    exit 1
  }
  exec nsenter --target "$pid" --net --uts --mount -- "$@"
}

link() {
  [ $# -eq 2 ] || usage
  host_index "$1" >/dev/null || usage
  case $2 in up | down) ;; *) usage ;; esac
  ns_exists "$ns_sw" || { echo "netns.sh: $name is not up" >&2; exit 1; }
  ip -n "$ns_sw" link set "port-$1" "$2"
}

write_ssh_files() {
  local n=$1 i x
  ssh-keygen -q -t ed25519 -N '' -C "drivelab-netns-host-$name" -f "$dir/ssh_host_ed25519_key"
  ssh-keygen -q -t ed25519 -N '' -C "drivelab-netns-client-$name" -f "$dir/client_ed25519"
  cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
  : >"$dir/known_hosts"
  for ((i = 1; i < n; i++)); do
    x=${letters:i:1}
    echo "$(host_addr "$x") $(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
    cat >"$dir/sshd-$x.config" <<EOF
# sshd of the "host" $(host_ns "$x") (tests/multihost/netns.sh); nothing from /etc/ssh.
ListenAddress $(host_addr "$x"):22
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd-$x.pid
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
ClientAliveInterval 5
ClientAliveCountMax 3
LogLevel VERBOSE
EOF
  done
  cat >"$dir/ssh_config" <<EOF
# ssh client of $(host_ns a) to the other hosts (tests/multihost/netns.sh); used with -F, so /etc/ssh is not read.
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
  ServerAliveInterval 5
  ServerAliveCountMax 3
  LogLevel ERROR
EOF
  cat >"$dir/ssh" <<EOF
#!/bin/sh
# mpirun --mca plm_rsh_agent $dir/ssh: ssh with these hosts' own client config.
exec ssh -F "$dir/ssh_config" "\$@"
EOF
  chmod 0755 "$dir/ssh"
}

up() {
  local n=${1:-2} missing=() t i x ns
  case $n in [2-8]) ;; *) echo "netns.sh: N must be 2 to 8 hosts: '$n'" >&2; exit 2 ;; esac
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
  ip netns add "$ns_sw"
  ip -n "$ns_sw" link set lo up
  ip -n "$ns_sw" link add br0 type bridge
  ip -n "$ns_sw" link set br0 up
  for ((i = 0; i < n; i++)); do
    x=${letters:i:1}
    ns=$(host_ns "$x")
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$ns_sw" link add "port-$x" type veth peer name veth0 netns "$ns"
    ip -n "$ns_sw" link set "port-$x" master br0
    ip -n "$ns_sw" link set "port-$x" up
    ip -n "$ns" addr add "$(host_addr "$x")/$prefix" dev veth0
    ip -n "$ns" link set veth0 up
  done
  write_ssh_files "$n"
  local sshd
  sshd=$(command -v sshd || echo /usr/sbin/sshd)
  for ((i = 1; i < n; i++)); do
    x=${letters:i:1}
    ns=$(host_ns "$x")
    # sshd checks its config (-t), then forks into the background once it listens; its pid is in
    # $dir/sshd-X.pid.
    # shellcheck disable=SC2016  # $0..$3 are the inner shell's
    ip netns exec "$ns" unshare --mount --uts -- sh -c '
      mount -t tmpfs -o size=1m,mode=0755 drivelab-netns /run && mkdir -m 0755 /run/sshd &&
      hostname "$0" && "$1" -t -f "$2" && exec "$1" -f "$2" -E "$3"' "$ns" "$sshd" "$dir/sshd-$x.config" \
      "$dir/sshd-$x.log"
  done
  for ((i = 1; i < n; i++)); do
    x=${letters:i:1}
    for t in $(seq 100); do
      if ip netns exec "$(host_ns a)" "$dir/ssh" "$(host_addr "$x")" true 2>/dev/null; then
        break
      fi
      [ "$t" -lt 100 ] || {
        echo "netns.sh: sshd in $(host_ns "$x") not reachable from $(host_ns a) in 10 s; its log:" >&2
        cat "$dir/sshd-$x.log" >&2
        exit 1
      }
      sleep 0.1
    done
  done
  trap - EXIT
  local hosts=() addrs=()
  printf 'dir=%s\nagent=%s\n' "$dir" "$dir/ssh"
  for ((i = 0; i < n; i++)); do
    x=${letters:i:1}
    hosts+=("$(host_ns "$x")")
    addrs+=("$(host_addr "$x")")
    printf 'host_%s=%s\naddr_%s=%s\n' "$x" "$(host_ns "$x")" "$x" "$(host_addr "$x")"
  done
  printf 'hosts=%s\naddrs=%s\nsubnet=%s\n' "$(IFS=,; echo "${hosts[*]}")" "$(IFS=,; echo "${addrs[*]}")" "$subnet"
}

case $cmd in
  up) [ $# -le 1 ] || usage; up "$@" ;;
  down) [ $# -eq 0 ] || usage; down ;;
  agent) [ $# -eq 0 ] || usage; echo "$dir/ssh" ;;
  exec) [ $# -ge 2 ] || usage; exec_in "$@" ;;
  link) link "$@" ;;
  *) usage ;;
esac
