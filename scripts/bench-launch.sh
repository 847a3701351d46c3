#!/usr/bin/env bash
# bench-launch.sh: start-up cost per launcher. Wall time of a whole trivial job (init, one
# barrier, finalize: rshmem's `hello` example; for Open MPI's OSHMEM the same in C built with
# oshcc), median of --reps runs, at 1 2 4 8 16 PEs, under rshmem's oshrun, mpiexec.hydra,
# Open MPI's mpirun (PMIx), srun --mpi=pmi2 and srun --mpi=pmix (a one-node Slurm from
# scripts/slurm1.sh), and OSHMEM under Open MPI's oshrun. Prints a Markdown table.
#
#   scripts/bench-launch.sh [--reps N] [--pes "1 2 4 8 16"]
#
# Builds what it needs in release mode. Launchers that are missing are left out of the
# table. Runs as root pass --allow-run-as-root to Open MPI.
set -euo pipefail
me=bench-launch.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"
reps=5 pes="1 2 4 8 16"
while [ $# -gt 0 ]; do
    case "$1" in
    --reps) reps=$2; shift 2 ;;
    --pes) pes=$2; shift 2 ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
cd "$root"
CARGO_TARGET_DIR=$target cargo build -q --release -p oshrun -p rshmem --example hello
hello=$target/release/examples/hello
work=$(mktemp -d)
slurm=""
cleanup() {
    [ -n "$slurm" ] && scripts/slurm1.sh stop "$slurm"
    rm -rf "$work"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi=(mpirun.openmpi --oversubscribe)

# name|command prefix (the PE count follows it)
launchers=("oshrun|$target/release/oshrun -np")
command -v mpiexec.hydra >/dev/null && launchers+=("mpiexec.hydra|mpiexec.hydra -launcher fork -n")
command -v mpirun.openmpi >/dev/null && launchers+=("mpirun (PMIx)|${ompi[*]} -np")
if slurm=$(scripts/slurm1.sh start --cpus 16 2>/dev/null); then
    export SLURM_CONF=$slurm/slurm.conf
    launchers+=("srun --mpi=pmi2|srun --mpi=pmi2 -n" "srun --mpi=pmix|srun --mpi=pmix -n")
else
    slurm=""
fi
osh=""
if command -v oshcc >/dev/null && [ -x /usr/bin/oshrun ]; then
    cat > "$work/triv.c" <<'EOF'
#include <shmem.h>
#include <stdio.h>
int main(void) {
    shmem_init();
    shmem_barrier_all();
    printf("Hello from PE %d of %d\n", shmem_my_pe(), shmem_n_pes());
    shmem_finalize();
    return 0;
}
EOF
    oshcc -O2 "$work/triv.c" -o "$work/triv" && osh=$work/triv
fi

# Median wall time in ms of `$@ PROG` (checks every PE said hello).
measure() {
    local np=$1 prog=$2
    shift 2
    local times=()
    for _ in $(seq 1 "$reps"); do
        local t0 t1 n
        t0=$(date +%s%N)
        n=$(timeout -s KILL 120 "$@" "$np" "$prog" 2>/dev/null | grep -c "^Hello from PE .* of $np\$" || true)
        t1=$(date +%s%N)
        [ "$n" = "$np" ] || { echo "failed"; return; }
        times+=($(((t1 - t0) / 1000000)))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

printf '| launcher |'
for n in $pes; do printf ' %s PE |' "$n"; done
printf '\n|---|'
for _ in $pes; do printf -- '---|'; done
printf '\n'
for l in "${launchers[@]}"; do
    name=${l%%|*}
    read -r -a cmd <<< "${l#*|}"
    printf '| rshmem, %s |' "$name"
    for n in $pes; do printf ' %s |' "$(measure "$n" "$hello" "${cmd[@]}")"; done
    printf '\n'
done
if [ -n "$osh" ]; then
    printf '| OSHMEM (Open MPI 4.1), oshrun = mpirun |'
    for n in $pes; do
        printf ' %s |' "$(OMPI_MCA_osc=^rdma measure "$n" "$osh" /usr/bin/oshrun --oversubscribe -np)"
    done
    printf '\n'
fi
