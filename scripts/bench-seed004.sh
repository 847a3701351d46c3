#!/bin/sh
# bench-seed004.sh: seed 004's figures in one run, beside Open MPI's OSHMEM.
#
#   scripts/bench-seed004.sh [--quick] [--pes "2 4 8"] [--load N] [--no-oshmem] [--keep]
#
# 1. bench/c/shmem_coll.c --sweep on rshmem and on OSHMEM at each PE count: the deprecated
#    active-set broadcast (+ barrier_all) and sum reduction from 8 B to 1 MiB, and on rshmem
#    the team forms of the same size; ratios deprecated/team (target <= 1.2) and
#    OSHMEM/rshmem (> 1: rshmem faster).
# 2. bench/c/shmem_seed004.c on rshmem at each PE count: active-set creation cost by
#    constructor against a team split, and the COMB overlap of 1 MiB non-blocking
#    collectives (computing, and with the cores left idle).
# --load N runs N busy processes (yes > /dev/null) beside every job: the loaded machine
# of issue 13 section 1b. PE counts above the cores oversubscribe (OSHMEM: --oversubscribe).
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$here")
quick=
pes="2 4 8"
load=0
oshmem=yes
keep=no
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=--quick ;;
        --pes) shift; pes=$1 ;;
        --load) shift; load=$1 ;;
        --no-oshmem) oshmem=no ;;
        --keep) keep=yes ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "bench-seed004.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
target=${CARGO_TARGET_DIR:-$root/target}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-seed004.XXXXXX")
loaders=
cleanup() {
    for p in $loaders; do kill "$p" 2> /dev/null || true; done
    if [ "$keep" = no ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
results=$tmp/results.jsonl
: > "$results"

echo "== building rshmem (release) into $target" >&2
(cd "$root" && CARGO_TARGET_DIR=$target cargo build --release -q -p rshmem-capi -p oshrun)
sh "$root/crates/rshmem-capi/scripts/install.sh" --prefix "$tmp/rshmem" --build-dir "$target/release" >&2
rs=$tmp/rshmem/bin
"$rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/coll.rshmem" "$root/bench/c/shmem_coll.c"
"$rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/seed004" "$root/bench/c/shmem_seed004.c"

ompi_cc=${OMPI_OSHCC:-/usr/bin/oshcc}
ompi_run=${OMPI_OSHRUN:-/usr/bin/oshrun}
if [ "$oshmem" = yes ] && { [ ! -x "$ompi_cc" ] || [ ! -x "$ompi_run" ]; }; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "== installing Open MPI (openmpi-bin libopenmpi-dev)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev \
            > "$tmp/apt.log" 2>&1 || echo "bench-seed004.sh: apt-get failed ($tmp/apt.log)" >&2
    fi
fi
if [ "$oshmem" = yes ] && [ -x "$ompi_cc" ] && [ -x "$ompi_run" ]; then
    "$ompi_cc" -O2 -std=c11 -Wall -o "$tmp/coll.oshmem" "$root/bench/c/shmem_coll.c"
else
    [ "$oshmem" = no ] || echo "bench-seed004.sh: Open MPI's OSHMEM not found; rshmem only" >&2
    oshmem=no
fi

i=0
while [ "$i" -lt "$load" ]; do
    yes > /dev/null &
    loaders="$loaders $!"
    i=$((i + 1))
done
[ "$load" = 0 ] || echo "== $load busy processes running beside every job" >&2

for n in $pes; do
    echo "== $n PEs: sweep on rshmem" >&2
    "$rs/oshrun" -np "$n" "$tmp/coll.rshmem" $quick --sweep > "$tmp/sweep.$n.out"
    grep '^{' "$tmp/sweep.$n.out" >> "$results"
    echo "== $n PEs: seed004 on rshmem" >&2
    "$rs/oshrun" -np "$n" "$tmp/seed004" $quick > "$tmp/seed004.$n.out"
    grep -v '^{' "$tmp/seed004.$n.out" >&2 || true
    grep '^{' "$tmp/seed004.$n.out" >> "$results"
    if [ "$oshmem" = yes ]; then
        echo "== $n PEs: sweep on OSHMEM" >&2
        set -- --mca osc ^rdma
        if [ "$(id -u)" = 0 ]; then set -- "$@" --allow-run-as-root; fi
        if [ "$n" -gt "$(nproc 2> /dev/null || echo 2)" ]; then set -- "$@" --oversubscribe; fi
        if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            "$ompi_run" -np "$n" "$@" "$tmp/coll.oshmem" $quick --sweep \
            > "$tmp/sweep.osh.$n.out" 2> "$tmp/sweep.osh.$n.err"; then
            grep '^{' "$tmp/sweep.osh.$n.out" >> "$results" || true
        else
            echo "bench-seed004.sh: OSHMEM run failed at $n PEs:" >&2
            tail -5 "$tmp/sweep.osh.$n.err" >&2
        fi
    fi
done

python3 - "$results" "$load" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
load = sys.argv[2]
v = {}
for r in rows:
    if r["metric"] == "latency_median":
        v[(r["impl"], r["bench"], r.get("size"), r["pes"])] = r["value"]
pes = sorted({r["pes"] for r in rows})
sizes = sorted({r["size"] for r in rows if r["bench"] == "reduce_sum_to_all" and r.get("size")})
def f(x):
    if x is None: return "-"
    return f"{x/1e3:.2f}us" if x >= 1e3 else f"{x:.0f}ns"
def q(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a/b:.2f}"
print()
print(f"Deprecated active-set collectives vs team collectives vs OSHMEM (C, median ns per call, slowest PE; load {load})")
print("dep/team: rshmem's active-set form over its team form (target <= 1.2); OSH/rs: OSHMEM's active-set form over rshmem's (> 1: rshmem faster)")
hdr = ("coll", "PEs", "size", "rs dep", "rs team", "dep/team", "OSHMEM", "OSH/rs")
fmt = "{:<10} {:>3} {:>8} {:>10} {:>10} {:>8} {:>10} {:>7}"
print(fmt.format(*hdr))
worst_dt, worst_osh = 0, 1e9
for coll, dep, team in (("broadcast", "broadcast64_barrier", "team_broadcastmem_barrier"),
                        ("reduce", "reduce_sum_to_all", "team_sum_reduce")):
    for n in pes:
        for s in sizes:
            d = v.get(("rshmem", dep, s, n)); t = v.get(("rshmem", team, s, n))
            o = v.get(("oshmem", dep, s, n))
            if d and t: worst_dt = max(worst_dt, d / t)
            if d and o: worst_osh = min(worst_osh, o / d)
            print(fmt.format(coll, n, s, f(d), f(t), q(d, t), f(o), q(o, d)))
print(f"worst dep/team: {worst_dt:.2f} (target <= 1.2); worst OSH/rs: {worst_osh if worst_osh < 1e9 else float('nan'):.2f} (target > 1)")
print()
print("Active-set creation + delete (ns, slowest PE) and COMB overlap of 1 MiB non-blocking collectives")
fmt2 = "{:>3} {:>9} {:>11} {:>8} {:>8} {:>10} {:>9} {:>9} {:>11} {:>10}"
print(fmt2.format("PEs", "strided", "log_strided", "custom", "generic", "team_split",
                  "ovl red", "ovl bcast", "ovl red idle", "ovl bc idle"))
ov = {(r["bench"], r["pes"]): r["value"] for r in rows if r["metric"] == "overlap"}
for n in pes:
    c = [v.get(("rshmem", f"aset_create_{k}", None, n)) for k in
         ("strided", "log_strided", "custom", "generic", "team_split")]
    o = [ov.get((b, n)) for b in ("overlap_reduce_nbe", "overlap_broadcast_nbe",
                                  "overlap_reduce_nbe_idle", "overlap_broadcast_nbe_idle")]
    print(fmt2.format(n, *[f(x) for x in c], *["-" if x is None else f"{x:.0f}%" for x in o]))
EOF
if [ "$keep" = yes ]; then echo "raw output and results.jsonl kept in $tmp" >&2; fi
