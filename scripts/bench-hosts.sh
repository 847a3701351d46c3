#!/usr/bin/env bash
# bench-hosts.sh: rshmem across hosts simulated on this machine (scripts/simhosts.sh), side
# by side with Open MPI's OSHMEM over UCX on the same simulated hosts, in one run.
#
#   scripts/bench-hosts.sh [--quick] [--no-oshmem] [--keep] [--out FILE]
#
# Every PE on another host is reached through UCX over TCP on the namespaces' veths (both
# libraries: UCX_TLS=tcp); PEs on one host share memory. Runs:
#   C, 2 PEs on 2 hosts (bench/c/shmem_bench.c): put/get/AMO latency, message rate,
#     bandwidth 8 B-1 MiB; rshmem under mpiexec.hydra, OSHMEM under Open MPI's mpirun
#     (--mca spml ucx, pml ucx) launched through the same fake ssh.
#   C collectives (bench/c/shmem_coll.c) on 2 hosts x 1 PE and 2 hosts x 2 PEs: rshmem with
#     its defaults (WORLD across hosts composes HOST and LEADERS: seed 000's hierarchical
#     algorithms), rshmem flat (SHMEM_BARRIER_ALGORITHM=dissemination,
#     SHMEM_BCAST_ALGORITHM=shm, SHMEM_REDUCE_ALGORITHM=recursive_doubling), and OSHMEM.
#   rshmem-bench threads --threads 2 on 2 hosts x 2 PEs: 2 threads of PE 0 with private
#     contexts to PE 2 on the other host, against 2 single-threaded PEs (0, 1 -> 2, 3):
#     seed 001's claim is a rate ratio of at least 0.9.
# Prints one table per part with ratios (OSH/rs: OSHMEM's time per operation over rshmem's,
# above 1 rshmem is faster; hier/flat likewise) and the raw JSON lines in FILE (default
# ${TMPDIR:-/tmp}/bench-hosts-results.jsonl). Needs root (namespaces); installs
# openmpi-bin libopenmpi-dev with apt-get when missing (skip with --no-oshmem). --quick:
# fewer samples, a few minutes on 2 cores. Figures move with load: compare columns of one
# run, and look at the load average printed with the tables.
set -euo pipefail
me=bench-hosts.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"
quick="" oshmem=yes keep=no out=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=--quick ;;
    --no-oshmem) oshmem=no ;;
    --keep) keep=yes ;;
    --out) out=$2; shift ;;
    *) usage_error "unknown argument $1" ;;
    esac
    shift
done
limit=${BENCH_TIMEOUT:-600}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-hosts.XXXXXX")
if [ "$keep" = no ]; then trap 'rm -rf "$tmp"' EXIT; fi
results=${out:-${TMPDIR:-/tmp}/bench-hosts-results.jsonl}
: > "$results"
sim=$root/scripts/simhosts.sh

build_release rshmem-capi oshrun rshmem-bench
install_rshmem "$tmp/rshmem"
rs=$tmp/rshmem/bin
"$rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/bench.rshmem" "$root/bench/c/shmem_bench.c"
"$rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/coll.rshmem" "$root/bench/c/shmem_coll.c"

# run NAME CMD...: runs CMD, output to $tmp/NAME.{out,err}; on failure says so.
run() {
    name=$1
    shift
    if timeout -k 10 "$limit" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; then
        return 0
    fi
    status=$?
    if [ "$status" = 77 ]; then
        echo "bench-hosts.sh: simulated hosts are not permitted here: $(tail -n 1 "$tmp/$name.err")" >&2
        exit 77
    fi
    echo "bench-hosts.sh: $name failed (status $status): $*" >&2
    tail -n 15 "$tmp/$name.err" >&2
    return 1
}

flat=(--env SHMEM_BARRIER_ALGORITHM=dissemination --env SHMEM_BCAST_ALGORITHM=shm
      --env SHMEM_REDUCE_ALGORITHM=recursive_doubling)
load0=$(loadavg)
echo "== rshmem, C, 2 hosts x 1 PE" >&2
run c-rs "$sim" run --hosts 2 --ppn 1 --timeout "$limit" -- "$tmp/bench.rshmem" $quick &&
    collect rshmem "$tmp/c-rs.out"
for ppn in 1 2; do
    echo "== rshmem, C collectives, 2 hosts x $ppn PE(s), hierarchical (default) and flat" >&2
    run "coll-rs-$ppn" "$sim" run --hosts 2 --ppn $ppn --timeout "$limit" -- "$tmp/coll.rshmem" $quick &&
        collect rshmem "$tmp/coll-rs-$ppn.out"
    run "coll-flat-$ppn" "$sim" run --hosts 2 --ppn $ppn "${flat[@]}" --timeout "$limit" \
        -- "$tmp/coll.rshmem" $quick && collect rshmem-flat "$tmp/coll-flat-$ppn.out"
done
echo "== rshmem-bench threads --threads 2, 2 hosts x 2 PEs" >&2
run threads "$sim" run --hosts 2 --ppn 2 --timeout "$limit" -- \
    "$target/release/rshmem-bench" threads --quick --threads 2 --max-size 4096 &&
    collect rshmem "$tmp/threads.out"

if [ "$oshmem" = yes ]; then
    # The simulated hosts run OSHMEM under mpirun.openmpi (the same Open MPI as oshcc's).
    if find_oshmem "$tmp" && command -v mpirun.openmpi > /dev/null; then
        "$ompi_cc" -O2 -std=c11 -Wall -o "$tmp/bench.oshmem" "$root/bench/c/shmem_bench.c"
        "$ompi_cc" -O2 -std=c11 -Wall -o "$tmp/coll.oshmem" "$root/bench/c/shmem_coll.c"
        # As in bench-ucx.sh: spml and pml ucx over TCP; osc ^rdma avoids a finalize crash
        # of Open MPI 4.1.4.
        export SIMHOSTS_MPIRUN_ARGS="--mca spml ucx --mca pml ucx --mca opal_common_ucx_tls any --mca opal_common_ucx_devices any --mca osc ^rdma --oversubscribe"
        echo "== OSHMEM over UCX, C, 2 hosts x 1 PE" >&2
        run c-osh "$sim" run --launcher openmpi --hosts 2 --ppn 1 --timeout "$limit" -- \
            "$tmp/bench.oshmem" $quick && collect oshmem "$tmp/c-osh.out"
        for ppn in 1 2; do
            echo "== OSHMEM over UCX, C collectives, 2 hosts x $ppn PE(s)" >&2
            run "coll-osh-$ppn" "$sim" run --launcher openmpi --hosts 2 --ppn $ppn --timeout "$limit" \
                -- "$tmp/coll.oshmem" $quick && collect oshmem "$tmp/coll-osh-$ppn.out"
        done
    else
        warn "Open MPI's oshcc/mpirun not found; no OSHMEM column"
    fi
fi

echo
echo "load average (1, 5, 15 min) before the runs: $load0; after: $(loadavg) ($cores cores)"
python3 - "$results" "$tmp/threads.out" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
fig = {}
for r in rows:
    fig[(r["config"], r["bench"], r.get("size"), r["metric"], r.get("mem", "heap"), r.get("pes"))] = r["value"]
slower = []
def get(cfg, bench, size, metric, pes=2, mem="heap"):
    return fig.get((cfg, bench, size, metric, mem, pes))
def show(v, kind):
    if v is None: return "-"
    if kind == "lat": return f"{v / 1e3:.2f}us" if v >= 1e4 else f"{v:.1f}ns"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"
def ratio(a, b, kind, label=None):
    # a's time per operation / b's (for rates and bandwidths, b / a): above 1, b is faster.
    if a is None or b is None or a <= 0 or b <= 0: return "-"
    q = a / b if kind == "lat" else b / a
    if label and q < 1: slower.append((label, q))
    return f"{q:.2f}" + (" <" if q < 1 else "")
fmt = "{:<30} {:>11} {:>11} {:>9}"

print()
print("rshmem and Open MPI's OSHMEM across 2 simulated hosts, 1 PE each, UCX over TCP (C,")
print("bench/c/shmem_bench.c; median per operation, Mmsg/s, GB/s). OSH/rs above 1: rshmem faster.")
print(fmt.format("figure", "rshmem", "OSHMEM", "OSH/rs"))
lat = ["put", "put_quiet", "get", "long_p", "long_g"] + ["amo_" + o for o in [
    "fetch", "set", "swap", "compare_swap", "fetch_inc", "inc", "fetch_add", "add"]]
for b in lat:
    v = [get(c, b, 8, "latency_median") for c in ("rshmem", "oshmem")]
    print(fmt.format(b, show(v[0], "lat"), show(v[1], "lat"), ratio(v[1], v[0], "lat", b)))
for b in ["put_msgrate", "put_nbi_msgrate"]:
    v = [get(c, b, 8, "rate") for c in ("rshmem", "oshmem")]
    print(fmt.format(b + " Mmsg/s", show(v[0], "rate"), show(v[1], "rate"), ratio(v[1], v[0], "rate", b)))
for b in ["put_bw", "get_bw"]:
    for n in [8, 4096, 65536, 1 << 20]:
        v = [get(c, b, n, "bandwidth") for c in ("rshmem", "oshmem")]
        print(fmt.format(f"{b} {n} B GB/s", show(v[0], "bw"), show(v[1], "bw"),
                         ratio(v[1], v[0], "bw", f"{b} {n} B")))

fmt4 = "{:<32} {:>10} {:>10} {:>10} {:>9} {:>9}"
print()
print("Collectives across 2 simulated hosts (C, bench/c/shmem_coll.c, slowest PE per batch):")
print("rshmem default (hierarchical on WORLD across hosts), rshmem flat (dissemination,")
print("single-copy broadcast, recursive doubling), OSHMEM. flat/hier and OSH/hier above 1:")
print("the default is faster.")
print(fmt4.format("figure", "rs hier", "rs flat", "OSHMEM", "flat/hier", "OSH/hier"))
for pes in [2, 4]:
    for b, n in [("barrier_all", None), ("broadcast64_barrier", 8), ("broadcast64_barrier", 65536),
                 ("reduce_sum_to_all", 8), ("reduce_sum_to_all", 65536),
                 ("team_broadcastmem", 8), ("team_broadcastmem", 65536),
                 ("team_sum_reduce", 8), ("team_sum_reduce", 65536)]:
        label = f"{b}{'' if n is None else ' ' + str(n) + ' B'} {pes}PE"
        v = [get(c, b, n, "latency_median", pes) for c in ("rshmem", "rshmem-flat", "oshmem")]
        if any(x is not None for x in v):
            print(fmt4.format(label, *(show(x, "lat") for x in v), ratio(v[1], v[0], "lat"),
                              ratio(v[2], v[0], "lat", label)))

print()
print("Seed 001 across hosts: rshmem-bench threads --threads 2 on 2 hosts x 2 PEs (rates of 2")
print("threads of one PE with private contexts against 2 single-threaded PEs):")
try:
    for line in open(sys.argv[2]):
        if not line.startswith("{") and line.strip():
            print("  " + line.rstrip())
except OSError:
    print("  (no output)")

print()
if slower:
    print("rshmem is slower than OSHMEM in: " + ", ".join(f"{l} ({q:.2f})" for l, q in slower))
elif any(r["config"] == "oshmem" for r in rows):
    print("rshmem is nowhere slower than OSHMEM across these hosts.")
else:
    print("(no OSHMEM figures in this run: nothing to compare)")
EOF
echo "raw figures (JSON lines): $results" >&2
if [ "$keep" = yes ]; then echo "raw output kept in $tmp" >&2; fi
