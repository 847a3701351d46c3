/* shmem_seed004.c: seed 004's extensions on rshmem, from C.
 *
 * 1. Active-set creation cost by constructor (shmemx_create_{strided,log_strided,custom,
 *    generic}_aset, each deleted at once), local on every PE, beside a collective
 *    shmem_team_split_strided + shmem_team_destroy of the same members.
 * 2. Overlap of a non-blocking collective with computation, COMB post-work-wait: a 1 MiB
 *    long sum reduction and a 1 MiB broadcast on SHMEM_TEAM_WORLD. comm = post + wait
 *    alone; work = a computation calibrated to last as long as comm; total = post, work,
 *    wait. overlap = 1 - (total - work) / comm (100%: the collective was entirely hidden).
 *    The collective's own work is memory copies and folds that need a core: with every
 *    core computing (2 PEs on 2 cores) nothing can hide it. The "idle" rows wait instead
 *    of computing (nanosleep, as a thread blocked in I/O or on an accelerator would),
 *    leaving the cores to the collective worker: what overlap a free core gives.
 *
 *   oshcc -O2 -o shmem_seed004 shmem_seed004.c && oshrun -np 2 ./shmem_seed004 [--quick]
 *
 * Output: a table (PE 0), then JSON lines in rshmem-bench's schema.
 */
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES (1 << 20)
#define LONGS (BYTES / 8)
#define MAXS 101

static long src[LONGS], dst[LONGS];
static double times[MAXS];
static int me, npes;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The slowest PE's figure of each sample, on PE 0; returns the median there. */
static double slowest_median(int n) {
    static double other[MAXS];
    shmem_barrier_all();
    double m = 0;
    if (me == 0) {
        for (int pe = 1; pe < npes; pe++) {
            shmem_getmem(other, times, sizeof(double) * (size_t)n, pe);
            for (int s = 0; s < n; s++)
                if (other[s] > times[s]) times[s] = other[s];
        }
        m = median(times, n);
    }
    shmem_barrier_all();
    return m;
}

static int reversed(int i, int start, int size, void *p) {
    (void)start;
    (void)p;
    return size - 1 - i;
}

static int list[1024];

static void json(const char *bench, long size, const char *metric, double v, const char *unit) {
    printf("{\"bench\":\"%s\",\"size\":", bench);
    if (size >= 0) printf("%ld", size);
    else printf("null");
    printf(",\"pes\":%d,\"metric\":\"%s\",\"value\":%.4f,\"unit\":\"%s\",\"impl\":\"rshmem\"}\n",
           npes, metric, v, unit);
}

/* ---- 1. creation ---- */
static double create_cost(int kind, int reps, int samples) {
    for (int s = 0; s < samples; s++) {
        shmem_barrier_all();
        double t0 = now_ns();
        for (int r = 0; r < reps; r++) {
            shmemx_aset_t a = SHMEM_TEAM_INVALID;
            shmem_team_t t = SHMEM_TEAM_INVALID;
            switch (kind) {
            case 0: a = shmemx_create_strided_aset(0, 1, npes); break;
            case 1: a = shmemx_create_log_strided_aset(0, 0, npes, 2); break;
            case 2: a = shmemx_create_custom_aset(0, reversed, npes, NULL); break;
            case 3: a = shmemx_create_generic_aset(list, npes); break;
            default:
                shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL, 0, &t);
                shmem_team_destroy(t);
            }
            if (kind < 4) shmemx_delete_aset(a);
        }
        times[s] = (now_ns() - t0) / reps;
    }
    return slowest_median(samples);
}

/* ---- 2. overlap ---- */
static volatile double sink;
static int idle; /* work by sleeping instead of computing */

static void sleep_ns(double ns) {
    struct timespec t = {(time_t)(ns / 1e9), (long)((long long)ns % 1000000000LL)};
    nanosleep(&t, NULL);
}

static double work_rate; /* loop iterations per ns */

static void work(double ns) {
    if (idle) {
        sleep_ns(ns);
        return;
    }
    long n = (long)(ns * work_rate);
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void calibrate_work(void) {
    double t0 = now_ns();
    work_rate = 1;
    work(2e7); /* 20 M iterations */
    work_rate = 2e7 / (now_ns() - t0);
}

static void post(int bcast, shmemx_request_h *r) {
    if (bcast)
        shmemx_broadcastmem_nbe(SHMEM_TEAM_WORLD, dst, src, BYTES, 0, r);
    else
        shmemx_long_sum_reduce_nbe(SHMEM_TEAM_WORLD, dst, src, LONGS, r);
}

static void overlap(int bcast, int samples, double *comm, double *wk, double *total) {
    shmemx_request_h r = NULL;
    for (int s = 0; s < 3; s++) { /* warm up */
        post(bcast, &r);
        shmemx_request_wait(&r);
    }
    for (int s = 0; s < samples; s++) {
        shmem_barrier_all();
        double t0 = now_ns();
        post(bcast, &r);
        shmemx_request_wait(&r);
        times[s] = now_ns() - t0;
    }
    static double c; /* PE 0's comm time, on every PE */
    *comm = slowest_median(samples);
    c = *comm;
    shmem_broadcastmem(SHMEM_TEAM_WORLD, &c, &c, sizeof c, 0);
    for (int s = 0; s < samples; s++) {
        shmem_barrier_all();
        double t0 = now_ns();
        work(c);
        times[s] = now_ns() - t0;
    }
    *wk = slowest_median(samples);
    for (int s = 0; s < samples; s++) {
        shmem_barrier_all();
        double t0 = now_ns();
        post(bcast, &r);
        work(c);
        shmemx_request_wait(&r);
        times[s] = now_ns() - t0;
    }
    *total = slowest_median(samples);
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int samples = quick ? 11 : 41;
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (int i = 0; i < npes; i++) list[i] = npes - 1 - i;
    for (int i = 0; i < LONGS; i++) src[i] = me + i;
    calibrate_work();

    const char *names[5] = {"strided", "log_strided", "custom", "generic", "team_split"};
    double cost[5];
    for (int k = 0; k < 5; k++) cost[k] = create_cost(k, k < 4 ? 2000 : 50, samples);

    double comm[4], wk[4], total[4];
    for (int b = 0; b < 4; b++) {
        idle = b >= 2;
        overlap(b % 2, samples, &comm[b], &wk[b], &total[b]);
    }

    if (me == 0) {
        printf("seed 004 (C, rshmem), %d PEs, %s mode; slowest PE, median of %d samples\n", npes,
               quick ? "quick" : "full", samples);
        printf("active-set creation + delete (local) vs team split + destroy (collective):\n");
        for (int k = 0; k < 5; k++)
            printf("  %-12s %10.1f ns  (%.0fx below team_split)\n", names[k], cost[k],
                   cost[4] / cost[k]);
        printf("overlap of a 1 MiB non-blocking collective on WORLD (COMB post-work-wait):\n");
        printf("  %-10s %10s %10s %10s %9s\n", "coll", "comm us", "work us", "total us", "overlap");
        const char *cn[4] = {"reduce", "broadcast", "reduce idle", "bcast idle"};
        for (int b = 0; b < 4; b++) {
            double ov = 100.0 * (1.0 - (total[b] - wk[b]) / comm[b]);
            printf("  %-11s %9.1f %10.1f %10.1f %8.1f%%\n", cn[b], comm[b] / 1e3, wk[b] / 1e3,
                   total[b] / 1e3, ov);
        }
        for (int k = 0; k < 5; k++) {
            char n[64];
            snprintf(n, sizeof n, "aset_create_%s", names[k]);
            json(n, -1, "latency_median", cost[k], "ns");
        }
        for (int b = 0; b < 4; b++) {
            const char *ns[4] = {"overlap_reduce_nbe", "overlap_broadcast_nbe",
                                 "overlap_reduce_nbe_idle", "overlap_broadcast_nbe_idle"};
            const char *n = ns[b];
            json(n, BYTES, "overlap", 100.0 * (1.0 - (total[b] - wk[b]) / comm[b]), "%");
            json(n, BYTES, "comm", comm[b], "ns");
            json(n, BYTES, "total", total[b], "ns");
        }
        fflush(stdout);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
