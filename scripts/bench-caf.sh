#!/bin/sh
# bench-caf.sh: the Coarray Fortran benchmarks (bench/fortran/) on rshmem's libcaf_rshmem
# and on OpenCoarrays, side by side in one run.
#
#   scripts/bench-caf.sh [--quick] [--images "2 4"] [--repeat N] [--json FILE] [--no-build]
#
# 1. cargo build --release -p rshmem-capi -p rshmem-caf -p oshrun (honours CARGO_TARGET_DIR)
#    and installs the C and Fortran faces into TARGET/bench-caf/rshmem (--no-build: install
#    what is built);
# 2. builds every program with rshmem's caf and, when OpenCoarrays is installed
#    (OPENCOARRAYS_CAF / OPENCOARRAYS_CAFRUN, default /usr/bin/caf and /usr/bin/cafrun),
#    with OpenCoarrays' caf;
# 3. runs each under its own cafrun at every image count of --images (default "2 4"),
#    each run bounded by timeout; OpenCoarrays runs with OMPI_MCA_osc=^rdma, as root with
#    OMPI_ALLOW_RUN_AS_ROOT*, and with --oversubscribe beyond the number of cores;
# 4. prints one table per benchmark (time per operation: rshmem, OpenCoarrays, and the
#    ratio OpenCoarrays / rshmem, above 1 when rshmem is faster), then the goals of
#    issue 14 and whether they were met. Every JSON line of the programs (plus one
#    "target" line per goal, the shape `rshmem-bench summary` reads) goes to --json FILE
#    (default TARGET/bench-caf/results.jsonl).
# --quick: fewer batches and iterations (a few minutes on 2 cores). --repeat N: run
# everything N times (interleaving the runtimes); the tables show the median run.
set -eu
me=bench-caf.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"
quick=
images="2 4"
json=
build=yes
repeat=1
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=--quick; shift ;;
        --images) images=$2; shift 2 ;;
        --images=*) images=${1#--images=}; shift ;;
        --json) json=$2; shift 2 ;;
        --json=*) json=${1#--json=}; shift ;;
        --no-build) build=no; shift ;;
        --repeat) repeat=$2; shift 2 ;;
        --repeat=*) repeat=${1#--repeat=}; shift ;;
        -h|--help) sed -n '2,/^set -eu$/p' "$0" | sed '$d'; exit 0 ;;
        *) usage_error "unknown argument $1" ;;
    esac
done
dir=$target/bench-caf
work=$dir/work
mkdir -p "$work"
json=${json:-$dir/results.jsonl}
raw=$work/raw.jsonl
: > "$raw"
progs="caf_rma caf_sync caf_himeno"
if [ -n "$quick" ]; then limit=180; else limit=600; fi

if [ "$build" = yes ]; then build_release rshmem-capi rshmem-caf oshrun; fi
install_rshmem "$dir/rshmem" "$work/install.log" || exit 1
rs=$dir/rshmem/bin
[ -x "$rs/caf" ] || { warn "$rs/caf was not installed (is rshmem-caf built?)"; exit 1; }

oc=no
if find_opencoarrays; then
    oc=yes
else
    warn "OpenCoarrays is not installed ($oc_caf, $oc_run; Debian: apt-get install libcoarrays-openmpi-dev): rshmem's column only"
fi

src=$root/bench/fortran
say "compiling bench/fortran with rshmem's caf (and OpenCoarrays' caf: $oc)"
for p in $progs; do
    mkdir -p "$work/rshmem" "$work/oc"
    "$rs/caf" -O2 -J "$work/rshmem" -o "$work/rshmem/$p" "$src/cafbench_util.f90" "$src/$p.f90"
    if [ "$oc" = yes ]; then
        "$oc_caf" -O2 -J "$work/oc" -o "$work/oc/$p" "$src/cafbench_util.f90" "$src/$p.f90" > "$work/oc-build.log" 2>&1 ||
            { cat "$work/oc-build.log" >&2; echo "bench-caf.sh: OpenCoarrays' caf failed; rshmem's column only" >&2; oc=no; }
    fi
done

# run NAME LOG COMMAND...: runs a benchmark bounded by $limit seconds, keeps its JSON lines.
run() {
    name=$1 log=$2
    shift 2
    echo "   $*" >&2
    if timeout "$limit" "$@" > "$log" 2> "$log.err"; then
        :
    else
        echo "bench-caf.sh: $name failed or timed out (status $?); its output:" >&2
        tail -n 5 "$log" "$log.err" >&2
    fi
    grep -v '^{' "$log" >&2 || true
    grep '^{' "$log" >> "$raw" || true
}

# The machine's limits (bench/c/machine_limits.c, no runtime involved): a cache-line round
# trip between two processes and memcpy at each transfer size, judged against below.
cc=${CC:-cc}
if "$cc" -O2 -o "$work/machine_limits" "$root/bench/c/machine_limits.c" 2> "$work/cc.log"; then
    echo "== machine limits" >&2
    run "machine_limits" "$work/machine_limits.out" "$work/machine_limits" $quick
else
    cat "$work/cc.log" >&2
    echo "bench-caf.sh: could not build bench/c/machine_limits.c with $cc: no limit column" >&2
fi

echo "== load before the runs: $(cat /proc/loadavg 2>/dev/null || uptime)" >&2
rep=0
while [ "$rep" -lt "$repeat" ]; do
rep=$((rep + 1))
for n in $images; do
    for p in $progs; do
        echo "== $p, $n images, rshmem" >&2
        run "$p (rshmem, $n images)" "$work/$p.rshmem.$n.out" \
            "$rs/cafrun" -n "$n" "$work/rshmem/$p" --runtime=rshmem $quick
        if [ "$oc" = yes ]; then
            echo "== $p, $n images, OpenCoarrays" >&2
            set --
            if [ "$n" -gt "$cores" ]; then set -- --oversubscribe; fi
            if [ "$(id -u)" = 0 ]; then
                export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
            fi
            # osc ^rdma: Open MPI 4.1.4 (Debian 12) otherwise crashes in MPI_Finalize.
            export OMPI_MCA_osc=^rdma
            run "$p (OpenCoarrays, $n images)" "$work/$p.oc.$n.out" \
                "$oc_run" -n "$n" "$@" "$work/oc/$p" --runtime=opencoarrays $quick
        fi
    done
done
done
echo "== load after the runs: $(cat /proc/loadavg 2>/dev/null || uptime)" >&2

# The tables and the goals: time per operation of each runtime, ratio OpenCoarrays/rshmem,
# and the machine's limit where there is one: memcpy of the size for put and get, and for
# SYNC ALL, SYNC IMAGES and an 8-byte co_sum one one-way cache-line latency (half the raw
# round trip) per dissemination round, ceil(log2 images) rounds (none with more images
# than cores). No runtime can be faster
# than the limit, so "best x" (OpenCoarrays / limit) is the largest ratio possible.
# Goals (issue 14): >= 5x on small transfers (<= 4 KiB), sync and locks; >= 1x at every
# other size; rshmem's whole-section strided transfer >= 3x its naive loop.
awk -v oc="$oc" -v cores="$cores" -v targets="$work/targets.jsonl" '
function field(line, key,    m, v) {
    if (!match(line, "\"" key "\":(\"[^\"]*\"|[^,}]*)")) return ""
    v = substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
    gsub(/"/, "", v)
    return v
}
function goal_of(b, s) {
    if (b ~ /_naive$/) return 0
    if ((b == "caf_put" || b == "caf_get") && s + 0 <= 4096) return 5
    if (b == "sync_all" || b == "sync_images" || b == "lock_mcs" || b == "dht") return 5
    if (b == "co_sum" && s + 0 <= 8) return 5
    return 1
}
# One goal line; best > 0 is the largest ratio the machine limit allows.
function target(name, pes, v, want, how, best) {
    printf "{\"bench\":\"target\",\"size\":null,\"pes\":%d,\"metric\":\"%s\",\"value\":%.4f,\"unit\":\"x\",\"target\":\">= %s\",\"met\":%s,\"how\":\"%s\"%s}\n", pes, name, v, want, (v >= want ? "true" : "false"), how, (best > 0 ? sprintf(",\"limit_ratio\":%.4f", best) : "") >> targets
    ngoal++
    if (v >= want) nmet++
}
BEGIN { printf "" > targets }
/^\{/ {
    if (field($0, "metric") != "time") next
    b = field($0, "bench"); s = field($0, "size"); p = field($0, "pes"); r = field($0, "runtime")
    if (r == "machine") {
        if (b == "memcpy") copy[s + 0] = field($0, "value") + 0
        if (b == "pingpong_raw") oneway = (field($0, "value") + 0) / 2
        next
    }
    k = b SUBSEP s SUBSEP p
    if (!(b in nrows)) { benches[++nb] = b; nrows[b] = 0 }
    if (!(k in seen)) { seen[k] = 1; rows[b, ++nrows[b]] = k }
    v = field($0, "value") + 0
    c = ++cnt[k, r]
    vals[k, r, c] = v
}
function med(k, r,    c, i, j, x, a) {
    c = cnt[k, r]
    if (c == 0) return 0
    for (i = 1; i <= c; i++) a[i] = vals[k, r, i]
    for (i = 2; i <= c; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}
# The machine limit for benchmark b at size s on p images (0: none).
function limit_of(b, s, p,    rounds, q) {
    if ((b == "caf_put" || b == "caf_get") && (s + 0) in copy) return copy[s + 0]
    # More images than cores: every statement waits for the scheduler, no cache-line limit.
    if (oneway > 0 && p + 0 <= cores + 0 && (b == "sync_all" || b == "sync_images" || (b == "co_sum" && s + 0 <= 8))) {
        rounds = 0
        for (q = 1; q < p + 0; q *= 2) rounds++
        return rounds * oneway
    }
    return 0
}
END {
    for (j = 1; j <= nb; j++) {
      b = benches[j]
      printf "\n== %s (time per operation, us; ratio = OpenCoarrays / rshmem) ==\n", b
      printf "%10s %7s %14s %14s %9s %10s %8s\n", "size", "images", "rshmem", "OpenCoarrays", "ratio", "limit", "best x"
      for (i = 1; i <= nrows[b]; i++) {
        k = rows[b, i]
        split(k, a, SUBSEP)
        s = a[2]; p = a[3]
        rv = med(k, "rshmem"); ov = med(k, "opencoarrays")
        lim = limit_of(b, s, p)
        lcol = lim > 0 ? sprintf("%10.3f", lim) : sprintf("%10s", "-")
        if (oc == "yes" && rv > 0 && ov > 0) {
            bcol = lim > 0 ? sprintf("%7.2fx", ov / lim) : sprintf("%8s", "-")
            printf "%10s %7s %14.3f %14.3f %8.2fx %s %s\n", s, p, rv, ov, ov / rv, lcol, bcol
            g = goal_of(b, s)
            if (g > 0) target(b "@" s, p, ov / rv, g, "OpenCoarrays time / rshmem time", lim > 0 ? ov / lim : 0)
        } else {
            printf "%10s %7s %14.3f %14s %9s %s %8s\n", s, p, rv, (ov > 0 ? sprintf("%.3f", ov) : "-"), "-", lcol, "-"
        }
        if (b ~ /_naive$/) {
            base = substr(b, 1, length(b) - 6)
            sec = med(base SUBSEP s SUBSEP p, "rshmem")
            if (rv > 0 && sec > 0) target(base "_section_vs_naive@" s, p, rv / sec, 3, "rshmem naive loop time / whole-section time", 0)
        }
      }
    }
    if (ngoal > 0) printf "\n%d of %d goals met (see the target lines of the JSON file)\n", nmet, ngoal
}' "$raw"

cat "$raw" "$work/targets.jsonl" > "$json"
echo "JSON lines: $json" >&2
