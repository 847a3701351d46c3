#!/bin/sh
# bench-ucx.sh: rshmem over shared memory, rshmem over UCX and Open MPI's OSHMEM over UCX,
# side by side from one run, all on this host.
#
#   scripts/bench-ucx.sh [--quick] [--no-oshmem] [--no-rust] [--keep] [--out FILE]
#
# Three configurations run the same C programs (bench/c/shmem_bench.c at 2 PEs: put/get
# latency, put message rate, every 64-bit AMO, put/get bandwidth 8 B-1 MiB;
# bench/c/shmem_coll.c at 2 and 4 PEs: barrier, broadcast and long sum reduction of 8 B and
# 64 KiB):
#   rshmem shm  rshmem's oshrun, default transport (node-local PEs use shared memory);
#   rshmem ucx  SHMEM_TRANSPORT=ucx UCX_TLS=tcp: every PE, local ones too, through UCX (UCP
#               over TCP loopback);
#   OSHMEM ucx  Open MPI's oshrun --mca spml ucx -x UCX_TLS=tcp, and --mca pml ucx with
#               opal_common_ucx_tls/devices=any, so that the MPI layer OSHMEM's collectives
#               use (scoll mpi) goes through UCX over TCP too instead of Open MPI's
#               shared-memory BTL. The script checks in the verbose MCA output that spml ucx
#               and pml ucx were selected.
# then rshmem-bench pe --quick and coll --quick --max-size 65536 (the Rust API, 2 PEs)
# under the default transport and under SHMEM_TRANSPORT=ucx UCX_TLS=tcp. Open MPI 4.1.4's
# OSHMEM has no team API, so the compared collectives are the active-set forms
# (shmem_broadcast64 + barrier_all, shmem_long_sum_to_all); rshmem's team forms are extra
# rows. Timing: medians of batches (see the C sources); with UCX over TCP an operation
# that needs the target (get, AMOs, put completion) takes 7-30 us, and figures move by 2x
# with other load on the machine: compare columns of one run, and look at the load average
# printed with the table.
#
# A configuration whose run fails (for example a build of rshmem without the UCX transport)
# leaves its column empty; a "rshmem ucx" run in which shmem_ptr still maps the peer did
# not go through UCX, and its column is dropped with a warning.
#
# Prints one table: figure | rshmem shm | rshmem ucx | OSHMEM ucx | OSHMEM/rs-ucx, the
# ratio being OSHMEM's time per operation over rshmem-over-UCX's (> 1: rshmem is faster),
# and lists the figures in which rshmem over UCX is slower than OSHMEM. Every raw figure
# is a JSON line (rshmem-bench's schema plus "impl", "config" = rshmem-shm / rshmem-ucx /
# oshmem-ucx / rust-shm / rust-ucx, and "mem" for the C RMA figures) in FILE (default
# ${TMPDIR:-/tmp}/bench-ucx-results.jsonl).
# --quick: fewer samples (10 s to 2 minutes in all on 2 cores, depending on load). Builds rshmem in release
# mode into CARGO_TARGET_DIR; installs openmpi-bin libopenmpi-dev with apt-get when missing
# and run as root (as scripts/bench-c.sh does); OMPI_OSHCC / OMPI_OSHRUN pick another Open
# MPI, OMPI_OSHRUN_ARGS adds oshrun flags. Each run is bounded by BENCH_TIMEOUT seconds
# (default 600).
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$here")
quick=
oshmem=yes
rust=yes
keep=no
out=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=--quick ;;
        --no-oshmem) oshmem=no ;;
        --no-rust) rust=no ;;
        --keep) keep=yes ;;
        --out) out=$2; shift ;;
        --out=*) out=${1#--out=} ;;
        -h|--help) sed -n '2,42p' "$0"; exit 0 ;;
        *) echo "bench-ucx.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
target=${CARGO_TARGET_DIR:-$root/target}
limit=${BENCH_TIMEOUT:-600}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ucx.XXXXXX")
if [ "$keep" = no ]; then trap 'rm -rf "$tmp"' EXIT; fi
results=${out:-${TMPDIR:-/tmp}/bench-ucx-results.jsonl}
: > "$results"
cores=$(nproc 2>/dev/null || echo 2)

echo "== building rshmem (release) into $target" >&2
(cd "$root" && CARGO_TARGET_DIR=$target cargo build --release -q -p rshmem-capi -p oshrun -p rshmem-bench)
sh "$root/crates/rshmem-capi/scripts/install.sh" --prefix "$tmp/rshmem" --build-dir "$target/release" >&2
rs=$tmp/rshmem/bin
"$rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/bench.rshmem" "$root/bench/c/shmem_bench.c"
"$rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/coll.rshmem" "$root/bench/c/shmem_coll.c"

# collect CONFIG FILE: appends FILE's JSON lines to the results, tagged with CONFIG.
collect() {
    grep '^{' "$2" | sed "s/}\$/,\"config\":\"$1\"}/" >> "$results" || true
}

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

load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
# rshmem: C programs under both transports.
for cfg in shm ucx; do
    if [ $cfg = ucx ]; then set -- env SHMEM_TRANSPORT=ucx UCX_TLS=tcp; else set -- env -u SHMEM_TRANSPORT; fi
    echo "== rshmem, transport $cfg" >&2
    if run "c-rs-$cfg" "$@" "$rs/oshrun" -np 2 "$tmp/bench.rshmem" $quick; then
        if [ $cfg = ucx ] && grep -q '"bench":"peer_mapped".*"value":1' "$tmp/c-rs-$cfg.out"; then
            echo "bench-ucx.sh: under SHMEM_TRANSPORT=ucx shmem_ptr still maps the peer: this rshmem has no UCX transport; dropping the rshmem ucx column" >&2
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

if [ "$oshmem" = yes ]; then
    ompi_cc=${OMPI_OSHCC:-/usr/bin/oshcc}
    ompi_run=${OMPI_OSHRUN:-/usr/bin/oshrun}
    if { [ ! -x "$ompi_cc" ] || [ ! -x "$ompi_run" ]; } && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "== installing Open MPI (openmpi-bin libopenmpi-dev)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev > "$tmp/apt.log" 2>&1 ||
            { apt-get update -q > /dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev > "$tmp/apt.log" 2>&1; } ||
            echo "bench-ucx.sh: apt-get install failed (see $tmp/apt.log)" >&2
    fi
    if [ -x "$ompi_cc" ] && [ -x "$ompi_run" ]; then
        echo "== Open MPI's OSHMEM over UCX, UCX_TLS=tcp ($("$ompi_run" --version 2>/dev/null | head -n 1))" >&2
        "$ompi_cc" -O2 -std=c11 -Wall -o "$tmp/bench.oshmem" "$root/bench/c/shmem_bench.c"
        "$ompi_cc" -O2 -std=c11 -Wall -o "$tmp/coll.oshmem" "$root/bench/c/shmem_coll.c"
        # --mca osc ^rdma: Open MPI 4.1.4 (Debian 12) otherwise segfaults in shmem_finalize.
        # pml ucx refuses TCP-only UCX unless opal_common_ucx_tls/devices allow any.
        set -- --mca spml ucx --mca pml ucx --mca opal_common_ucx_tls any \
            --mca opal_common_ucx_devices any --mca osc ^rdma -x UCX_TLS=tcp
        if [ "$(id -u)" = 0 ]; then set -- "$@" --allow-run-as-root; fi
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
    else
        echo "bench-ucx.sh: Open MPI's oshcc/oshrun not found ($ompi_cc, $ompi_run); skipping OSHMEM" >&2
    fi
fi

echo
echo "load average (1, 5, 15 min) before the runs: $load0; after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?') ($cores cores)"
python3 - "$results" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
fig = {}
for r in rows:
    fig[(r["config"], r["bench"], r.get("size"), r["metric"], r.get("mem", "heap"), r["pes"])] = r["value"]
CFG = ["rshmem-shm", "rshmem-ucx", "oshmem-ucx"]
slower = []
def get(cfg, bench, size, metric, pes=2, mem="heap"):
    return fig.get((cfg, bench, size, metric, mem, pes))
def show(v, kind):
    if v is None: return "-"
    if kind == "lat": return f"{v / 1e3:.2f}us" if v >= 1e4 else f"{v:.1f}ns"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"
def ratio(osh, rs, kind, label):
    # OSHMEM's time per operation / rshmem-over-UCX's: > 1 means rshmem is faster.
    if osh is None or rs is None or osh <= 0 or rs <= 0: return "-"
    q = osh / rs if kind == "lat" else rs / osh
    if q < 1: slower.append((label, q))
    return f"{q:.2f}" + (" <" if q < 1 else "")
fmt = "{:<34} {:>11} {:>11} {:>11} {:>9}"
def head(title, cols=("rshmem shm", "rshmem ucx", "OSHMEM ucx", "OSH/rs-ucx")):
    print()
    print(title)
    print(fmt.format("figure", *cols))
def row(label, vals, kind, tag=None):
    print(fmt.format(label, *(show(v, kind) for v in vals),
                     ratio(vals[2], vals[1], kind, tag or label)))

print()
print("rshmem over shared memory / rshmem over UCX (SHMEM_TRANSPORT=ucx UCX_TLS=tcp) / Open MPI")
print("OSHMEM over UCX (spml ucx, pml ucx, UCX_TLS=tcp), one run on this host. ns or us per")
print("operation (median of batches), Mmsg/s, GB/s. OSH/rs-ucx = OSHMEM's time per operation /")
print("rshmem-over-UCX's: above 1 rshmem is faster; '<' marks figures where it is slower.")
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

RS = ["rust-shm", "rust-ucx"]
if any(r["config"] in RS for r in rows):
    head("Rust API, rshmem-bench pe --quick, 2 PEs (OSHMEM ucx: the C figure of the same operation)",
         ("Rust shm", "Rust ucx", "OSHMEM ucx", "OSH/rs-ucx"))
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
        o = None if osh is None else get("oshmem-ucx", osh[0], osh[1], osh[2], osh[3])
        row(label, [rg("rust-shm", b, n, metric), rg("rust-ucx", b, n, metric), o], kind,
            tag="Rust " + label)
    print("Rust put/AMO batches: as in rshmem-bench pe (a put batch ends with quiet; every Rust")
    print("AMO is the fetching core call, even for the non-fetching names).")

    head("Rust API collectives, rshmem-bench coll --quick, 2 PEs, default algorithms and each\n"
         "reduction algorithm forced (OSHMEM ucx: the C active-set figure where one exists)",
         ("Rust shm", "Rust ucx", "OSHMEM ucx", "OSH/rs-ucx"))
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
        o = None if osh is None else get("oshmem-ucx", osh[0], osh[1], "latency_median", 2)
        row(label, [rg("rust-shm", b, n, "latency_median"), rg("rust-ucx", b, n, "latency_median"), o],
            "lat", tag="Rust " + label)

print()
if slower:
    print("rshmem over UCX is slower than OSHMEM over UCX in: " +
          ", ".join(f"{l} ({q:.2f})" for l, q in slower))
elif any(r["config"] == "rshmem-ucx" for r in rows) and any(r["config"] == "oshmem-ucx" for r in rows):
    print("rshmem over UCX is nowhere slower than OSHMEM over UCX.")
else:
    print("(no rshmem-over-UCX or no OSHMEM figures in this run: nothing to compare)")
EOF
echo "raw figures (JSON lines): $results" >&2
if [ "$keep" = yes ]; then echo "raw output kept in $tmp" >&2; fi
