#!/bin/sh
# bench-c.sh: the C benchmark (bench/c/shmem_bench.c) on rshmem and on Open MPI's OSHMEM,
# next to the Rust API's figures (rshmem-bench pe --quick) from the same run.
#
#   scripts/bench-c.sh [--quick] [--no-oshmem] [--keep]
#
# 1. cargo build --release -p rshmem-capi -p oshrun -p rshmem-bench (honours CARGO_TARGET_DIR);
# 2. unless --no-oshmem: finds Open MPI's oshcc/oshrun (OMPI_OSHCC / OMPI_OSHRUN, else
#    /usr/bin), installing openmpi-bin and libopenmpi-dev with apt-get when missing and run
#    as root (extra oshrun flags: OMPI_OSHRUN_ARGS);
# 3. runs `rshmem-bench report --only cbench`: installs rshmem into a temporary prefix,
#    compiles the benchmark with its oshcc and with Open MPI's, and runs each with its own
#    oshrun -np 2;
# 4. runs rshmem-bench pe --quick on 2 PEs;
# 5. prints a side-by-side table; every JSON line goes to DIR/results.jsonl.
# --quick: fewer C batches (31 instead of 101). --keep: keep the temporary directory.
set -eu
me=bench-c.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"
quick=
oshmem=yes
keep=no
for a in "$@"; do
    case $a in
        --quick) quick=--quick ;;
        --no-oshmem) oshmem=no ;;
        --keep) keep=yes ;;
        -h|--help) sed -n '2,/^set -eu$/p' "$0" | sed '$d'; exit 0 ;;
        *) usage_error "unknown argument $a" ;;
    esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-c.XXXXXX")
if [ "$keep" = no ]; then trap 'rm -rf "$tmp"' EXIT; fi
results=$tmp/results.jsonl

build_release rshmem-capi oshrun rshmem-bench
say "C benchmark on rshmem"
# shellcheck disable=SC2086
report "$oshmem" "$tmp/report" --only cbench $quick
for log in "$tmp"/report/logs/*-cbench.out; do
    grep -v '^{' "$log" || true
    if [ ! -s "$log" ]; then
        warn "$(basename "$log" .out) printed nothing; its stderr:"
        cat "${log%.out}.err" >&2
    fi
done
grep '"exp":"cbench"' "$tmp/report/results.jsonl" > "$results" || true

say "Rust API: rshmem-bench pe --quick"
"$target/release/oshrun" -np 2 "$target/release/rshmem-bench" pe --quick > "$tmp/rust.out"
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
