#!/usr/bin/env bash
# simhosts.sh: runs a program across hosts simulated on this machine, launched by MPICH's
# mpiexec.hydra as on a cluster.
#
#   scripts/simhosts.sh run [--hosts H] [--ppn P] [--env K=V]... [--timeout S]
#                           [--launcher hydra|openmpi|slurm] -- PROG ARGS...
#
# Each simulated host is a network namespace with its own address, joined to the others by a
# bridge, and a holder process that owns the host's UTS (hostname), IPC, mount (a private
# tmpfs on /dev/shm) and PID namespaces. PEs are started inside a holder's namespaces by a
# fake ssh (nsenter), so PEs of one host share memory and PEs of two hosts share nothing but
# the network: rshmem reaches them through UCX over TCP, on the namespaces' addresses only.
# mpiexec.hydra runs in a third namespace on the bridge and starts one proxy per host through
# the fake ssh. PEs are placed in blocks: PEs 0..P-1 on host 1, P..2P-1 on host 2, ...
# (PMI_process_mapping says so to the PEs).
#
# --launcher openmpi runs Open MPI's mpirun instead (for OSHMEM programs, side by side in
# benchmarks), its daemons started through the same fake ssh; extra mpirun arguments come
# from SIMHOSTS_MPIRUN_ARGS.
#
# --launcher slurm runs a Slurm cluster instead: munged and slurmctld beside the launcher, one
# slurmd per host (inside the host's namespaces, NodeAddr = the host's address), and
# `srun -N HOSTS -n HOSTS*PPN` from the launcher's namespace; extra srun arguments (--mpi=pmix,
# --mpi=pmi2) come from SIMHOSTS_SRUN_ARGS.
#
# Everything (namespaces, links, holders and the PEs in them, the private /dev/shm) is
# removed on exit, whatever the outcome. Exit status: the job's (mpiexec.hydra's); 124 when
# --timeout (default 120 s) killed it; 77 when this machine does not permit network
# namespaces (not root, no CAP_NET_ADMIN, no `ip`/`unshare`/`nsenter`/`mpiexec.hydra`).
# Needs root. Concurrent runs take different names and subnets.
set -euo pipefail
# Daemons (slurmctld, slurmd, munged) live in sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

skip() {
    echo "simhosts: skipped: $*" >&2
    exit 77
}

[ "${1:-}" = run ] || usage
shift
hosts=2 ppn=2 limit=120 launcher=hydra
envs=()
while [ $# -gt 0 ]; do
    case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --ppn) ppn=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --launcher) launcher=$2; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
    esac
done
[ $# -gt 0 ] || usage
[ "$hosts" -ge 1 ] && [ "$hosts" -le 8 ] || { echo "simhosts: --hosts must be 1..8" >&2; exit 2; }
[ "$ppn" -ge 1 ] || { echo "simhosts: --ppn must be at least 1" >&2; exit 2; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
case "$launcher" in
hydra) mpirun=mpiexec.hydra ;;
openmpi) mpirun=mpirun.openmpi ;;
slurm) mpirun=srun ;;
*) echo "simhosts: --launcher must be hydra, openmpi or slurm" >&2; exit 2 ;;
esac
tools=(ip unshare nsenter "$mpirun" timeout)
[ "$launcher" = slurm ] && tools+=(slurmctld slurmd munged)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (scripts/install-deps.sh installs it)"
done
prog=$(command -v "$1" || true)
[ -n "$prog" ] || { echo "simhosts: $1: not found" >&2; exit 2; }
shift

# A free set of names: creating the launcher namespace claims the index atomically.
idx=""
for i in $(seq 1 250); do
    if err=$(ip netns add "rsh${i}l" 2>&1); then
        idx=$i
        break
    fi
    case "$err" in
    *"File exists"*) continue ;;
    *) skip "cannot create a network namespace: $err" ;;
    esac
done
[ -n "$idx" ] || skip "no free simulated-host index (250 runs at once?)"

launch_ns="rsh${idx}l"
bridge="rsbr${idx}"
net="10.201.${idx}"
work=$(mktemp -d "${TMPDIR:-/tmp}/simhosts.XXXXXX")
holders=()
unshares=()

cleanup() {
    set +e
    # Slurm's daemons outside the hosts (slurmd and its steps die with their host's holder).
    for f in "$work"/slurmctld.pid "$work"/munged.pid; do
        [ -s "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
    done
    # A PID namespace's init ignores SIGTERM from outside; SIGKILL ends it and every
    # process of that host with it.
    for p in "${holders[@]}" "${unshares[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    for p in "${unshares[@]}"; do
        wait "$p" 2>/dev/null
    done
    for h in $(seq 1 "$hosts"); do
        ip netns del "rsh${idx}h${h}" 2>/dev/null
    done
    ip netns del "$launch_ns" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip -n "$launch_ns" link set lo up
ip -n "$launch_ns" link add "$bridge" type bridge
ip -n "$launch_ns" addr add "${net}.1/24" dev "$bridge"
ip -n "$launch_ns" link set "$bridge" up

hostlist=""
: > "$work/hosts"
for h in $(seq 1 "$hosts"); do
    ns="rsh${idx}h${h}"
    ip netns add "$ns"
    # The host's end is called eth0 inside its namespace (names are per namespace), so
    # UCX_NET_DEVICES=eth0 holds on every host.
    # A run killed before its cleanup may have left this pair in the root namespace (the
    # index is ours now: the launcher namespace claimed it).
    ip link del "rsp${idx}h${h}" 2>/dev/null || true
    ip link add "rsv${idx}h${h}" type veth peer name "rsp${idx}h${h}"
    ip link set "rsv${idx}h${h}" netns "$ns"
    ip -n "$ns" link set "rsv${idx}h${h}" name eth0
    ip link set "rsp${idx}h${h}" netns "$launch_ns"
    ip -n "$launch_ns" link set "rsp${idx}h${h}" master "$bridge"
    ip -n "$launch_ns" link set "rsp${idx}h${h}" up
    ip -n "$ns" addr add "${net}.$((10 + h))/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    # The holder: PID 1 of the host's PID namespace, with its hostname and /dev/shm.
    ip netns exec "$ns" unshare --uts --ipc --mount --pid --fork --mount-proc \
        sh -c "hostname simhost${idx}-${h} && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && touch '$work/ready$h' && exec sleep infinity" &
    unshares+=($!)
    for _ in $(seq 1 200); do
        [ -e "$work/ready$h" ] && break
        sleep 0.05
    done
    [ -e "$work/ready$h" ] || { echo "simhosts: host $h did not start" >&2; exit 1; }
    holder=$(cat "/proc/${unshares[-1]}/task/${unshares[-1]}/children" | awk '{print $1}')
    [ -n "$holder" ] || { echo "simhosts: no holder process for host $h" >&2; exit 1; }
    holders+=("$holder")
    echo "${net}.$((10 + h)) $holder" >> "$work/hosts"
    hostlist+="${hostlist:+,}${net}.$((10 + h)):${ppn}"
done

# Hydra calls `ssh [options] HOST COMMAND...`; this one enters HOST's namespaces instead.
cat > "$work/fake_ssh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do
    case "\$1" in
    -o|-p|-l|-i) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
host=\$1
shift
pid=\$(awk -v h="\$host" '\$1 == h { print \$2 }' "$work/hosts")
[ -n "\$pid" ] || { echo "fake_ssh: unknown host \$host" >&2; exit 255; }
exec nsenter -t "\$pid" --net --uts --ipc --mount --pid --wd="\$PWD" sh -c "\$*"
EOF
chmod +x "$work/fake_ssh"

if [ "$launcher" = slurm ]; then
    # One munged for all hosts (its socket is a file every host's mount namespace sees).
    mkdir -m 700 "$work/munge"
    dd if=/dev/urandom of="$work/munge/key" bs=1024 count=1 status=none
    chmod 400 "$work/munge/key"
    munged --force --key-file="$work/munge/key" --socket="$work/munge/sock" \
        --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/seed"
    nodes=""
    {
        echo "ClusterName=simhosts"
        # The launcher's namespace shares this machine's host name.
        echo "SlurmctldHost=$(hostname -s)(${net}.1)"
        echo "SlurmUser=root"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        echo "AuthInfo=socket=$work/munge/sock"
        echo "StateSaveLocation=$work/state"
        echo "SlurmdSpoolDir=$work/spool-%n"
        echo "SlurmctldPidFile=$work/slurmctld.pid"
        echo "SlurmdPidFile=$work/slurmd-%n.pid"
        echo "SlurmctldLogFile=$work/slurmctld.log"
        echo "SlurmdLogFile=$work/slurmd-%n.log"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_CPU"
        echo "MpiDefault=none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "ReturnToService=2"
        echo "SlurmdParameters=config_overrides"
        echo "KillWait=2"
        echo "PlugStackConfig=$work/plugstack.conf"
        for h in $(seq 1 "$hosts"); do
            echo "NodeName=simhost${idx}-${h} NodeAddr=${net}.$((10 + h)) CPUs=$((ppn > 8 ? ppn : 8)) State=UNKNOWN"
            nodes+="${nodes:+,}simhost${idx}-${h}"
        done
        echo "PartitionName=main Nodes=$nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
    } > "$work/slurm.conf"
    : > "$work/plugstack.conf"
    # Slurm's PMIx plugin keeps per-step files under /tmp, named by job id only; give each
    # host its own directory (a tmpfs mounted in the host's mount namespace, below).
    echo "PMIxCliTmpDirBase=$work/hosttmp" > "$work/mpi.conf"
    mkdir -p "$work/state" "$work/hosttmp"
    # cgroup v2 machines (not exercised on the project's, which has v1): no systemd here.
    cgroups=v1
    if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
        cgroups=v2
        printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\nCgroupAutomount=yes\n' > "$work/cgroup.conf"
    fi
    export SLURM_CONF="$work/slurm.conf"
    ip netns exec "$launch_ns" slurmctld -f "$SLURM_CONF" -i
    h=1
    while read -r _ holder; do
        # `ip netns exec` gave the host a fresh /sys without cgroups, which slurmd needs:
        # mount the machine's cgroup (v1) hierarchies again, in the host's mount namespace.
        nsenter -t "$holder" --net --uts --ipc --mount --pid sh -c '
            mount -t tmpfs -o mode=755 hosttmp "$3/hosttmp" &&
            mkdir -p "$3/spool-$2" &&
            if [ "$4" = v2 ]; then
                mount -t cgroup2 cgroup2 /sys/fs/cgroup || exit 1
                exec slurmd -f "$1" -N "$2"
            fi
            mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup &&
            for c in $(awk '"'"'$4 == 1 && $1 !~ /^#/ { print $1 }'"'"' /proc/cgroups); do
                mkdir -p /sys/fs/cgroup/$c && mount -t cgroup -o $c cgroup /sys/fs/cgroup/$c || exit 1
            done
            mkdir -p /sys/fs/cgroup/systemd &&
            mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd || exit 1
            exec slurmd -f "$1" -N "$2"' sh "$SLURM_CONF" "simhost${idx}-${h}" "$work" "$cgroups" || {
            echo "simhosts: slurmd on host $h did not start:" >&2
            tail -n 5 "$work"/slurmd-*.log >&2
            exit 1
        }
        h=$((h + 1))
    done < "$work/hosts"
    idle() {
        [ "$(timeout -s KILL 5 ip netns exec "$launch_ns" sinfo -h -t idle -o %D 2>/dev/null)" = "$hosts" ]
    }
    start=$SECONDS
    until idle || [ $((SECONDS - start)) -ge 30 ]; do
        sleep 0.2
    done
    idle || {
        echo "simhosts: the Slurm nodes did not become idle:" >&2
        tail -n 5 "$work"/*.log >&2
        exit 1
    }
fi

set +e
started=$SECONDS
if [ "$launcher" = slurm ]; then
    for kv in UCX_TLS=tcp UCX_NET_DEVICES=eth0 "${envs[@]}"; do
        export "${kv?}"
    done
    # shellcheck disable=SC2086
    timeout -s KILL "$limit" ip netns exec "$launch_ns" \
        srun -N "$hosts" -n $((hosts * ppn)) --ntasks-per-node="$ppn" ${SIMHOSTS_SRUN_ARGS:-} "$prog" "$@"
elif [ "$launcher" = hydra ]; then
    genv=(-genv UCX_TLS tcp -genv UCX_NET_DEVICES eth0)
    for kv in "${envs[@]}"; do
        genv+=(-genv "${kv%%=*}" "${kv#*=}")
    done
    timeout -s KILL "$limit" ip netns exec "$launch_ns" \
        mpiexec.hydra -iface "$bridge" -launcher ssh -launcher-exec "$work/fake_ssh" \
        -hosts "$hostlist" -n $((hosts * ppn)) "${genv[@]}" "$prog" "$@"
else
    xenv=(-x UCX_TLS=tcp -x UCX_NET_DEVICES=eth0)
    for kv in "${envs[@]}"; do
        xenv+=(-x "$kv")
    done
    # Unbound: each host's daemon sees the whole machine and would bind its first PE to
    # core 0 as every other host's does, so the hosts' PEs would share one real core (an
    # OSHMEM 2-PE barrier took 4.0 ms and a get 8 ms, a scheduler tick per exchange, and its
    # OSU programs timed out). Hydra, which starts rshmem's PEs here, binds none either. A
    # --bind-to in SIMHOSTS_MPIRUN_ARGS comes later and wins.
    # shellcheck disable=SC2086
    timeout -s KILL "$limit" ip netns exec "$launch_ns" \
        mpirun.openmpi --allow-run-as-root --mca plm_rsh_agent "$work/fake_ssh" \
        --mca oob_tcp_if_include "${net}.0/24" --mca btl_tcp_if_include "${net}.0/24" \
        --bind-to none -H "$hostlist" -n $((hosts * ppn)) "${xenv[@]}" ${SIMHOSTS_MPIRUN_ARGS:-} \
        "$prog" "$@"
fi
status=$?
set -e
if [ "$launcher" = slurm ] && [ "$status" != 0 ]; then
    for f in "$work"/slurmd-*.log; do
        echo "simhosts: $(basename "$f"):" >&2
        grep -i error "$f" | tail -n 5 >&2
    done
fi
if [ "$status" = 137 ] && [ $((SECONDS - started)) -ge "$limit" ]; then
    echo "simhosts: the job did not end within ${limit} s; killed" >&2
    status=124
fi
exit "$status"
