#!/usr/bin/env bash
# slurm1.sh: a one-node Slurm (slurmctld, slurmd, munged) for the tests, all state in a
# temporary directory; nothing in /etc, /run or /var is touched.
#
#   scripts/slurm1.sh start [--cpus N] [--owner PID]   prints the directory (DIR) on stdout
#   scripts/slurm1.sh stop DIR                         stops the daemons, removes DIR
#
# Clients use it with SLURM_CONF=DIR/slurm.conf (srun, sbatch, squeue, scancel, sinfo).
# The node advertises --cpus CPUs (default 16, more than this machine has: the jobs are
# oversubscribed on purpose). munged runs with a freshly generated key on its own socket.
# With --owner, a watcher stops everything once process PID is gone (a test binary that
# ends or is killed leaves no daemon behind). Needs root (slurmd runs jobs as their user).
# Exit status 77: this machine cannot run it (not root, Slurm or munge not installed).
set -euo pipefail
# Daemons (slurmctld, slurmd, munged) live in sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

skip() {
    echo "slurm1: skipped: $*" >&2
    exit 77
}

stop() {
    local dir=$1
    [ -d "$dir" ] || return 0
    # Jobs first, while the daemons that end them still run.
    if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
        SLURM_CONF="$dir/slurm.conf" scancel --full --signal=KILL --user=root 2>/dev/null || true
        for _ in $(seq 1 50); do
            [ -z "$(SLURM_CONF="$dir/slurm.conf" squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
    for d in slurmd slurmctld munged watcher; do
        local f="$dir/$d.pid"
        [ -s "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null || true
    done
    # Daemons get 3 s to end their jobs and exit, then SIGKILL.
    for _ in $(seq 1 30); do
        local alive=0
        for d in slurmd slurmctld munged; do
            local f="$dir/$d.pid"
            [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1
        done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for d in slurmd slurmctld munged; do
        local f="$dir/$d.pid"
        [ -s "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null || true
    done
    rm -rf "$dir"
}

case "${1:-}" in
stop)
    [ $# = 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }
    stop "$2"
    exit 0
    ;;
start) shift ;;
*) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

cpus=16 owner=""
while [ $# -gt 0 ]; do
    case "$1" in
    --cpus) cpus=$2; shift 2 ;;
    --owner) owner=$2; shift 2 ;;
    *) echo "slurm1: unknown option $1" >&2; exit 2 ;;
    esac
done

[ "$(id -u)" = 0 ] || skip "needs root (slurmd)"
for tool in slurmctld slurmd munged srun sbatch squeue scancel sinfo; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/slurm1.XXXXXX")
chmod 755 "$dir"
trap 'stop "$dir"' ERR
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"

# munged refuses a key or socket directory others can write; root may run it with --force.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"

# Two free ports: ask the kernel, then release them (a race we accept in tests).
ports=$(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
set -- $ports
host=$(hostname -s)
cat > "$dir/slurm.conf" <<EOF
ClusterName=rshmem
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerType=sched/builtin
KillWait=2
MinJobAge=2
InactiveLimit=0
PlugStackConfig=$dir/plugstack.conf
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
: > "$dir/plugstack.conf"
# On a cgroup v2 machine without systemd, slurmd needs to be told not to ask systemd (not
# exercised on the project's machine, which has cgroup v1).
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
    printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\nCgroupAutomount=yes\n' > "$dir/cgroup.conf"
fi
# Slurm's PMIx plugin keeps per-step files under /tmp by default.
mkdir -p "$dir/pmix"
echo "PMIxCliTmpDirBase=$dir/pmix" > "$dir/mpi.conf"
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" -i
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 150); do
    if sinfo -h -o %T 2>/dev/null | grep -qx idle; then
        break
    fi
    sleep 0.1
done
sinfo -h -o %T 2>/dev/null | grep -qx idle || {
    echo "slurm1: the node did not become idle; logs in $dir:" >&2
    tail -n 20 "$dir"/*.log >&2
    exit 1
}
if [ -n "$owner" ]; then
    (
        trap '' HUP
        while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 0.2; done
        rm -f "$dir/watcher.pid"
        "$0" stop "$dir"
    ) </dev/null >/dev/null 2>&1 &
    echo $! > "$dir/watcher.pid"
fi
trap - ERR
echo "$dir"
