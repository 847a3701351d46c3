/* shmem_coll.c: collective latency from C on any number of PEs: shmem_barrier_all,
 * broadcast and long sum reduction of 8 B and 64 KiB over all PEs.
 *
 * Portable OpenSHMEM 1.4 C: builds with rshmem's oshcc and with Open MPI's (OSHMEM) oshcc.
 * Open MPI 4.1.4's OSHMEM has no team API (no SHMEM_TEAM_WORLD, shmem_broadcastmem,
 * shmem_long_sum_reduce), so the figures compared across implementations use the
 * active-set forms (shmem_broadcast64, shmem_long_sum_to_all over PEs 0..npes-1). Where
 * the library declares the OpenSHMEM 1.5 team API (rshmem), the team forms on
 * SHMEM_TEAM_WORLD are timed as well ("team_" rows).
 *
 *   oshcc -O2 -o shmem_coll shmem_coll.c && oshrun -np 4 ./shmem_coll [--quick] [--sweep]
 *
 * --sweep: instead, sizes from 8 B to 1 MiB (x8, then x4) of the broadcast and the sum
 * reduction, active-set and (where declared) team forms, the broadcasts each followed by
 * shmem_barrier_all so that both forms do the same work (scripts/bench-seed004.sh).
 *
 * Timing: every PE runs the same batches of k back-to-back calls, k agreed from PE 0's
 * calibration (batches of about 1 ms, at least 4 calls); an untimed barrier starts each
 * batch. A batch's figure is the slowest PE's time per call; the reported figure is the
 * median (and minimum) over batches. pSync/pWrk alternate between two sets from one call
 * to the next, which the spec allows for calls that complete only when every PE has
 * entered them (barrier, reduction). A broadcast's root may leave before the others
 * arrive, so each active-set broadcast is followed by shmem_barrier_all
 * ("broadcast64_barrier"; subtract "barrier_all" for the broadcast alone). The team
 * broadcast needs no pSync and runs back to back.
 *
 * Output: a readable table (PE 0), then one JSON line per figure in rshmem-bench's
 * schema plus "impl", e.g.
 *   {"bench":"reduce_sum_to_all","size":65536,"pes":4,"metric":"latency_median",
 *    "value":12.3,"unit":"ns","impl":"rshmem"}
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

#if SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION >= 105
#define HAVE_TEAMS 1
#else
#define HAVE_TEAMS 0
#endif

#define BIG (64 * 1024)         /* bytes of the large collectives */
#define MAX_BYTES (1 << 20)     /* the largest size of --sweep */
#define MAX_LONGS (MAX_BYTES / 8)
#define WRK_LONGS (MAX_LONGS / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE)
#define MAX_SAMPLES 101

static long psync[2][SHMEM_REDUCE_SYNC_SIZE > SHMEM_BCAST_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE
                                                                      : SHMEM_BCAST_SYNC_SIZE];
static long pwrk[2][WRK_LONGS];
static long src[MAX_LONGS], dst[MAX_LONGS];
static long agreed;                    /* PE 0's decisions, read by every PE */
static double times[MAX_SAMPLES];      /* this PE's per-call times of every batch */
static int npes, me;
static size_t nlongs;                  /* elements of the current collective */
static unsigned long calls;            /* alternates pSync/pWrk */

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

typedef void (*body_fn)(long n);

static void b_barrier(long n) {
    for (long i = 0; i < n; i++) shmem_barrier_all();
}
static void b_bcast(long n) {
    for (long i = 0; i < n; i++) {
        shmem_broadcast64(dst, src, nlongs, 0, 0, 0, npes, psync[calls++ & 1]);
        shmem_barrier_all();
    }
}
static void b_reduce(long n) {
    for (long i = 0; i < n; i++) {
        unsigned long c = calls++ & 1;
        shmem_long_sum_to_all(dst, src, (int)nlongs, 0, 0, npes, pwrk[c], psync[c]);
    }
}
#if HAVE_TEAMS
static void b_team_bcast(long n) {
    for (long i = 0; i < n; i++) shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, nlongs * 8, 0);
}
static void b_team_reduce(long n) {
    for (long i = 0; i < n; i++) shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, nlongs);
}
static void b_team_bcast_barrier(long n) {
    for (long i = 0; i < n; i++) {
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, nlongs * 8, 0);
        shmem_barrier_all();
    }
}
#endif

struct bench {
    const char *name;    /* JSON "bench" */
    const char *routine; /* what one call is */
    body_fn f;
    size_t bytes;        /* JSON "size" (0: none) */
};

static const struct bench benches[] = {
    {"barrier_all", "shmem_barrier_all", b_barrier, 0},
    {"broadcast64_barrier", "shmem_broadcast64 + barrier_all", b_bcast, 8},
    {"broadcast64_barrier", "shmem_broadcast64 + barrier_all", b_bcast, BIG},
    {"reduce_sum_to_all", "shmem_long_sum_to_all", b_reduce, 8},
    {"reduce_sum_to_all", "shmem_long_sum_to_all", b_reduce, BIG},
#if HAVE_TEAMS
    {"team_broadcastmem", "shmem_broadcastmem (TEAM_WORLD)", b_team_bcast, 8},
    {"team_broadcastmem", "shmem_broadcastmem (TEAM_WORLD)", b_team_bcast, BIG},
    {"team_sum_reduce", "shmem_long_sum_reduce (TEAM_WORLD)", b_team_reduce, 8},
    {"team_sum_reduce", "shmem_long_sum_reduce (TEAM_WORLD)", b_team_reduce, BIG},
#endif
};
#define NBENCH ((int)(sizeof benches / sizeof benches[0]))

#define SWEEP_SIZES 7
static const size_t sweep_sizes[SWEEP_SIZES] = {8, 64, 512, 4096, 32768, 262144, MAX_BYTES};
static const struct bench sweep_kinds[] = {
    {"broadcast64_barrier", "shmem_broadcast64 + barrier_all", b_bcast, 0},
    {"reduce_sum_to_all", "shmem_long_sum_to_all", b_reduce, 0},
#if HAVE_TEAMS
    {"team_broadcastmem_barrier", "shmem_broadcastmem + barrier_all", b_team_bcast_barrier, 0},
    {"team_sum_reduce", "shmem_long_sum_reduce (TEAM_WORLD)", b_team_reduce, 0},
#endif
};
#define NKINDS ((int)(sizeof sweep_kinds / sizeof sweep_kinds[0]))
#define NMAX (NBENCH > NKINDS * SWEEP_SIZES ? NBENCH : NKINDS * SWEEP_SIZES)

/* PE 0's value of v, on every PE. */
static long agree(long v) {
    if (me == 0) agreed = v;
    shmem_barrier_all();
    long r = shmem_long_g(&agreed, 0);
    shmem_barrier_all();
    return r;
}

/* Calls per batch: about target_ns on PE 0, at least 4; warms the body up on the way.
 * Each size is timed three times and the fastest counts: on a loaded machine one
 * descheduling (a few ms) during calibration would otherwise shrink the batch to 4 calls,
 * and every sample would then measure the scheduler's time slice, not the call. */
static long calibrate(body_fn f, double target_ns) {
    f(4);
    for (long n = 1;; n *= 2) {
        double e = 1e300;
        for (int r = 0; r < 3; r++) {
            shmem_barrier_all();
            double t = now_ns();
            f(n);
            double d = now_ns() - t;
            if (d < e) e = d;
        }
        long k = 0;
        if (e >= target_ns / 2 || n >= (1L << 24)) {
            k = (long)(n * target_ns / (e < 1 ? 1 : e) + 0.5);
            if (k < 4) k = 4;
        }
        k = agree(k);
        if (k > 0) return k;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int quick = 0, sweep = 0;
    for (int a = 1; a < argc; a++) {
        quick |= strcmp(argv[a], "--quick") == 0;
        sweep |= strcmp(argv[a], "--sweep") == 0;
    }
    int samples = quick ? 21 : MAX_SAMPLES;
    static struct bench list[NMAX];
    int nb = 0;
    if (sweep) {
        for (int k = 0; k < NKINDS; k++)
            for (int z = 0; z < SWEEP_SIZES; z++) {
                list[nb] = sweep_kinds[k];
                list[nb++].bytes = sweep_sizes[z];
            }
    } else {
        for (int b = 0; b < NBENCH; b++) list[nb++] = benches[b];
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (int c = 0; c < 2; c++)
        for (size_t i = 0; i < sizeof psync[c] / sizeof psync[c][0]; i++)
            psync[c][i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < MAX_LONGS; i++) src[i] = me + i;
    shmem_barrier_all();

    double med[NMAX], mn[NMAX];
    double *all = malloc(sizeof(double) * MAX_SAMPLES);
    for (int b = 0; b < nb; b++) {
        const struct bench *B = &list[b];
        nlongs = B->bytes ? B->bytes / 8 : 0;
        long k = calibrate(B->f, 1e6);
        for (int s = 0; s < samples; s++) {
            shmem_barrier_all();
            double t0 = now_ns();
            B->f(k);
            times[s] = (now_ns() - t0) / (double)k;
        }
        shmem_barrier_all();
        if (me == 0) {
            /* The slowest PE's time of each batch. */
            for (int pe = 1; pe < npes; pe++) {
                double other[MAX_SAMPLES];
                shmem_getmem(other, times, sizeof(double) * (size_t)samples, pe);
                for (int s = 0; s < samples; s++)
                    if (other[s] > times[s]) times[s] = other[s];
            }
            memcpy(all, times, sizeof(double) * (size_t)samples);
            qsort(all, (size_t)samples, sizeof *all, cmp_double);
            med[b] = samples % 2 ? all[samples / 2]
                                 : (all[samples / 2 - 1] + all[samples / 2]) / 2;
            mn[b] = all[0];
        }
        shmem_barrier_all(); /* PE 0 has read every PE's times */
    }

    if (me == 0) {
        printf("shmem_coll (C): %s, %d PEs; %s mode; ns per call, slowest PE, median / min "
               "over %d batches\n", BENCH_IMPL, npes, quick ? "quick" : "full", samples);
        printf("%-22s %-36s %8s %21s\n", "bench", "routine", "size", "median / min");
        for (int b = 0; b < nb; b++) {
            char v[48];
            snprintf(v, sizeof v, "%.1f / %.1f", med[b], mn[b]);
            printf("%-22s %-36s %8zu %21s\n", list[b].name, list[b].routine,
                   list[b].bytes, v);
        }
        for (int b = 0; b < nb; b++) {
            const char *metric[2] = {"latency_median", "latency_min"};
            double val[2] = {med[b], mn[b]};
            for (int m = 0; m < 2; m++) {
                printf("{\"bench\":\"%s\",\"size\":", list[b].name);
                if (list[b].bytes) printf("%zu", list[b].bytes);
                else printf("null");
                printf(",\"pes\":%d,\"metric\":\"%s\",\"value\":%.4f,\"unit\":\"ns\","
                       "\"impl\":\"%s\"}\n", npes, metric[m], val[m], BENCH_IMPL);
            }
        }
        fflush(stdout);
    }
    free(all);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
