#!/bin/sh
# bench-c.sh: the C benchmark (bench/c/shmem_bench.c) on rshmem and on Open MPI's OSHMEM,
# next to the Rust API's figures (rshmem-bench pe --quick) from the same run.
#
#   scripts/bench-c.sh [--quick] [--no-oshmem] [--keep]
#
# 1. cargo build --release -p rshmem-capi -p oshrun -p rshmem-bench (honours CARGO_TARGET_DIR);
# 2. installs rshmem into a temporary prefix, compiles the benchmark with its oshcc and runs
#    it with its oshrun -np 2;
# 3. unless --no-oshmem: finds Open MPI's oshcc/oshrun (OMPI_OSHCC / OMPI_OSHRUN, else
#    /usr/bin), installing openmpi-bin and libopenmpi-dev with apt-get when missing and run
#    as root; compiles the same source and runs it (extra oshrun flags: OMPI_OSHRUN_ARGS);
# 4. runs rshmem-bench pe --quick on 2 PEs;
# 5. prints a side-by-side table; every JSON line goes to DIR/results.jsonl.
# --quick: fewer C batches (31 instead of 101). --keep: keep the temporary directory.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$here")
quick=
oshmem=yes
keep=no
for a in "$@"; do
    case $a in
        --quick) quick=--quick ;;
        --no-oshmem) oshmem=no ;;
        --keep) keep=yes ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "bench-c.sh: unknown argument $a" >&2; exit 2 ;;
    esac
done
target=${CARGO_TARGET_DIR:-$root/target}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-c.XXXXXX")
if [ "$keep" = no ]; then trap 'rm -rf "$tmp"' EXIT; fi
results=$tmp/results.jsonl
: > "$results"

echo "== building rshmem (release) into $target" >&2
(cd "$root" && CARGO_TARGET_DIR=$target cargo build --release -q -p rshmem-capi -p oshrun -p rshmem-bench)
sh "$root/crates/rshmem-capi/scripts/install.sh" --prefix "$tmp/rshmem" --build-dir "$target/release" >&2
osh_rs=$tmp/rshmem/bin

echo "== C benchmark on rshmem" >&2
"$osh_rs/oshcc" -O2 -std=c11 -Wall -o "$tmp/shmem_bench.rshmem" "$root/bench/c/shmem_bench.c"
"$osh_rs/oshrun" -np 2 "$tmp/shmem_bench.rshmem" $quick > "$tmp/c-rshmem.out"
grep -v '^{' "$tmp/c-rshmem.out" || true
grep '^{' "$tmp/c-rshmem.out" >> "$results"

if [ "$oshmem" = yes ]; then
    ompi_cc=${OMPI_OSHCC:-/usr/bin/oshcc}
    ompi_run=${OMPI_OSHRUN:-/usr/bin/oshrun}
    if { [ ! -x "$ompi_cc" ] || [ ! -x "$ompi_run" ]; } && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "== installing Open MPI (openmpi-bin libopenmpi-dev)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev > "$tmp/apt.log" 2>&1 ||
            { apt-get update -q > /dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev > "$tmp/apt.log" 2>&1; } ||
            echo "bench-c.sh: apt-get install failed (see $tmp/apt.log)" >&2
    fi
    if [ -x "$ompi_cc" ] && [ -x "$ompi_run" ]; then
        echo "== C benchmark on Open MPI's OSHMEM ($("$ompi_run" --version 2>/dev/null | head -n 1))" >&2
        # --mca osc ^rdma: Open MPI 4.1.4 (Debian 12) otherwise segfaults in shmem_finalize
        # (ompi_osc_base_finalize -> free -> opal_mem_hooks_release_hook into an unloaded hook).
        set -- --mca osc ^rdma
        if [ "$(id -u)" = 0 ]; then set -- "$@" --allow-run-as-root; fi
        if [ "$(nproc 2>/dev/null || echo 2)" -lt 2 ]; then set -- "$@" --oversubscribe; fi
        "$ompi_cc" -O2 -std=c11 -Wall -o "$tmp/shmem_bench.oshmem" "$root/bench/c/shmem_bench.c"
        echo "   $ompi_run -np 2 $* ${OMPI_OSHRUN_ARGS:-} shmem_bench $quick" >&2
        # shellcheck disable=SC2086
        if ! "$ompi_run" -np 2 "$@" ${OMPI_OSHRUN_ARGS:-} "$tmp/shmem_bench.oshmem" $quick \
            > "$tmp/c-oshmem.out" 2> "$tmp/c-oshmem.err"; then
            echo "bench-c.sh: Open MPI's oshrun failed; its stderr:" >&2
            cat "$tmp/c-oshmem.err" >&2
        fi
        grep -v '^{' "$tmp/c-oshmem.out" || true
        grep '^{' "$tmp/c-oshmem.out" >> "$results" || true
    else
        echo "bench-c.sh: Open MPI's oshcc/oshrun not found ($ompi_cc, $ompi_run); skipping OSHMEM" >&2
    fi
fi

echo "== Rust API: rshmem-bench pe --quick" >&2
"$osh_rs/oshrun" -np 2 "$target/release/rshmem-bench" pe --quick > "$tmp/rust.out"
grep '^{' "$tmp/rust.out" | sed 's/}$/,"impl":"rust"}/' >> "$results"

python3 - "$results" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
fig = {}
for r in rows:
    if r["metric"] not in ("latency_median", "rate") or r.get("size") != 8:
        continue
    fig[(r.get("impl"), r.get("mem", "heap"), r["bench"])] = r["value"]
# C bench -> the rshmem-bench pe figure it is compared with (long_p/g: the 8-byte put/get).
rust_of = {"long_p": "put", "long_g": "get"}
order = ["put", "put_quiet", "get", "long_p", "long_g", "put_msgrate", "put_nbi_msgrate"] + [
    "amo_" + o for o in ["fetch", "set", "swap", "compare_swap", "fetch_inc", "inc",
                         "fetch_add", "add", "fetch_and", "and", "fetch_or", "or",
                         "fetch_xor", "xor"]]
def ns(b, v):  # ns per operation
    return None if v is None else (1e3 / v if b.endswith("msgrate") else v)
def show(b, v):
    if v is None: return "-"
    return f"{v:.1f}" if not b.endswith("msgrate") else f"{v:.1f}M/s"
def d(x, y):
    return "-" if x is None or y is None else f"{x - y:+.1f}"
def q(x, y):
    return "-" if x is None or y is None or y == 0 else f"{x / y:.2f}"
hdr = ("bench", "C rs heap", "C rs static", "Rust API", "C-Rust", "st-heap",
       "OSHMEM heap", "OSHMEM st", "OSH/rs heap", "OSH/rs st")
print()
print("C benchmark, 2 PEs, PE 0 -> PE 1: latency in ns (median of batches) or message rate in Mmsg/s.")
print("C rs = bench/c/shmem_bench.c on rshmem; Rust API = rshmem-bench pe --quick (rshmem-core);")
print("C-Rust and st-heap in ns per op; OSH/rs = Open MPI OSHMEM time per op / rshmem's (x).")
fmt = "{:<17} {:>10} {:>11} {:>9} {:>7} {:>8} {:>12} {:>10} {:>11} {:>10}"
print(fmt.format(*hdr))
for b in order:
    ch, cs = fig.get(("rshmem", "heap", b)), fig.get(("rshmem", "static", b))
    rs = fig.get(("rust", "heap", rust_of.get(b, b)))
    oh, os_ = fig.get(("oshmem", "heap", b)), fig.get(("oshmem", "static", b))
    n = lambda v: ns(b, v)
    print(fmt.format(b, show(b, ch), show(b, cs), show(b, rs) + ("*" if b in rust_of else ""),
                     d(n(ch), n(rs)), d(n(cs), n(ch)), show(b, oh), show(b, os_),
                     q(n(oh), n(ch)), q(n(os_), n(cs))))
print("* long_p/long_g are compared with the Rust 8-byte put/get (rshmem-bench has no p/g).")
EOF
if [ "$keep" = yes ]; then echo "raw output and results.jsonl kept in $tmp" >&2; fi
