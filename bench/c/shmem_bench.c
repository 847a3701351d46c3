/* shmem_bench.c: latency and message rate of put, get and every 64-bit AMO, from C,
 * each on a symmetric heap buffer (shmem_align) and on a static buffer (symmetric
 * data/bss), and put/get bandwidth (8 B to 4 MiB, heap), on 2 PEs: PE 0 measures against
 * PE 1 while PE 1 waits in a barrier.
 *
 * Portable OpenSHMEM 1.4 C (spec routines only): builds with rshmem's oshcc and with
 * Open MPI's (OSHMEM) oshcc.
 *
 *   oshcc -O2 -o shmem_bench shmem_bench.c && oshrun -np 2 ./shmem_bench [--quick]
 *
 * Timing follows rshmem-bench: each body is calibrated to batches of about 20 us (message
 * rate and bandwidth: 500 us) and at least 32 operations (bandwidth: 4), then heap and
 * static batches are timed alternately; the figure is the median (and minimum) over
 * batches of the per-operation mean. A batch of non-fetching operations (put, p, set,
 * inc, add, and, or, xor) ends with shmem_quiet, so the figure includes their completion
 * (the pipelined cost per operation) instead of leaving them in flight into the next batch,
 * which matters over a network transport; "put_quiet" is a put completed one by one.
 *
 * Output: a readable table, then one JSON line per figure in rshmem-bench's schema plus
 * "impl" and "mem":
 *   {"bench":"amo_fetch_add","size":8,"pes":2,"metric":"latency_median","value":12.3,
 *    "unit":"ns","impl":"rshmem","mem":"heap"}
 * Bandwidth: {"bench":"put_bw","size":65536,...,"metric":"bandwidth","unit":"GB/s"}; put_nbi
 * message rate by size: {"bench":"put_nbi_sized","size":65536,...,"metric":"rate",
 * "unit":"Mmsg/s"}.
 * "peer_mapped" (metric "mapped", 1 or 0) says whether shmem_ptr gives PE 0 a load/store
 * pointer to PE 1's heap: 0 means the run really went through a network transport.
 * Standard AMOs use `long` (the 64-bit type both implementations provide for them);
 * bitwise AMOs use `uint64_t` (the spec has no `long` bitwise AMOs).
 */
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BENCH_IMPL
#ifdef OSHMEM_MAJOR_VERSION
#define BENCH_IMPL "oshmem"
#else
#define BENCH_IMPL "rshmem"
#endif
#endif

#define BUF_WORDS 512 /* 4 KiB: the put window (64 words) and the AMO word */
#define AMO_OFF 256   /* word index of the AMO target: its own cache lines */
#define WINDOW 64
#define MIN_OPS 32       /* per latency / rate batch */
#define BW_MAX (4 << 20) /* largest bandwidth size */

/* The static buffer: symmetric because it lives in the data/bss segment. */
static uint64_t sbuf[BUF_WORDS] __attribute__((aligned(4096)));

static volatile uint64_t sink;
static int peer;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* A body runs its operation n times on the symmetric buffer `buf`. */
typedef void (*body_fn)(uint64_t *buf, long n);

/* -------- RMA -------- */
static void b_putmem(uint64_t *buf, long n) {
    uint64_t v = 7;
    for (long i = 0; i < n; i++) shmem_putmem(buf, &v, 8, peer);
    shmem_quiet();
}
/* Remote completion of every put: a round trip over a network transport. */
static void b_put_quiet(uint64_t *buf, long n) {
    uint64_t v = 7;
    for (long i = 0; i < n; i++) {
        shmem_putmem(buf, &v, 8, peer);
        shmem_quiet();
    }
}
static void b_getmem(uint64_t *buf, long n) {
    uint64_t v = 0, acc = 0;
    for (long i = 0; i < n; i++) {
        shmem_getmem(&v, buf, 8, peer);
        acc += v;
    }
    sink = acc;
}
static void b_long_p(uint64_t *buf, long n) {
    for (long i = 0; i < n; i++) shmem_long_p((long *)buf, (long)i, peer);
    shmem_quiet();
}
static void b_long_g(uint64_t *buf, long n) {
    long acc = 0;
    for (long i = 0; i < n; i++) acc += shmem_long_g((long *)buf, peer);
    sink = (uint64_t)acc;
}
/* Message rate: 8-byte puts back to back over a 512-byte window, one quiet per batch. */
static void b_put_rate(uint64_t *buf, long n) {
    uint64_t v = 7;
    for (long i = 0; i < n; i++) shmem_putmem(buf + (i % WINDOW), &v, 8, peer);
    shmem_quiet();
}
static void b_put_nbi_rate(uint64_t *buf, long n) {
    static uint64_t v = 7; /* unchanged until the quiet */
    for (long i = 0; i < n; i++) shmem_putmem_nbi(buf + (i % WINDOW), &v, 8, peer);
    shmem_quiet();
}

/* -------- AMOs (operands as in rshmem-bench pe) -------- */
#define L(buf) ((long *)((buf) + AMO_OFF))
#define U(buf) ((buf) + AMO_OFF)
#define FETCHING(name, expr)                                  \
    static void name(uint64_t *buf, long n) {                 \
        uint64_t acc = 0;                                     \
        for (long i = 0; i < n; i++) acc += (uint64_t)(expr); \
        sink = acc;                                           \
    }
#define NONFETCHING(name, stmt)                          \
    static void name(uint64_t *buf, long n) {            \
        for (long i = 0; i < n; i++) stmt;               \
        shmem_quiet();                                   \
    }
FETCHING(b_fetch, shmem_long_atomic_fetch(L(buf), peer))
NONFETCHING(b_set, shmem_long_atomic_set(L(buf), 1, peer))
FETCHING(b_swap, shmem_long_atomic_swap(L(buf), 1, peer))
FETCHING(b_compare_swap, shmem_long_atomic_compare_swap(L(buf), 0, 0, peer))
FETCHING(b_fetch_inc, shmem_long_atomic_fetch_inc(L(buf), peer))
NONFETCHING(b_inc, shmem_long_atomic_inc(L(buf), peer))
FETCHING(b_fetch_add, shmem_long_atomic_fetch_add(L(buf), 3, peer))
NONFETCHING(b_add, shmem_long_atomic_add(L(buf), 3, peer))
FETCHING(b_fetch_and, shmem_uint64_atomic_fetch_and(U(buf), ~(uint64_t)0, peer))
NONFETCHING(b_and, shmem_uint64_atomic_and(U(buf), ~(uint64_t)0, peer))
FETCHING(b_fetch_or, shmem_uint64_atomic_fetch_or(U(buf), 0, peer))
NONFETCHING(b_or, shmem_uint64_atomic_or(U(buf), 0, peer))
FETCHING(b_fetch_xor, shmem_uint64_atomic_fetch_xor(U(buf), 1, peer))
NONFETCHING(b_xor, shmem_uint64_atomic_xor(U(buf), 1, peer))

struct bench {
    const char *name;    /* JSON "bench", as in rshmem-bench pe */
    const char *routine; /* the C routine */
    body_fn f;
    int rate;            /* 1: message rate (Mmsg/s), 0: latency (ns) */
};

static const struct bench benches[] = {
    {"put", "shmem_putmem 8 B", b_putmem, 0},
    {"put_quiet", "shmem_putmem 8 B + quiet each", b_put_quiet, 0},
    {"get", "shmem_getmem 8 B", b_getmem, 0},
    {"long_p", "shmem_long_p", b_long_p, 0},
    {"long_g", "shmem_long_g", b_long_g, 0},
    {"put_msgrate", "shmem_putmem 8 B + quiet", b_put_rate, 1},
    {"put_nbi_msgrate", "shmem_putmem_nbi 8 B + quiet", b_put_nbi_rate, 1},
    {"amo_fetch", "shmem_long_atomic_fetch", b_fetch, 0},
    {"amo_set", "shmem_long_atomic_set", b_set, 0},
    {"amo_swap", "shmem_long_atomic_swap", b_swap, 0},
    {"amo_compare_swap", "shmem_long_atomic_compare_swap", b_compare_swap, 0},
    {"amo_fetch_inc", "shmem_long_atomic_fetch_inc", b_fetch_inc, 0},
    {"amo_inc", "shmem_long_atomic_inc", b_inc, 0},
    {"amo_fetch_add", "shmem_long_atomic_fetch_add", b_fetch_add, 0},
    {"amo_add", "shmem_long_atomic_add", b_add, 0},
    {"amo_fetch_and", "shmem_uint64_atomic_fetch_and", b_fetch_and, 0},
    {"amo_and", "shmem_uint64_atomic_and", b_and, 0},
    {"amo_fetch_or", "shmem_uint64_atomic_fetch_or", b_fetch_or, 0},
    {"amo_or", "shmem_uint64_atomic_or", b_or, 0},
    {"amo_fetch_xor", "shmem_uint64_atomic_fetch_xor", b_fetch_xor, 0},
    {"amo_xor", "shmem_uint64_atomic_xor", b_xor, 0},
};
#define NBENCH ((int)(sizeof benches / sizeof benches[0]))

/* Number of operations that take about target_ns (warms the body up on the way). */
static long calibrate(body_fn f, uint64_t *buf, double target_ns, long min_ops) {
    /* Warm up first: the first call of a routine pays for lazy symbol binding (microseconds),
     * which would otherwise pass for the batch time and leave batches of one or two ops. */
    f(buf, 64);
    long n = 1;
    for (;;) {
        double t = now_ns();
        f(buf, n);
        double e = now_ns() - t;
        if (e >= target_ns / 2 || n >= (1L << 26)) {
            if (e < 1) e = 1;
            long k = (long)(n * target_ns / e + 0.5);
            return k < min_ops ? min_ops : k;
        }
        n *= 2;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarize(double *v, int n, double *median, double *min) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    *min = v[0];
}

static void json_sz(const char *bench, long size, const char *metric, double value,
                    const char *unit, const char *mem) {
    printf("{\"bench\":\"%s\",\"size\":%ld,\"pes\":%d,\"metric\":\"%s\",\"value\":%.4f,"
           "\"unit\":\"%s\",\"impl\":\"%s\",\"mem\":\"%s\"}\n",
           bench, size, shmem_n_pes(), metric, value, unit, BENCH_IMPL, mem);
}

static void json(const char *bench, const char *metric, double value, const char *unit,
                 const char *mem) {
    json_sz(bench, 8, metric, value, unit, mem);
}

/* -------- bandwidth (heap only): n transfers of bw_size bytes, then one quiet -------- */
static uint8_t *bw_local; /* private, BW_MAX bytes */
static size_t bw_size;
static void b_put_bw(uint64_t *buf, long n) {
    for (long i = 0; i < n; i++) shmem_putmem(buf, bw_local, bw_size, peer);
    shmem_quiet();
}
static void b_get_bw(uint64_t *buf, long n) {
    for (long i = 0; i < n; i++) shmem_getmem(bw_local, buf, bw_size, peer);
}
/* Message rate by size (seed 002's put_nbi reference): windows of up to 64 put_nbi to
 * distinct places of the block, then one quiet. */
static void b_put_nbi_sized(uint64_t *buf, long n) {
    long w = (long)(BW_MAX / bw_size);
    if (w > WINDOW) w = WINDOW;
    uint8_t *to = (uint8_t *)buf;
    for (long i = 0; i < n;) {
        for (long j = 0; j < w && i < n; j++, i++)
            shmem_putmem_nbi(to + (size_t)j * bw_size, bw_local + (size_t)j * bw_size, bw_size,
                             peer);
        shmem_quiet();
    }
}

/* Put and get bandwidth at a few sizes into the heap block `big` (BW_MAX bytes), and the
 * put_nbi message rate at the same sizes ("put_nbi_sized", metric "rate"), the batches
 * interleaved; prints its table and JSON lines. */
static void bandwidth(uint64_t *big, int samples) {
    /* x8 steps: OSU-style curves (rshmem-bench report) without a long run. */
    static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, BW_MAX};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    enum { ND = 3 };
    body_fn fs[ND] = {b_put_bw, b_get_bw, b_put_nbi_sized};
    const char *names[ND] = {"put_bw", "get_bw", "put_nbi_sized"};
    double res[NS][ND][2];
    double *t[ND];
    for (int d = 0; d < ND; d++) t[d] = malloc(sizeof(double) * (size_t)samples);
    for (int i = 0; i < NS; i++) {
        bw_size = sizes[i];
        long k[ND];
        for (int d = 0; d < ND; d++) k[d] = calibrate(fs[d], big, 500e3, 4);
        for (int s = 0; s < samples; s++)
            for (int d = 0; d < ND; d++) {
                double t0 = now_ns();
                fs[d](big, k[d]);
                t[d][s] = (now_ns() - t0) / (double)k[d];
            }
        for (int d = 0; d < ND; d++) summarize(t[d], samples, &res[i][d][0], &res[i][d][1]);
    }
    printf("bandwidth (heap): GB/s from the median time per transfer (batches end with quiet);\n"
           "put_nbi: message rate, windows of up to 64 then quiet\n");
    printf("%-10s %14s %14s %16s\n", "size", "put GB/s", "get GB/s", "put_nbi Mmsg/s");
    for (int i = 0; i < NS; i++)
        printf("%-10zu %14.3f %14.3f %16.3f\n", sizes[i], sizes[i] / res[i][0][0],
               sizes[i] / res[i][1][0], 1e3 / res[i][2][0]);
    for (int i = 0; i < NS; i++) {
        for (int d = 0; d < 2; d++) {
            json_sz(names[d], (long)sizes[i], "bandwidth", sizes[i] / res[i][d][0], "GB/s",
                    "heap");
            json_sz(names[d], (long)sizes[i], "latency_median", res[i][d][0], "ns", "heap");
        }
        json_sz(names[2], (long)sizes[i], "rate", 1e3 / res[i][2][0], "Mmsg/s", "heap");
    }
    for (int d = 0; d < ND; d++) free(t[d]);
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int samples = quick ? 31 : 101;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes != 2) {
        if (me == 0) fprintf(stderr, "shmem_bench: run on exactly 2 PEs, not %d\n", npes);
        shmem_global_exit(2);
    }
    peer = 1 - me;
    uint64_t *heap = shmem_align(4096, BUF_WORDS * sizeof(uint64_t));
    if (heap == NULL) {
        fprintf(stderr, "shmem_bench: shmem_align failed\n");
        shmem_global_exit(1);
    }
    uint64_t *big = shmem_align(4096, BW_MAX);
    bw_local = malloc(BW_MAX);
    if (big == NULL || bw_local == NULL) {
        fprintf(stderr, "shmem_bench: shmem_align/malloc of %d bytes failed\n", BW_MAX);
        shmem_global_exit(1);
    }
    memset(heap, 0, BUF_WORDS * sizeof(uint64_t));
    memset(sbuf, 0, sizeof sbuf);
    memset(big, 0x5a, BW_MAX);
    memset(bw_local, 0xa5, BW_MAX);
    shmem_barrier_all();

    if (me == 0) {
        char vendor[SHMEM_MAX_NAME_LEN];
        int maj = 0, min = 0;
        shmem_info_get_name(vendor);
        shmem_info_get_version(&maj, &min);
        uint64_t *bufs[2] = {heap, sbuf};
        const char *mems[2] = {"heap", "static"};
        double res[NBENCH][2][2]; /* [bench][heap/static][median/min] */
        double *t[2];
        t[0] = malloc(sizeof(double) * (size_t)samples);
        t[1] = malloc(sizeof(double) * (size_t)samples);
        for (int b = 0; b < NBENCH; b++) {
            const struct bench *B = &benches[b];
            double target = B->rate ? 500e3 : 20e3;
            int ns = B->rate ? (samples < 31 ? samples : 31) : samples;
            long k[2];
            for (int m = 0; m < 2; m++) k[m] = calibrate(B->f, bufs[m], target, MIN_OPS);
            for (int s = 0; s < ns; s++)
                for (int m = 0; m < 2; m++) {
                    double t0 = now_ns();
                    B->f(bufs[m], k[m]);
                    t[m][s] = (now_ns() - t0) / (double)k[m];
                }
            for (int m = 0; m < 2; m++) summarize(t[m], ns, &res[b][m][0], &res[b][m][1]);
        }
        printf("shmem_bench (C): %s, %d PEs, PE 0 -> PE 1; library \"%s\", spec %d.%d; %s mode\n",
               BENCH_IMPL, npes, vendor, maj, min, quick ? "quick" : "full");
        printf("latency: ns per op, median / min over batches; rate: Mmsg/s from the median\n");
        printf("%-18s %-32s %19s  %19s  %6s\n", "bench", "routine", "heap", "static",
               "st/hp");
        for (int b = 0; b < NBENCH; b++) {
            const struct bench *B = &benches[b];
            char h[40], s[40];
            if (B->rate) {
                snprintf(h, sizeof h, "%.1f Mmsg/s", 1e3 / res[b][0][0]);
                snprintf(s, sizeof s, "%.1f Mmsg/s", 1e3 / res[b][1][0]);
            } else {
                snprintf(h, sizeof h, "%.1f / %.1f", res[b][0][0], res[b][0][1]);
                snprintf(s, sizeof s, "%.1f / %.1f", res[b][1][0], res[b][1][1]);
            }
            printf("%-18s %-32s %19s  %19s  %6.2f\n", B->name, B->routine, h, s,
                   res[b][1][0] / res[b][0][0]);
        }
        int mapped = shmem_ptr(heap, peer) != NULL;
        printf("shmem_ptr to PE 1's heap: %s\n",
               mapped ? "a load/store pointer (shared memory)" : "NULL (network transport)");
        bandwidth(big, samples < 31 ? 11 : 31);
        json_sz("peer_mapped", 0, "mapped", mapped, "bool", "heap");
        for (int b = 0; b < NBENCH; b++)
            for (int m = 0; m < 2; m++) {
                if (benches[b].rate) {
                    json(benches[b].name, "rate", 1e3 / res[b][m][0], "Mmsg/s", mems[m]);
                } else {
                    json(benches[b].name, "latency_median", res[b][m][0], "ns", mems[m]);
                    json(benches[b].name, "latency_min", res[b][m][1], "ns", mems[m]);
                }
            }
        fflush(stdout);
        free(t[0]);
        free(t[1]);
    }
    shmem_barrier_all();
    shmem_free(big);
    free(bw_local);
    shmem_free(heap);
    shmem_finalize();
    return 0;
}
