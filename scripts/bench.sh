#!/usr/bin/env bash
# Builds rshmem in release and runs the whole benchmark set on this node:
#   oshrun -np 2 rshmem-bench pe       limits (memcpy, raw cache-line ping-pong), put/get
#                                      latency and bandwidth 1 B..4 MiB, 8 B put message
#                                      rate, every AMO, put-then-flag ping-pongs, 2-PE barrier
#   oshrun -np 4 rshmem-bench barrier  4-PE barrier
#   oshrun -np 2 rshmem-bench coll     team creation, team barriers, collectives 8 B..1 MiB
#                                      (broadcast, sum reductions, collect, fcollect,
#                                      alltoall) against memcpy of the same bytes; sum
#                                      reductions by shm/RD/ring/linear and the RD-ring crossover
#   SHMEM_VIRTUAL_HOSTS=2 oshrun -np 4 rshmem-bench coll
#                                      the same at 4 PEs, plus flat vs hierarchical
#                                      (HOST, LEADERS, HOST broadcast) sum reduction with
#                                      shm, RD and ring across LEADERS
#   oshrun -np 2 rshmem-bench threads --threads 1
#   oshrun -np 2T rshmem-bench threads --threads T
#                                      seed 001: put/get 1 B..1 MiB, atomic post/fetch
#                                      message rate of T threads on the default context,
#                                      T threads on private contexts and T single-threaded
#                                      PEs (target: private >= 0.9x PEs); ping-pong latency
#   oshrun -np 1 rshmem-bench apps --threads T
#   oshrun -np 2 rshmem-bench apps --threads T   (2T busy threads: oversubscribed if > cores)
#                                      seed 001: 3-D halo exchange, ISx all-to-all,
#                                      Mandelbrot with work stealing; single vs multi context
#   oshrun -np 2 rshmem-bench nbe --threads T
#                                      seed 002: put_nbe vs put_nbi rates, fetch_add_nbe,
#                                      bandwidth with threads, COMB overlap 64 B / 6 MiB
#                                      (target: >= 90% at 6 MiB), threaded broadcast vs the
#                                      library's, GUPS
#   SHMEM_COPY_ENGINE_PIECE=0 oshrun -np 2 rshmem-bench nbe --sections overlap
#                                      the overlap again with transfers not cut into
#                                      pieces (waiters do not share the engine's work)
#   oshrun -np 2 rshmem-bench threshold
#                                      copy engine vs inline copy: the threshold crossover
#   oshrun -np 2 rshmem-bench wait --sweep
#                                      barrier, 8 B broadcast and reduce, put/wait ping-pong
#                                      idle and beside 5 busy processes (own sessions, the
#                                      job's session), under the default waiting policy and
#                                      four others
#   rshmem-bench launch                oshrun -np 1/2/4 hello, start to exit
# then prints the targets again. Table lines never start with `{`; JSON lines always do
# (`./scripts/bench.sh | grep '^{'` keeps only the JSON).
#
# Usage: scripts/bench.sh [--quick] [--runs N] [--threads T]
#   --quick       fewer samples, shorter runs (a smoke test, not a measurement)
#   --runs N      timed launches per PE count (default 20)
#   --threads T   threads per PE of the multithreaded suites (default 2; the headline
#                 figures want T <= cores, and threads runs -np 2T PEs of which T work)
# Honours CARGO_TARGET_DIR. The figures are only as quiet as the machine: compare the
# load averages printed before and after.
set -euo pipefail
me=bench.sh
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)/lib.sh"

quick=()
runs=20
threads=2
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=(--quick); runs=5 ;;
        --runs) runs="$2"; shift ;;
        --threads) threads="$2"; shift ;;
        -h|--help) sed -n '2,45p' "$0"; exit 0 ;;
        *) usage_error "unknown argument $1" ;;
    esac
    shift
done
case "$threads" in
    ''|*[!0-9]*|0) usage_error "--threads wants a positive integer, not '$threads'" ;;
esac

cd "$root"
build_release oshrun rshmem-bench
bin="$target/release"
oshrun="$bin/oshrun"
bench="$bin/rshmem-bench"

out="$(mktemp)"
trap 'rm -f "$out"' EXIT

{
    echo "rshmem benchmarks: $(uname -srm), $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "load average before: $(loadavg)"
    "$oshrun" --timeout 900 -np 2 "$bench" pe "${quick[@]}"
    "$oshrun" --timeout 900 -np 4 "$bench" barrier "${quick[@]}"
    "$oshrun" --timeout 900 -np 2 "$bench" coll "${quick[@]}"
    SHMEM_VIRTUAL_HOSTS=2 "$oshrun" --timeout 900 -np 4 "$bench" coll "${quick[@]}"
    "$oshrun" --timeout 900 -np 2 "$bench" threads --threads 1 "${quick[@]}"
    if [ "$threads" -gt 1 ]; then
        "$oshrun" --timeout 900 -np $((2 * threads)) "$bench" threads --threads "$threads" "${quick[@]}"
    fi
    "$oshrun" --timeout 900 -np 1 "$bench" apps --threads "$threads" "${quick[@]}"
    "$oshrun" --timeout 900 -np 2 "$bench" apps --threads "$threads" "${quick[@]}"
    "$oshrun" --timeout 900 -np 2 "$bench" nbe --threads "$threads" "${quick[@]}"
    SHMEM_COPY_ENGINE_PIECE=0 "$oshrun" --timeout 900 -np 2 "$bench" nbe --sections overlap "${quick[@]}"
    "$oshrun" --timeout 900 -np 2 "$bench" threshold "${quick[@]}"
    "$oshrun" --timeout 900 -np 2 "$bench" wait --sweep "${quick[@]}"
    "$bench" launch --oshrun "$oshrun" --runs "$runs"
    echo "load average after: $(loadavg)"
} | tee "$out"

"$bench" summary <"$out"
