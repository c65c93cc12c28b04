#!/usr/bin/env bash
# multihost_test.sh CLI WORKDIR [calibrate]: a dp2 x pp2 `run` over two
# "remote hosts" on this machine, launched from a third, with the trace
# coming home. With `calibrate`: `calibrate --hosts` over the same hosts
# instead of the run (its checks are in its block below).
#
# Hosts: network namespaces on a bridge (10.213.0.0/24; the bridge lives in
# the launcher's namespace, so nothing is added to this machine's own
# network), each with its own mount namespace and a private tmpfs /tmp (a
# file a remote rank writes is not visible on the launcher) and its own host
# name (UTS namespace). hostA and hostB each run an sshd on their address;
# the launcher reaches them with a key made for the test (mpirun's ssh).
# hostB is also in a time namespace whose CLOCK_MONOTONIC is 7 s ahead.
#
# Checks: the run's per-step loss equals the single-rank run's (1e-5
# relative); the trace is on the launcher (its /tmp), holds all 4 ranks
# with their host names, and is finished; every pipeline send starts before
# its receive ends on the aligned timeline; hostB's ranks' estimated clock
# offsets are -7 s within their stated uncertainty, and `info` prints each
# rank's offset and bound as stored; while the job runs, nothing on the
# three hosts listens outside the --net-if network and loopback; neither
# remote host's /tmp holds a file afterwards.
# Skips (exit 77, saying why) without root, network/time namespaces, sshd.
# Everything it makes (namespaces, links, daemons, mounts) is removed on
# every exit path.
set -u
cli="$(readlink -f "$1")"
dir="$(readlink -f "$2")"
mode="${3:-run}"  # run, or calibrate: `calibrate --hosts` instead of the run (below)
here="$(cd "$(dirname "$0")" && pwd)"
net=10.213.0
tag="bsmh$$"
ns_l="$tag-l" ns_a="$tag-a" ns_b="$tag-b"
offset_s=7
holders=""  # pids of the processes that hold each host's namespaces
made_run_sshd=""

# CI runs as root and must run this test: there (BUBBLESCOPE_REQUIRE_MULTIHOST=1,
# set by .ci/run) a reason to skip fails it instead.
skip() {
  [ "${BUBBLESCOPE_REQUIRE_MULTIHOST:-}" = 1 ] && { echo "FAIL: cannot run (required): $*"; exit 1; }
  echo "SKIP: $*"
  exit 77
}
cleanup() {
  for ns in "$ns_l" "$ns_a" "$ns_b"; do
    # Every process still in the test's namespaces (sshd sessions, orted,
    # ranks) was started by this test.
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  done
  for p in $holders; do kill -9 "$p" 2>/dev/null; done
  for ns in "$ns_l" "$ns_a" "$ns_b"; do ip netns del "$ns" 2>/dev/null; done
  [ -n "$made_run_sshd" ] && rmdir /run/sshd 2>/dev/null
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
fail() { echo "FAIL: $*"; [ -f "$dir/run.err" ] && { echo "--- run stderr"; tail -30 "$dir/run.err"; }; exit 1; }

# A run of this test killed outright (ctest's timeout) cannot clean up: its
# namespaces, named after its pid, are removed here once that pid is gone.
for old in $(ip netns list 2>/dev/null | sed -n 's/^\(bsmh[0-9]*\)[-a-z]*\( .*\)\{0,1\}$/\1/p' | sort -u); do
  [ -d "/proc/${old#bsmh}" ] && continue
  for n in $(ip netns list | awk '{print $1}' | grep -E "^$old(-[a-z]+)?$"); do
    for p in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$n" 2>/dev/null
  done
done
[ "$(id -u)" = 0 ] || skip "needs root (network, mount and time namespaces)"
[ "$mode" = run ] || command -v jq >/dev/null || skip "jq is missing (calibrate's checks read its JSON)"
command -v ip >/dev/null || skip "iproute2's ip is missing"
ip netns add "$tag-probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns del "$tag-probe"
unshare --time --monotonic 1 --fork true 2>/dev/null || skip "no time namespaces (kernel >= 5.6)"
if [ ! -x /usr/sbin/sshd ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null 2>&1 ||
    skip "sshd is missing and openssh-server cannot be installed"
fi
[ -x /usr/sbin/sshd ] || skip "sshd is missing"
if [ ! -d /run/sshd ]; then mkdir -p /run/sshd && made_run_sshd=1; fi

rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || fail "cannot use $dir"
ssh-keygen -q -t ed25519 -N '' -f "$dir/id" || fail "ssh-keygen"
cp "$dir/id.pub" "$dir/authorized_keys"
cat >"$dir/ssh_config" <<CONF
Host *
  IdentityFile $dir/id
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  BatchMode yes
  LogLevel ERROR
CONF

# The network: a bridge in the launcher's namespace, a veth to each host.
for ns in "$ns_l" "$ns_a" "$ns_b"; do
  ip netns add "$ns" || fail "ip netns add $ns"
  ip -n "$ns" link set lo up
done
ip -n "$ns_l" link add br0 type bridge && ip -n "$ns_l" link set br0 up &&
  ip -n "$ns_l" addr add "$net.1/24" dev br0 || fail "bridge"
i=11
for ns in "$ns_a" "$ns_b"; do
  ip -n "$ns_l" link add "v$i" type veth peer name eth0 netns "$ns" &&
    ip -n "$ns_l" link set "v$i" master br0 up &&
    ip -n "$ns" addr add "$net.$i/24" dev eth0 && ip -n "$ns" link set eth0 up ||
    fail "veth to $ns"
  i=$((i + 1))
done

# The build and source trees every host must see: when one lives under /tmp
# (a clone in /tmp), its top folder is bound back into each private /tmp.
keep=""
for p in "$cli" "$dir" "$here"; do
  case "$p" in /tmp/?*) top="/tmp/$(echo "${p#/tmp/}" | cut -d/ -f1)"
    case " $keep " in *" $top "*) ;; *) keep="$keep $top" ;; esac ;; esac
done
if [ -n "$keep" ] && [ ! -d /mnt ]; then skip "the build is under /tmp and there is no /mnt to carry it"; fi
# host NS NAME PIDFILE [UNSHARE-ARGS...] -- CMD...: starts CMD as the holder
# of a host: in NS, a new mount and UTS namespace with a private /tmp (the
# kept folders bound back in through /mnt, inside that namespace only) and
# host name NAME. CMD writes its pid to PIDFILE (or the shell does).
start_host() {
  local ns="$1" name="$2" pidfile="$3"
  shift 3
  local extra=()
  while [ "$1" != -- ]; do extra+=("$1"); shift; done
  shift
  BS_KEEP="$keep" ip netns exec "$ns" unshare --mount --uts --propagation private "${extra[@]}" \
    sh -c 'set -e
      if [ -n "$BS_KEEP" ]; then mount --rbind /tmp /mnt; fi
      mount -t tmpfs tmpfs /tmp
      for k in $BS_KEEP; do mkdir -p "$k" && mount --rbind "/mnt${k#/tmp}" "$k"; done
      if [ -n "$BS_KEEP" ]; then umount -l /mnt; fi
      hostname "$0" && echo $$ >"$1" && shift && exec "$@"' \
    "$name" "$pidfile" "$@" </dev/null >"$dir/$name.log" 2>&1 &
  disown
  for _ in $(seq 1 50); do [ -s "$pidfile" ] && break; sleep 0.1; done
  [ -s "$pidfile" ] || fail "host $name did not start: $(cat "$dir/$name.log")"
  holders="$holders $(cat "$pidfile")"
}
sshd_config() {  # ADDRESS NAME
  cat >"$dir/sshd-$2.conf" <<CONF
ListenAddress $1
HostKey $dir/hostkey-$2
PidFile none
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
CONF
  ssh-keygen -q -t ed25519 -N '' -f "$dir/hostkey-$2"
}
sshd_config "$net.11" hostA
sshd_config "$net.12" hostB
start_host "$ns_l" bs-launcher "$dir/launcher.pid" -- sleep 600
start_host "$ns_a" hostA "$dir/hostA.pid" -- /usr/sbin/sshd -D -e -f "$dir/sshd-hostA.conf"
start_host "$ns_b" hostB "$dir/hostB.pid" --time --monotonic "$offset_s" --fork -- \
  /usr/sbin/sshd -D -e -f "$dir/sshd-hostB.conf"
launcher=$(cat "$dir/launcher.pid")
# in_host PIDFILE CMD...: runs CMD in that host's namespaces.
in_host() { local p; p=$(cat "$1"); shift; nsenter -t "$p" -n -m -u -T "$@"; }
in_launcher() { nsenter -t "$launcher" -n -m -u "$@"; }
# Nothing of the job was left on the remote hosts.
remote_tmp_is_clean() {
  local h k left prune
  for h in hostA hostB; do
    prune=()
    for k in $keep; do prune+=(-path "$k" -prune -o); done
    left=$(in_host "$dir/$h.pid" find /tmp -mindepth 1 "${prune[@]}" -print 2>/dev/null)
    [ -z "$left" ] || fail "files left on $h: $left"
  done
}
# waited CMD...: runs CMD in the background and waits, so a signal to this
# script runs its traps at once (bash defers them during a foreground child).
waited() { "$@" & wait $!; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
export OMPI_MCA_plm_rsh_agent="ssh -F $dir/ssh_config"
# One rank per host in turn (0,2 on hostA; 1,3 on hostB): each pipeline pair
# (ranks 0-1, 2-3) spans the two hosts, so its sends cross the clock offset.
export OMPI_MCA_rmaps_base_mapping_policy=node
for h in "$net.11" "$net.12"; do
  for _ in $(seq 1 50); do
    in_launcher ssh -F "$dir/ssh_config" "$h" true 2>/dev/null && break
    sleep 0.1
  done
  echo "ssh $h: $(in_launcher ssh -F "$dir/ssh_config" "$h" 'hostname; cat /proc/uptime' 2>&1 | tr '\n' ' ')"
done

if [ "$mode" = calibrate ]; then
  # calibrate --hosts: the micro-benchmark over hostA and hostB from the
  # launcher. Its layers and same-host runs go to hostA, dp 2 and pp 2 again
  # with one rank per host; the calibration comes home with both links.
  in_launcher mkdir -p /tmp/mh
  waited in_launcher "$cli" calibrate --model tiny --world 2 --steps 2 --trace /tmp/mh/cal.db \
    --hosts "$net.11:2,$net.12:2" --net-if "$net.0/24" --json >"$dir/cal.json" 2>"$dir/run.err" ||
    fail "calibrate --hosts failed"
  in_launcher "$cli" info /tmp/mh/cal.db >"$dir/info.txt" 2>&1 || fail "info of the calibration runs"
  grep -E '^run|  rank' "$dir/info.txt"
  link() { jq -e --arg d "$1" --arg c "$2" --arg l "$3" \
    'any(.links[]; .dim == $d and .collective == $c and .link == $l)' "$dir/cal.json" >/dev/null; }
  for l in same_host other_host; do
    link dp allreduce $l || fail "no dp allreduce fit on $l: $(jq -c '.links' "$dir/cal.json")"
    link pp p2p $l || fail "no pp p2p fit on $l: $(jq -c '.links' "$dir/cal.json")"
  done
  link tp allreduce same_host || fail "no tp allreduce fit on same_host"
  jq -e '.method == "benchmark" and .host == "hostA" and
    ([.ops[] | select(.part == "block" and .op == "forward" and .tp == 1) | .micro_batch_size] | sort) == [1, 2, 4]' \
    "$dir/cal.json" >/dev/null || fail "the layers were not measured on hostA: $(jq -c 'del(.ops, .links)' "$dir/cal.json")"
  # The runs over hosts have a rank on each host; the others only hostA.
  grep -q 'over hosts' "$dir/info.txt" || fail "no run over hosts: $(grep '^run' "$dir/info.txt")"
  grep -q 'hostB' "$dir/info.txt" || fail "no rank ran on hostB"
  remote_tmp_is_clean
  echo "PASS: calibrate --hosts over hostA and hostB measured same_host and other_host links"
  exit 0
fi

layout=(--dp 2 --pp 2 --micro-batches 2 --steps 4 --model tiny)
in_launcher mkdir -p /tmp/mh
in_launcher "$cli" run "${layout[@]}" --hosts "$net.11:2,$net.12:2" --net-if "$net.0/24" \
  --trace /tmp/mh/trace.db >"$dir/run.out" 2>"$dir/run.err" &
run_pid=$!
# While it runs: every TCP listener on the three hosts (address, process).
: >"$dir/listeners.txt"
while kill -0 "$run_pid" 2>/dev/null; do
  for ns in "$ns_l" "$ns_a" "$ns_b"; do
    ss -N "$ns" -H -ltnp 2>/dev/null | awk -v ns="$ns" '{print ns, $4, $6}' >>"$dir/listeners.txt"
  done
  sleep 0.2
done
wait "$run_pid" || fail "the two-host run failed"
grep '^step' "$dir/run.out" | tail -1
# --net-if: nothing of the job listens on another address than the net's
# or loopback (OpenMPI's listeners bind the wildcard addresses by themselves:
# listen_bind.c binds them to the host's address on the net).
sort -u "$dir/listeners.txt" -o "$dir/listeners.txt"
elsewhere=$(awk -v net="$net." '$2 !~ "^(127\\.|\\[::1\\]:|\\[::ffff:127\\.|" net ")"' "$dir/listeners.txt")
[ -z "$elsewhere" ] || fail "listening outside $net.0/24 and loopback: $elsewhere"
for who in orted bubblescope-cli mpirun; do
  grep -q "\"$who\"" "$dir/listeners.txt" || fail "no listener of $who seen during the run"
done
echo "listeners during the run: $(wc -l <"$dir/listeners.txt"), all on $net.0/24 or loopback"
# The single-rank run, on the launcher alone (same global batch).
waited in_launcher "$cli" run --micro-batches 4 --steps 4 --model tiny --trace /tmp/mh/single.db \
  >"$dir/single.out" 2>&1 || fail "the single-rank run failed: $(tail -5 "$dir/single.out")"
in_launcher "$cli" info /tmp/mh/trace.db | tee "$dir/info.txt" | grep -E '^run|  rank'
in_launcher "$cli" export /tmp/mh/trace.db /tmp/mh/trace.json --run 1 --format chrome \
  >/dev/null || fail "the trace does not export"
in_launcher python3 "$here/check_trace.py" /tmp/mh/trace.db /tmp/mh/single.db hostA hostB \
  "$offset_s" /tmp/mh/trace.json "$dir/info.txt" || fail "the trace's checks failed"
# The hierarchical all-reduce with its nodes taken from the hosts (issue
# 19): dp 4 over the two hosts is 2 nodes of 2 dp ranks, and it trains as
# the single-rank run (same global batch of 4 sequences).
waited in_launcher "$cli" run --dp 4 --allreduce hierarchical --steps 4 --model tiny \
  --hosts "$net.11:2,$net.12:2" --net-if "$net.0/24" --trace /tmp/mh/hier.db \
  >"$dir/hier.out" 2>&1 || fail "the hierarchical run over the hosts failed: $(tail -5 "$dir/hier.out")"
grep -qx 'all-reduce hierarchical: the dp group spans 2 nodes of 2 dp ranks (the hosts'"'"' nodes)' \
  "$dir/hier.out" || fail "the hosts did not make 2 nodes of 2: $(grep -i 'all-reduce' "$dir/hier.out")"
last_loss() { sed -n 's/^step *4\/4 | loss \([0-9.]*\) .*/\1/p' "$1" | tail -1; }
hier_loss=$(last_loss "$dir/hier.out")
single_loss=$(last_loss "$dir/single.out")
awk -v a="$hier_loss" -v b="$single_loss" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a == a + 0 && b > 0 && d <= 2e-4 * b) }' \
  || fail "hierarchical over the hosts: step 4 loss $hier_loss, single rank $single_loss"
echo "hierarchical over the hosts: 2 nodes of 2, step 4 loss $hier_loss (single rank $single_loss)"
remote_tmp_is_clean
[ ! -e "$dir/trace.db" ] || fail "a trace file outside the launcher's /tmp"
echo "PASS: dp2 x pp2 over hostA and hostB; the trace came home to bs-launcher; hostB's clock offset found; hierarchical dp4 over the hosts' nodes"
