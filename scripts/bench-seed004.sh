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
# The runs are `rshmem-bench report --only ccoll,seed004 --pes ...`'s (the same programs
# and figures as docs/results.md); this script adds the load and the tables below.
set -eu
me=bench-seed004.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"
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
        -h|--help) sed -n '2,/^set -eu$/p' "$0" | sed '$d'; exit 0 ;;
        *) usage_error "unknown argument $1" ;;
    esac
    shift
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-seed004.XXXXXX")
loaders=
cleanup() {
    for p in $loaders; do kill "$p" 2> /dev/null || true; done
    if [ "$keep" = no ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT

build_release rshmem-capi oshrun rshmem-bench

i=0
while [ "$i" -lt "$load" ]; do
    yes > /dev/null &
    loaders="$loaders $!"
    i=$((i + 1))
done
[ "$load" = 0 ] || say "$load busy processes running beside every job"

# shellcheck disable=SC2086
report "$oshmem" "$tmp/report" --only ccoll,seed004 --pes "$(echo $pes | tr ' ' ',')" $quick
grep -hv '^{' "$tmp"/report/logs/*-seed004.out >&2 || true
results=$tmp/report/results.jsonl

python3 - "$results" "$load" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows = [r for r in rows if r.get("exp") in ("ccoll", "seed004")]
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
