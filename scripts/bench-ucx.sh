#!/bin/sh
# bench-ucx.sh: rshmem beside another OpenSHMEM over the same network library, on this host
# and across two simulated hosts, from one run: the OSU micro-benchmarks' OpenSHMEM
# programs, and the project's own C and Rust programs. --network ucx (default): against
# Open MPI's OSHMEM over UCX; --network ofi: against Sandia OpenSHMEM (SOS) over libfabric.
#
#   scripts/bench-ucx.sh [--network ucx|ofi] [--sos DIR] [--providers LIST]
#                        [--osu DIR] [--quick] [--rounds N] [--md FILE] [--out FILE]
#                        [--baseline FILE] [--osu-only | --no-osu] [--no-hosts] [--programs LIST]
#                        [--pes LIST]
#                        [--no-oshmem] [--no-rust] [--keep]
#
# OSU part (needs the OMB 6.x sources: --osu DIR or OSU_SRC, a tree holding c/openshmem and
# c/util, e.g. `git archive HEAD configure.ac c/openshmem c/util | tar -x -C DIR`):
# osu_oshm_put and _get (latency, 1 B-1 MiB, 2 PEs), _put_mr (message rate), _atomics
# (fetching and posted AMOs), _barrier, _broadcast and _reduce (2 and 4 PEs), each built
# with rshmem's oshcc and with Open MPI's (with an empty omb_ddt_process_options, which
# osu_util.c wants from the MPI utilities, and 3 decimals instead of 2), symmetric heap,
# in these configurations:
#   rshmem-shm    rshmem's oshrun, default transport (node-local PEs share memory);
#   rshmem-ucx    SHMEM_TRANSPORT=ucx UCX_TLS=T, for T = tcp and sm,self;
#   oshmem-ucx    Open MPI's oshrun --mca spml ucx -x UCX_TLS=T, and --mca pml ucx with
#                 opal_common_ucx_tls/devices=any so that the MPI layer OSHMEM's
#                 collectives use crosses UCX too (checked in the verbose MCA output);
#   rshmem-hosts  2 hosts simulated by scripts/simhosts.sh (root), 1 and 2 PEs per host,
#                 UCX over TCP between them, mpiexec.hydra, rshmem's default transport;
#   oshmem-hosts  the same hosts under Open MPI's mpirun (spml and pml ucx, UCX_TLS=tcp).
# The runs are interleaved rounds (--rounds, default 3): each round runs every program in
# every configuration, rshmem before the peer library in odd rounds and after it in even
# ones (a run that follows another can pay for its teardown); each figure is the median
# over the rounds. --programs "put get ..." runs some of the programs (names without
# osu_oshm_); --pes "2" some of the PE counts (default "2 4").
# scripts/osu-table.py prints one table per (transport, PE count): OSU figure | rshmem |
# OSHMEM | ratio = OSHMEM's time / rshmem's (message rates: rshmem's rate / OSHMEM's; above 1
# rshmem is better always) | the ratio's range over rounds | rshmem-shm (with --baseline
# FILE, an earlier run's results, also that run's shm figure over this one's), the count of
# ratios below 1.0 and the load average at the start and end; --md FILE writes the same as
# markdown (selected sizes, every figure in a <details> block). --quick: 100 iterations for
# broadcast and reduce (-i 100), a tenth of put's and get's fixed counts (patched in a
# copy), 2 rounds unless --rounds says. A run is bounded by OSU_TIMEOUT seconds (default
# 300, --quick 120); one that timed out is not repeated in later rounds (across the
# simulated hosts: no more runs of that library there).
#
# Own programs (skipped by --osu-only): bench/c/shmem_bench.c at 2 PEs (put/get latency,
# put message rate, every 64-bit AMO, put/get bandwidth 8 B-1 MiB) and bench/c/shmem_coll.c
# at 2 and 4 PEs (barrier, broadcast and long sum reduction of 8 B and 64 KiB) on
# rshmem-shm, rshmem-ucx and oshmem-ucx with UCX_TLS=tcp; then rshmem-bench pe --quick and
# coll --quick --max-size 65536 (the Rust API, 2 PEs) under the default transport and under
# SHMEM_TRANSPORT=ucx UCX_TLS=tcp. Open MPI 4.1.4's OSHMEM has no team API, so the compared
# collectives are the active-set forms (shmem_broadcast64 + barrier_all,
# shmem_long_sum_to_all); rshmem's team forms are extra rows. Timing: medians of batches
# (see the C sources). A configuration whose run fails leaves its column empty; a "rshmem
# ucx" run in which shmem_ptr still maps the peer did not go through UCX, and its column is
# dropped with a warning. Prints one table: figure | rshmem shm | rshmem ucx | OSHMEM ucx |
# OSHMEM/rs-ucx (> 1: rshmem is faster), and lists the figures in which rshmem over UCX is
# slower. Each run is bounded by BENCH_TIMEOUT seconds (default 600).
#
# With UCX over TCP an operation that needs the target takes 7-30 us, and figures move by
# 2x with other load on the machine: compare columns of one run, and look at the load
# averages printed with the tables. Every raw figure is a JSON line in FILE (default
# ${TMPDIR:-/tmp}/bench-ucx-results.jsonl): rshmem-bench's schema plus "impl", "config"
# (and "mem") for the own programs; "suite":"osu", "round", "config", "tls", "pes",
# "program", "figure", "size", "metric" (latency_us, msg_rate, rate_mops), "value" for
# OSU's, with "failed" lines for runs that failed. `scripts/osu-table.py FILE [--md OUT]`
# redraws the OSU tables from such a file. Builds rshmem in release mode into
# CARGO_TARGET_DIR; installs openmpi-bin libopenmpi-dev with apt-get when missing and run
# as root (as scripts/bench-c.sh does); OMPI_OSHCC / OMPI_OSHRUN pick another Open MPI,
# OMPI_OSHRUN_ARGS adds oshrun flags (on this host).
#
# --network ofi: the same programs, rounds, tables and JSON lines with libfabric in place of
# UCX and Sandia OpenSHMEM in place of OSHMEM (--no-oshmem: no peer library either way).
# SOS is an install prefix given by --sos DIR or SOS_DIR, built with --with-ofi
# --enable-pmi-simple --enable-ofi-manual-progress --enable-manual-progress (tcp;ofi_rxm
# offers only manual data progress, which SOS asks for only when so built); its programs
# run under mpiexec.hydra. Configurations, for each provider P of --providers (default
# "tcp sockets"; "tls" in the JSON lines holds P):
#   rshmem-ofi        SHMEM_TRANSPORT=ofi FI_PROVIDER=P under rshmem's oshrun;
#   sos-ofi           FI_PROVIDER=P mpiexec.hydra (this SOS has no on-node transport: no
#                     CMA or XPMEM, so every PE, even its own host's, goes through P);
#   rshmem-ofi-hosts  2 simulated hosts, FI_PROVIDER=tcp, SHMEM_NETWORK=ofi under the default
#                     transport (shared memory within a host, libfabric between hosts);
#   sos-hosts         the same hosts, FI_PROVIDER=tcp, mpiexec.hydra.
# sockets runs set FI_SOCKETS_PE_WAITTIME=0 for both libraries (otherwise its progress
# thread sleeps 10 ms between polls). The own programs run with P = tcp: rshmem-ofi,
# sos-ofi and the Rust programs under SHMEM_TRANSPORT=ofi FI_PROVIDER=tcp.
set -eu
me=bench-ucx.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"
quick=
oshmem=yes
rust=yes
keep=no
out=
own=yes
osu=${OSU_SRC:-}
use_osu=yes
hosts=yes
rounds=
md=
programs="put get put_mr atomics barrier broadcast reduce"
pe_counts="2 4"
baseline=
network=ucx
sos=${SOS_DIR:-}
providers="tcp sockets"
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=--quick ;;
        --no-oshmem) oshmem=no ;;
        --no-rust) rust=no ;;
        --keep) keep=yes ;;
        --out) out=$2; shift ;;
        --out=*) out=${1#--out=} ;;
        --osu) osu=$2; shift ;;
        --osu=*) osu=${1#--osu=} ;;
        --osu-only) own=no ;;
        --no-osu) use_osu=no ;;
        --no-hosts) hosts=no ;;
        --programs) programs=$2; shift ;;
        --programs=*) programs=${1#--programs=} ;;
        --pes) pe_counts=$2; shift ;;
        --pes=*) pe_counts=${1#--pes=} ;;
        --rounds) rounds=$2; shift ;;
        --rounds=*) rounds=${1#--rounds=} ;;
        --md) md=$2; shift ;;
        --md=*) md=${1#--md=} ;;
        --baseline) baseline=$2; shift ;;
        --baseline=*) baseline=${1#--baseline=} ;;
        --network) network=$2; shift ;;
        --network=*) network=${1#--network=} ;;
        --sos) sos=$2; shift ;;
        --sos=*) sos=${1#--sos=} ;;
        --providers) providers=$2; shift ;;
        --providers=*) providers=${1#--providers=} ;;
        -h|--help) sed -n '2,/^set -eu$/p' "$0" | sed '$d'; exit 0 ;;
        *) usage_error "unknown argument $1" ;;
    esac
    shift
done
case $network in
    ucx|ofi) ;;
    *) usage_error "--network must be ucx or ofi, not '$network'" ;;
esac
if [ "$network" = ofi ] && [ "$oshmem" = yes ] && ! find_sos "$sos"; then
    warn "--network ofi needs Sandia OpenSHMEM: --sos DIR or SOS_DIR=DIR, an install prefix"
    echo "  holding bin/oshcc (${sos:-none given}); or --no-oshmem to run rshmem alone" >&2
    exit 2
fi
if [ "$use_osu" = yes ]; then
    if ! find_osu "$osu"; then
        echo "  or --no-osu to run only the project's own programs" >&2
        exit 2
    fi
    [ "$own" = yes ] || rust=no
elif [ "$own" = no ]; then
    usage_error "--osu-only and --no-osu leave nothing to run"
fi
if [ -z "$rounds" ]; then
    if [ -n "$quick" ]; then rounds=2; else rounds=3; fi
fi
case $rounds in
    ''|*[!0-9]*|0) usage_error "--rounds needs a positive integer, not '$rounds'" ;;
esac
for np in $pe_counts; do
    case $np in
        2|4) ;;
        *) usage_error "--pes takes 2 and 4 (OSU's put and get need 2), not '$np'" ;;
    esac
done
if [ -n "$baseline" ] && [ ! -r "$baseline" ]; then
    usage_error "--baseline $baseline: no such file"
fi
limit=${BENCH_TIMEOUT:-600}
if [ -n "$quick" ]; then osu_limit=${OSU_TIMEOUT:-120}; else osu_limit=${OSU_TIMEOUT:-300}; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ucx.XXXXXX")
child=

# stop_tree PID: SIGTERM to PID and every process below it (an interrupted run's job; the
# launchers' own timeouts run in process groups of their own, out of reach of the tty).
stop_tree() {
    for s_pid in $(ps -o pid= --ppid "$1" 2>/dev/null); do stop_tree "$s_pid"; done
    kill -TERM "$1" 2>/dev/null || true
}
on_exit() {
    if [ -n "$child" ]; then
        stop_tree "$child"
        wait "$child" 2>/dev/null || true
    fi
    if [ "$keep" = no ]; then rm -rf "$tmp"; fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
results=${out:-${TMPDIR:-/tmp}/bench-ucx-results.jsonl}
: > "$results"
started=$(date +%s)

build_release rshmem-capi oshrun rshmem-bench
install_rshmem "$tmp/rshmem"
rs=$tmp/rshmem/bin

if [ "$oshmem" = yes ] && [ "$network" = ucx ] && ! find_oshmem "$tmp"; then
    warn "Open MPI's oshcc/oshrun not found ($ompi_cc, $ompi_run); skipping OSHMEM"
    oshmem=no
fi
# spml ucx for OSHMEM's RMA and AMOs; pml ucx for the MPI layer under its collectives
# (scoll mpi), which refuses TCP-only or shared-memory-only UCX unless
# opal_common_ucx_tls/devices allow any; osc ^rdma: Open MPI 4.1.4 (Debian 12) otherwise
# segfaults in shmem_finalize.
ompi_ucx="--mca spml ucx --mca pml ucx --mca opal_common_ucx_tls any --mca opal_common_ucx_devices any --mca osc ^rdma"
if [ "$(id -u)" = 0 ]; then ompi_ucx="$ompi_ucx --allow-run-as-root"; fi

# run NAME CMD...: runs CMD (bounded), stdout to $tmp/NAME.out, stderr to $tmp/NAME.err;
# shows the table lines; on failure says so and returns 1.
run() {
    name=$1
    shift
    echo "   $*" > "$tmp/$name.cmd"
    if timeout -k 10 "$limit" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; then
        grep -v '^{' "$tmp/$name.out" || true
        return 0
    fi
    echo "bench-ucx.sh: $name failed (status $?): $*" >&2
    tail -n 15 "$tmp/$name.err" >&2
    return 1
}

# own_programs: the project's C programs and rshmem-bench, printed as one table.
own_programs() {
"$rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/bench.rshmem" "$root/bench/c/shmem_bench.c"
"$rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/coll.rshmem" "$root/bench/c/shmem_coll.c"
load0=$(loadavg)
# rshmem: C programs under both transports.
for cfg in shm "$network"; do
    case $cfg in
        ucx) set -- env SHMEM_TRANSPORT=ucx UCX_TLS=tcp ;;
        ofi) set -- env SHMEM_TRANSPORT=ofi FI_PROVIDER=tcp ;;
        *) set -- env -u SHMEM_TRANSPORT ;;
    esac
    echo "== rshmem, transport $cfg" >&2
    if run "c-rs-$cfg" "$@" "$rs/oshrun" -np 2 "$tmp/bench.rshmem" $quick; then
        if [ "$cfg" != shm ] && grep -q '"bench":"peer_mapped".*"value":1' "$tmp/c-rs-$cfg.out"; then
            echo "bench-ucx.sh: under SHMEM_TRANSPORT=$cfg shmem_ptr still maps the peer: this rshmem has no $cfg transport; dropping the rshmem $cfg column" >&2
            continue
        fi
        collect "rshmem-$cfg" "$tmp/c-rs-$cfg.out"
    else
        continue
    fi
    for np in 2 4; do
        run "coll-rs-$cfg-$np" "$@" "$rs/oshrun" -np $np "$tmp/coll.rshmem" $quick &&
            collect "rshmem-$cfg" "$tmp/coll-rs-$cfg-$np.out"
    done
    if [ "$rust" = yes ]; then
        run "rust-$cfg" "$@" "$rs/oshrun" -np 2 "$target/release/rshmem-bench" pe --quick &&
            grep '^{' "$tmp/rust-$cfg.out" | sed 's/}$/,"impl":"rust"}/' > "$tmp/rust-$cfg.json" &&
            collect "rust-$cfg" "$tmp/rust-$cfg.json"
        run "rust-coll-$cfg" "$@" "$rs/oshrun" -np 2 "$target/release/rshmem-bench" coll --quick \
            --max-size 65536 > /dev/null &&
            grep '^{' "$tmp/rust-coll-$cfg.out" | sed 's/}$/,"impl":"rust"}/' > "$tmp/rust-coll-$cfg.json" &&
            collect "rust-$cfg" "$tmp/rust-coll-$cfg.json"
    fi
done

if [ "$oshmem" = yes ] && [ "$network" = ofi ]; then
    echo "== Sandia OpenSHMEM over libfabric, FI_PROVIDER=tcp ($sos)" >&2
    "$sos/bin/oshcc" -O2 -std=c11 -Wall -DBENCH_IMPL='"sos"' -o "$tmp/bench.sos" "$root/bench/c/shmem_bench.c"
    "$sos/bin/oshcc" -O2 -std=c11 -Wall -DBENCH_IMPL='"sos"' -o "$tmp/coll.sos" "$root/bench/c/shmem_coll.c"
    if run c-sos env FI_PROVIDER=tcp mpiexec.hydra -n 2 "$tmp/bench.sos" $quick; then
        collect sos-ofi "$tmp/c-sos.out"
        for np in 2 4; do
            run "coll-sos-$np" env FI_PROVIDER=tcp mpiexec.hydra -n $np "$tmp/coll.sos" $quick &&
                collect sos-ofi "$tmp/coll-sos-$np.out"
        done
    fi
elif [ "$oshmem" = yes ]; then
    echo "== Open MPI's OSHMEM over UCX, UCX_TLS=tcp ($("$ompi_run" --version 2>/dev/null | head -n 1))" >&2
    "$ompi_cc" -O2 -std=c11 -Wall -o "$tmp/bench.oshmem" "$root/bench/c/shmem_bench.c"
    "$ompi_cc" -O2 -std=c11 -Wall -o "$tmp/coll.oshmem" "$root/bench/c/shmem_coll.c"
    # shellcheck disable=SC2086
    set -- $ompi_ucx -x UCX_TLS=tcp
    # shellcheck disable=SC2086
    if run c-osh "$ompi_run" -np 2 "$@" --mca spml_base_verbose 10 --mca pml_base_verbose 10 \
        ${OMPI_OSHRUN_ARGS:-} "$tmp/bench.oshmem" $quick; then
        n_spml=$(grep -c 'mca_spml_base_select() select: component ucx selected' "$tmp/c-osh.err" || true)
        n_pml=$(grep -c '\] select: component ucx selected' "$tmp/c-osh.err" || true)
        echo "   OSHMEM: spml ucx selected on $n_spml of 2 PEs, pml ucx on $n_pml" >&2
        if [ "$n_spml" -lt 2 ] || [ "$n_pml" -lt 2 ]; then
            echo "bench-ucx.sh: OSHMEM did not report spml ucx and pml ucx on both PEs (--keep, then see $tmp/c-osh.err)" >&2
        fi
        collect oshmem-ucx "$tmp/c-osh.out"
        for np in 2 4; do
            if [ "$np" -gt "$cores" ]; then over=--oversubscribe; else over=; fi
            # shellcheck disable=SC2086
            run "coll-osh-$np" "$ompi_run" -np $np $over "$@" ${OMPI_OSHRUN_ARGS:-} \
                "$tmp/coll.oshmem" $quick && collect oshmem-ucx "$tmp/coll-osh-$np.out"
        done
    fi
fi

echo
echo "load average (1, 5, 15 min) before the runs: $load0; after: $(loadavg) ($cores cores)"
if [ "$network" = ofi ]; then peer=SOS peer_cfg=sos-ofi; else peer=OSHMEM peer_cfg=oshmem-ucx; fi
BENCH_NET=$network BENCH_PEER=$peer BENCH_PEER_CFG=$peer_cfg python3 - "$results" <<'EOF'
import json, os, sys
NET, PEER, PEER_CFG = os.environ["BENCH_NET"], os.environ["BENCH_PEER"], os.environ["BENCH_PEER_CFG"]
NET_NAME = {"ucx": "UCX", "ofi": "libfabric"}[NET]
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
fig = {}
for r in rows:
    fig[(r["config"], r["bench"], r.get("size"), r["metric"], r.get("mem", "heap"), r["pes"])] = r["value"]
CFG = ["rshmem-shm", f"rshmem-{NET}", PEER_CFG]
slower = []
def get(cfg, bench, size, metric, pes=2, mem="heap"):
    return fig.get((cfg, bench, size, metric, mem, pes))
def show(v, kind):
    if v is None: return "-"
    if kind == "lat": return f"{v / 1e3:.2f}us" if v >= 1e4 else f"{v:.1f}ns"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"
def ratio(osh, rs, kind, label):
    # The peer's time per operation / rshmem-over-the-network's: > 1 means rshmem is faster.
    if osh is None or rs is None or osh <= 0 or rs <= 0: return "-"
    q = osh / rs if kind == "lat" else rs / osh
    if q < 1: slower.append((label, q))
    return f"{q:.2f}" + (" <" if q < 1 else "")
fmt = "{:<34} {:>11} {:>11} {:>11} {:>9}"
PEER_COL = f"{PEER} {NET}"
RATIO_COL = f"{PEER[:3]}/rs-{NET}"
def head(title, cols=("rshmem shm", f"rshmem {NET}", PEER_COL, RATIO_COL)):
    print()
    print(title)
    print(fmt.format("figure", *cols))
def row(label, vals, kind, tag=None):
    print(fmt.format(label, *(show(v, kind) for v in vals),
                     ratio(vals[2], vals[1], kind, tag or label)))

print()
if NET == "ucx":
    print("rshmem over shared memory / rshmem over UCX (SHMEM_TRANSPORT=ucx UCX_TLS=tcp) / Open MPI")
    print("OSHMEM over UCX (spml ucx, pml ucx, UCX_TLS=tcp), one run on this host.")
else:
    print("rshmem over shared memory / rshmem over libfabric (SHMEM_TRANSPORT=ofi FI_PROVIDER=tcp) /")
    print("Sandia OpenSHMEM over libfabric (FI_PROVIDER=tcp, mpiexec.hydra), one run on this host.")
print(f"ns or us per operation (median of batches), Mmsg/s, GB/s. {RATIO_COL} = {PEER}'s time per")
print(f"operation / rshmem-over-{NET_NAME}'s: above 1 rshmem is faster; '<' marks figures where it is slower.")
for cfg in CFG[1:]:
    m = get(cfg, "peer_mapped", 0, "mapped")
    if m is not None:
        print(f"{cfg}: shmem_ptr to the peer {'maps it (shared memory!)' if m else 'is NULL (network path)'}")

head("C, 2 PEs, PE 0 -> PE 1, heap (bench/c/shmem_bench.c); non-fetching batches end with quiet")
lat = ["put", "put_quiet", "get", "long_p", "long_g"] + ["amo_" + o for o in [
    "fetch", "set", "swap", "compare_swap", "fetch_inc", "inc", "fetch_add", "add",
    "fetch_and", "and", "fetch_or", "or", "fetch_xor", "xor"]]
for b in lat:
    row(b, [get(c, b, 8, "latency_median") for c in CFG], "lat")
for b in ["put", "get", "amo_fetch_add"]:
    row(b + " (static)", [get(c, b, 8, "latency_median", mem="static") for c in CFG], "lat")
for b in ["put_msgrate", "put_nbi_msgrate"]:
    row(b + " Mmsg/s", [get(c, b, 8, "rate") for c in CFG], "rate")
for b in ["put_bw", "get_bw"]:
    for n in [8, 4096, 65536, 1 << 20]:
        row(f"{b} {n} B GB/s", [get(c, b, n, "bandwidth") for c in CFG], "bw")

head("C collectives, all PEs (bench/c/shmem_coll.c), slowest PE per batch")
for pes in [2, 4]:
    for b, n in [("barrier_all", None), ("broadcast64_barrier", 8), ("broadcast64_barrier", 65536),
                 ("reduce_sum_to_all", 8), ("reduce_sum_to_all", 65536),
                 ("team_broadcastmem", 8), ("team_broadcastmem", 65536),
                 ("team_sum_reduce", 8), ("team_sum_reduce", 65536)]:
        label = f"{b}{'' if n is None else ' ' + str(n) + ' B'} {pes}PE"
        vals = [get(c, b, n, "latency_median", pes) for c in CFG]
        if any(v is not None for v in vals):
            row(label, vals, "lat")

RS = ["rust-shm", f"rust-{NET}"]
if any(r["config"] in RS for r in rows):
    head(f"Rust API, rshmem-bench pe --quick, 2 PEs ({PEER_COL}: the C figure of the same operation)",
         ("Rust shm", f"Rust {NET}", PEER_COL, RATIO_COL))
    def rg(cfg, b, n, metric):
        return fig.get((cfg, b, n, metric, "heap", 2))
    items = [("put 8 B", "put", 8, "latency_median", "lat", ("put", 8, "latency_median", 2)),
             ("get 8 B", "get", 8, "latency_median", "lat", ("get", 8, "latency_median", 2))]
    for n in [4096, 65536, 1 << 20]:
        items.append((f"put {n} B GB/s", "put", n, "bandwidth", "bw", ("put_bw", n, "bandwidth", 2)))
        items.append((f"get {n} B GB/s", "get", n, "bandwidth", "bw", ("get_bw", n, "bandwidth", 2)))
    items += [("put_msgrate Mmsg/s", "put_msgrate", 8, "rate", "rate", ("put_msgrate", 8, "rate", 2)),
              ("put_nbi_msgrate Mmsg/s", "put_nbi_msgrate", 8, "rate", "rate",
               ("put_nbi_msgrate", 8, "rate", 2))]
    for o in ["fetch", "set", "swap", "compare_swap", "fetch_inc", "inc", "fetch_add", "add",
              "fetch_and", "and", "fetch_or", "or", "fetch_xor", "xor"]:
        items.append(("amo_" + o, "amo_" + o, 8, "latency_median", "lat",
                      ("amo_" + o, 8, "latency_median", 2)))
    items += [("pingpong_put (rtt)", "pingpong_put", None, "rtt_median", "lat", None),
              ("pingpong_put_fence_set (rtt)", "pingpong_put_fence_set", None, "rtt_median", "lat", None),
              ("pingpong_put_signal (rtt)", "pingpong_put_signal", None, "rtt_median", "lat", None),
              ("barrier_all", "barrier_all", None, "latency_median", "lat",
               ("barrier_all", None, "latency_median", 2))]
    for label, b, n, metric, kind, osh in items:
        o = None if osh is None else get(PEER_CFG, osh[0], osh[1], osh[2], osh[3])
        row(label, [rg("rust-shm", b, n, metric), rg(RS[1], b, n, metric), o], kind,
            tag="Rust " + label)
    print("Rust put/AMO batches: as in rshmem-bench pe (a put batch ends with quiet; every Rust")
    print("AMO is the fetching core call, even for the non-fetching names).")

    head("Rust API collectives, rshmem-bench coll --quick, 2 PEs, default algorithms and each\n"
         f"reduction algorithm forced ({PEER_COL}: the C active-set figure where one exists)",
         ("Rust shm", f"Rust {NET}", PEER_COL, RATIO_COL))
    citems = [("team_sync(WORLD)", "team_sync_world", None, None),
              ("barrier_all", "barrier_all_coll", None, ("barrier_all", None)),
              ("broadcastmem 8 B", "broadcast", 8, None),
              ("broadcastmem 65536 B", "broadcast", 65536, None),
              ("int64_sum_reduce 8 B", "reduce_sum_i64", 8, ("reduce_sum_to_all", 8)),
              ("int64_sum_reduce 65536 B", "reduce_sum_i64", 65536, ("reduce_sum_to_all", 65536))]
    for alg in ["shm", "rd", "ring", "linear"]:
        for n in [8, 65536]:
            citems.append((f"f64 sum, {alg} forced, {n} B", f"reduce_sum_f64_{alg}", n, None))
    for label, b, n, osh in citems:
        o = None if osh is None else get(PEER_CFG, osh[0], osh[1], "latency_median", 2)
        row(label, [rg("rust-shm", b, n, "latency_median"), rg(RS[1], b, n, "latency_median"), o],
            "lat", tag="Rust " + label)

print()
if slower:
    print(f"rshmem over {NET_NAME} is slower than {PEER} over {NET_NAME} in: " +
          ", ".join(f"{l} ({q:.2f})" for l, q in slower))
elif any(r["config"] == CFG[1] for r in rows) and any(r["config"] == PEER_CFG for r in rows):
    print(f"rshmem over {NET_NAME} is nowhere slower than {PEER} over {NET_NAME}.")
else:
    print(f"(no rshmem-over-{NET_NAME} or no {PEER} figures in this run: nothing to compare)")
EOF
}

# osu_build CC DIR: builds the OSU programs with CC into DIR (the log in DIR/build.log).
osu_build() {
    mkdir -p "$2"
    {
        for f in osu_util osu_util_pgas; do
            # shellcheck disable=SC2086
            "$1" $osu_cflags -I"$osu/c/util" -c -o "$2/$f.o" "$osu/c/util/$f.c" || return 1
        done
        "$1" -O2 -c -o "$2/ddt_stub.o" "$tmp/ddt_stub.c" || return 1
        for p in $osu_programs; do
            # shellcheck disable=SC2086
            "$1" $osu_cflags -I"$osu/c/util" -o "$2/osu_oshm_$p" "$osu_pgm/osu_oshm_$p.c" \
                "$2/osu_util.o" "$2/osu_util_pgas.o" "$2/ddt_stub.o" -lm || return 1
        done
    } > "$2/build.log" 2>&1
}

# osu_parse PROGRAM < OUTPUT: OSU's figures as the tails of JSON lines. Header lines start
# with '#'; a figure line is SIZE VALUE..., or OPERATION RATE LATENCY (atomics), or LATENCY
# alone (barrier); anything else (a library's messages) is skipped.
osu_parse() {
    awk -v prog="$1" '
    function num(s) { return s ~ /^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ }
    function fig(name, size, metric, value) {
        printf "\"figure\":\"%s\",\"size\":%s,\"metric\":\"%s\",\"value\":%s}\n", name, size, metric, value
    }
    /^[ \t]*#/ || NF == 0 { next }
    prog == "atomics" {
        if (NF == 3 && $1 ~ /^shmem_[a-z_]+$/ && num($2) && num($3)) {
            fig($1, "null", "rate_mops", $2)
            fig($1, "null", "latency_us", $3)
        }
        next
    }
    prog == "barrier" { if (NF == 1 && num($1)) fig("barrier", "null", "latency_us", $1); next }
    NF >= 2 && $1 ~ /^[0-9]+$/ && num($2) {
        fig(prog, $1, prog == "put_mr" ? "msg_rate" : "latency_us", $2)
    }'
}

# osu_run ROUND CONFIG TLS PES PROGRAM CMD...: runs one OSU program (bounded) and appends its
# figures to the results; a failed run also leaves a "failed" line (figures it printed
# before failing are kept), and one that timed out is not run again in later rounds.
osu_run() {
    o_round=$1 o_cfg=$2 o_tls=$3 o_np=$4 o_prog=$5
    shift 5
    o_key=$o_cfg-$(echo "${o_tls:-default}" | tr ',' '+')-$o_np-$o_prog
    [ ! -e "$tmp/skip.$o_key" ] && [ ! -e "$tmp/skip.$o_cfg" ] || return 0
    o_file=$tmp/osu.$o_key.r$o_round
    echo "   $*" > "$o_file.cmd"
    o_status=0
    case $o_cfg in
        # simhosts.sh bounds its job itself and must outlive it to remove the namespaces.
        *-hosts) "$@" > "$o_file.out" 2> "$o_file.err" & ;;
        *) timeout -k 10 "$osu_limit" "$@" > "$o_file.out" 2> "$o_file.err" & ;;
    esac
    child=$!
    wait "$child" || o_status=$?
    child=
    o_head="{\"suite\":\"osu\",\"round\":$o_round,\"config\":\"$o_cfg\",\"tls\":\"$o_tls\",\"pes\":$o_np,\"program\":\"osu_oshm_$o_prog\""
    o_n=$(osu_parse "$o_prog" < "$o_file.out" | sed "s/^/$o_head,/" | tee -a "$results" | wc -l)
    if [ "$o_status" = 0 ] && [ "$o_n" -gt 0 ]; then
        case $o_cfg in
            oshmem-ucx)
                # Verbose MCA output: both components on every PE, or the run did not cross UCX.
                o_spml=$(grep -c 'mca_spml_base_select() select: component ucx selected' "$o_file.err" || true)
                o_pml=$(grep -c '\] select: component ucx selected' "$o_file.err" || true)
                if [ "$o_spml" -lt "$o_np" ] || [ "$o_pml" -lt "$o_np" ]; then
                    echo "bench-ucx.sh: $o_key: spml ucx selected on $o_spml, pml ucx on $o_pml of $o_np PEs" >&2
                    echo "$o_head,\"failed\":\"spml ucx on $o_spml, pml ucx on $o_pml PEs\"}" >> "$results"
                fi ;;
        esac
        return 0
    fi
    if [ "$o_status" = 0 ]; then o_status='"no figures"'; fi
    echo "bench-ucx.sh: $o_key, round $o_round failed (status $o_status, $o_n figures): $*" >&2
    tail -n 5 "$o_file.err" >&2
    echo "$o_head,\"failed\":$o_status}" >> "$results"
    case $o_status-$o_cfg in
        # A job across the simulated hosts that times out costs the bound every time.
        124-*-hosts|137-*-hosts) touch "$tmp/skip.$o_cfg"
            echo "   (timed out after $osu_limit s: no more $o_cfg runs)" >&2 ;;
        124-*|137-*) touch "$tmp/skip.$o_key"; echo "   (timed out after $osu_limit s: not run again)" >&2 ;;
    esac
}

# osu_args PROGRAM: its arguments (the point-to-point programs take only heap|global).
osu_args() {
    case $1 in
        put|get|put_mr|atomics) echo heap ;;
        broadcast|reduce) if [ -n "$quick" ]; then echo "-i 100"; fi ;;
        *) ;;
    esac
}

# load_record WHEN: the load average as a JSON line.
load_record() {
    echo "{\"suite\":\"osu\",\"event\":\"load\",\"when\":\"$1\",\"loadavg\":\"$(loadavg)\",\"time\":$(date +%s)}" >> "$results"
}

osu_benchmarks() {
    osu_programs=$programs
    for p in $osu_programs; do
        [ -f "$osu/c/openshmem/osu_oshm_$p.c" ] || { echo "bench-ucx.sh: --programs: no osu_oshm_$p.c in $osu/c/openshmem" >&2; exit 2; }
    done
    osu_cflags="-O2 -DOSHM_1_3 -DFLOAT_PRECISION=3"
    echo 'void omb_ddt_process_options(char *optarg) { (void)optarg; }' > "$tmp/ddt_stub.c"
    osu_pgm=$osu/c/openshmem
    if [ -n "$quick" ]; then
        # put and get have fixed counts (10000 + 1000 warm-up up to 8 KiB): a tenth of them.
        mkdir -p "$tmp/osu-quick"
        cp "$osu_pgm"/osu_oshm_*.c "$tmp/osu-quick/"
        for p in put get; do
            sed -e 's/^int skip = 1000;/int skip = 100;/' -e 's/^int loop = 10000;/int loop = 1000;/' \
                "$osu_pgm/osu_oshm_$p.c" > "$tmp/osu-quick/osu_oshm_$p.c"
            grep -q '^int loop = 1000;' "$tmp/osu-quick/osu_oshm_$p.c" ||
                echo "bench-ucx.sh: --quick: osu_oshm_$p.c has no 'int loop = 10000;': full counts" >&2
        done
        # put_mr goes to 4 MiB (50 puts a size, a 200 MiB buffer touched every size): to 1 MiB.
        sed 's/size <= MAX_MESSAGE_SIZE; size <<= 1/size <= (1 << 20); size <<= 1/' \
            "$osu_pgm/osu_oshm_put_mr.c" > "$tmp/osu-quick/osu_oshm_put_mr.c"
        osu_pgm=$tmp/osu-quick
    fi
    omb=$(sed -n 's/^AC_INIT(\[OSU-Micro-Benchmarks\], *\[\([^]]*\)\].*/\1/p' "$osu/configure.ac" 2>/dev/null || true)
    echo "== building the OSU OpenSHMEM programs (${omb:+OMB $omb, }$osu)" >&2
    if ! osu_build "$rs/oshcc" "$tmp/osu-rshmem"; then
        echo "bench-ucx.sh: building the OSU programs with rshmem's oshcc failed:" >&2
        tail -n 20 "$tmp/osu-rshmem/build.log" >&2
        exit 1
    fi
    if [ "$oshmem" = yes ] && [ "$network" = ucx ]; then
        case $("$ompi_run" --version 2>/dev/null | head -n 1) in
            *" 4.1."[0-4]|*" 4.0."*|*" 3."*)
                # Open MPI before 4.1.5 writes 8 bytes into shmem_int_cswap's 4-byte result
                # over UCX (ompi#11257): the stack protector aborts the program. Its build
                # leaves that one figure out.
                mkdir -p "$tmp/osu-oshmem-src"
                cp "$osu_pgm"/osu_oshm_*.c "$tmp/osu-oshmem-src/"
                sed '/^ *benchmark_cswap(v, msg_buffer, OSHM_LOOP_ATOMIC);/d' "$osu_pgm/osu_oshm_atomics.c" \
                    > "$tmp/osu-oshmem-src/osu_oshm_atomics.c"
                osu_pgm=$tmp/osu-oshmem-src
                echo "   $("$ompi_run" --version | head -n 1): no shmem_int_cswap figure for OSHMEM (ompi#11257)" >&2 ;;
        esac
    fi
    if [ "$network" = ofi ]; then peer_cc=$sos/bin/oshcc peer_dir=$tmp/osu-sos; else peer_cc=$ompi_cc peer_dir=$tmp/osu-oshmem; fi
    if [ "$oshmem" = yes ] && ! osu_build "$peer_cc" "$peer_dir"; then
        echo "bench-ucx.sh: building the OSU programs with $peer_cc failed:" >&2
        tail -n 20 "$peer_dir/build.log" >&2
        exit 1
    fi
    sim=$root/scripts/simhosts.sh
    if [ "$hosts" = yes ]; then
        # A trivial job tells whether this machine permits simulated hosts at all.
        h_status=0
        timeout -k 10 60 bash "$sim" run --hosts 2 --ppn 1 --timeout 50 -- true > "$tmp/simhosts-probe.log" 2>&1 || h_status=$?
        if [ "$h_status" != 0 ]; then
            echo "bench-ucx.sh: no runs across simulated hosts (status $h_status): $(tail -n 1 "$tmp/simhosts-probe.log")" >&2
            hosts=no
        fi
    fi
    {
        printf '{"suite":"osu","event":"machine","cores":%s,"kernel":"%s","cpu":"%s",' "$cores" \
            "$(uname -r)" "$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1 | tr -cd '[:alnum:] @()._-')"
        if [ "$network" = ofi ]; then
            printf '"network":"ofi","libfabric":"%s","sos":"%s","providers":"%s",' \
                "$(fi_info --version 2>/dev/null | sed -n 's/^libfabric: *//p' | head -n 1)" \
                "$(if [ "$oshmem" = yes ]; then sed -n 's/^#define SHMEM_VENDOR_STRING *"\(.*\)"/\1/p' "$sos/include/shmem.h" | head -n 1; fi)" \
                "$providers"
        else
            printf '"network":"ucx","ucx":"%s","oshmem":"%s",' "$(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -n 1)" \
                "$(if [ "$oshmem" = yes ]; then "$ompi_run" --version 2>/dev/null | head -n 1; fi)"
        fi
        printf '"omb":"%s",' "${omb:-?}"
        printf '"rshmem":"%s","rounds":%s,"quick":%s,"hosts":%s,"date":"%s"}\n' \
            "$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo '?')" "$rounds" \
            "$(if [ -n "$quick" ]; then echo true; else echo false; fi)" \
            "$(if [ "$hosts" = yes ]; then echo true; else echo false; fi)" "$(date -u '+%Y-%m-%d %H:%M UTC')"
    } >> "$results"
    # One configuration's pair of runs, named by the loop's variables (round, np, p, args,
    # prs, pos, over, tls, prov, wait_env): rshmem first in odd rounds, the peer first in
    # even ones.
    in_turn() {
        if [ $((round % 2)) = 1 ]; then "$1"; "$2"; else "$2"; "$1"; fi
    }
    osu_rs_ofi() {
        # shellcheck disable=SC2086
        osu_run "$round" rshmem-ofi "$prov" "$np" "$p" env SHMEM_TRANSPORT=ofi FI_PROVIDER="$prov" \
            $wait_env "$rs/oshrun" -np "$np" "$prs" $args
    }
    osu_peer_ofi() {
        [ "$oshmem" = yes ] || return 0
        # shellcheck disable=SC2086
        osu_run "$round" sos-ofi "$prov" "$np" "$p" env FI_PROVIDER="$prov" $wait_env \
            mpiexec.hydra -n "$np" "$pos" $args
    }
    osu_rs_ucx() {
        # shellcheck disable=SC2086
        osu_run "$round" rshmem-ucx "$tls" "$np" "$p" env SHMEM_TRANSPORT=ucx UCX_TLS="$tls" \
            "$rs/oshrun" -np "$np" "$prs" $args
    }
    osu_peer_ucx() {
        [ "$oshmem" = yes ] || return 0
        # shellcheck disable=SC2086
        osu_run "$round" oshmem-ucx "$tls" "$np" "$p" "$ompi_run" -np "$np" $over $ompi_ucx \
            -x UCX_TLS="$tls" --mca spml_base_verbose 10 --mca pml_base_verbose 10 \
            ${OMPI_OSHRUN_ARGS:-} "$pos" $args
    }
    osu_rs_ofi_hosts() {
        # shellcheck disable=SC2086
        osu_run "$round" rshmem-ofi-hosts tcp "$np" "$p" bash "$sim" run --hosts 2 --ppn $((np / 2)) \
            --env SHMEM_TRANSPORT=auto --env SHMEM_NETWORK=ofi --env FI_PROVIDER=tcp \
            --timeout "$osu_limit" -- "$prs" $args
    }
    osu_peer_ofi_hosts() {
        [ "$oshmem" = yes ] || return 0
        # shellcheck disable=SC2086
        osu_run "$round" sos-hosts tcp "$np" "$p" bash "$sim" run --hosts 2 --ppn $((np / 2)) \
            --env FI_PROVIDER=tcp --timeout "$osu_limit" -- "$pos" $args
    }
    osu_rs_hosts() {
        # shellcheck disable=SC2086
        osu_run "$round" rshmem-hosts tcp "$np" "$p" bash "$sim" run --hosts 2 --ppn $((np / 2)) \
            --timeout "$osu_limit" -- "$prs" $args
    }
    osu_peer_hosts() {
        [ "$oshmem" = yes ] || return 0
        # shellcheck disable=SC2086
        osu_run "$round" oshmem-hosts tcp "$np" "$p" env SIMHOSTS_MPIRUN_ARGS="$ompi_ucx --oversubscribe" \
            bash "$sim" run --launcher openmpi --hosts 2 --ppn $((np / 2)) --timeout "$osu_limit" \
            -- "$pos" $args
    }
    load_record start
    o_t0=$(date +%s)
    round=1
    while [ "$round" -le "$rounds" ]; do
        echo "== OSU round $round of $rounds ($(loadavg) load)" >&2
        for np in $pe_counts; do
            if [ "$np" -gt "$cores" ]; then over=--oversubscribe; else over=; fi
            for p in $osu_programs; do
                case $np-$p in 4-put|4-get) continue ;; esac
                args=$(osu_args "$p")
                echo "   $np PEs: osu_oshm_$p" >&2
                prs=$tmp/osu-rshmem/osu_oshm_$p
                pos=$peer_dir/osu_oshm_$p
                # shellcheck disable=SC2086
                osu_run "$round" rshmem-shm "" "$np" "$p" env -u SHMEM_TRANSPORT "$rs/oshrun" -np "$np" "$prs" $args
                if [ "$network" = ofi ]; then
                    for prov in $providers; do
                        if [ "$prov" = sockets ]; then wait_env=FI_SOCKETS_PE_WAITTIME=0; else wait_env=; fi
                        in_turn osu_rs_ofi osu_peer_ofi
                    done
                fi
                for tls in $(if [ "$network" = ucx ]; then echo tcp sm,self; fi); do
                    in_turn osu_rs_ucx osu_peer_ucx
                done
                if [ "$hosts" = yes ] && [ "$network" = ofi ]; then
                    in_turn osu_rs_ofi_hosts osu_peer_ofi_hosts
                elif [ "$hosts" = yes ]; then
                    in_turn osu_rs_hosts osu_peer_hosts
                fi
            done
        done
        round=$((round + 1))
    done
    load_record end
    echo "== OSU programs: $(( $(date +%s) - o_t0 )) s for $rounds round(s)" >&2
    set -- "$results"
    if [ -n "$md" ]; then set -- "$@" --md "$md"; fi
    if [ -n "$baseline" ]; then set -- "$@" --baseline "$baseline"; fi
    python3 "$here/osu-table.py" "$@"
}

if [ "$own" = yes ]; then own_programs; fi
if [ "$use_osu" = yes ]; then osu_benchmarks; fi
echo "raw figures (JSON lines): $results ($(( $(date +%s) - started )) s in all)" >&2
if [ "$keep" = yes ]; then echo "raw output kept in $tmp" >&2; fi
