/* shmem_ctx.c: message rate of T threads of one PE on shared, serialized and private
 * contexts against T single-threaded PEs (seed 001, Figs. 4-5), from C, so that the same
 * program measures rshmem and Open MPI's OSHMEM.
 *
 * Portable OpenSHMEM 1.4 C plus POSIX threads: builds with rshmem's oshcc and with Open
 * MPI's (OSHMEM) oshcc.
 *
 *   oshcc -O2 -pthread -o shmem_ctx shmem_ctx.c && oshrun -np 2T ./shmem_ctx --threads T [--quick]
 *
 * Configurations, each with T concurrent issuers and the same targets:
 *   shared:     T threads of PE 0 on SHMEM_CTX_DEFAULT, thread i to region i of PE T;
 *   serialized: the same on one SHMEM_CTX_SERIALIZED context shared by the T threads,
 *               each call on it made under the program's own mutex (the attribute says
 *               the program serializes its use);
 *   private:    the same, each thread on a SHMEM_CTX_PRIVATE context it created;
 *   pes:        T single-threaded PEs, PE i to region i of PE T + i (the seed's reference).
 * Operations: 8-byte shmem_ctx_putmem and shmem_ctx_getmem, shmem_ctx_long_atomic_fetch_add;
 * windows of 64 then shmem_ctx_quiet, for a fixed duration. The rate is the sum over the
 * issuers of their operations per second; the figure is the median over samples, the
 * configurations interleaved sample by sample. PEs that do not issue in a phase wait in
 * shmem_long_wait_until until PE 0 says the phase is over: a target that slept instead
 * (as rshmem-bench threads' idle PEs do) stalls OSHMEM's user contexts, whose UCX workers
 * need the target's progress. rshmem's wait backs off to sleeping; OSHMEM's polls, so
 * there the idle PEs keep cores busy (on a small machine, part of its figure).
 *
 * Output: a readable table, then JSON lines in rshmem-bench threads' schema plus "impl":
 *   {"bench":"mt_put","size":8,"pes":4,"metric":"rate_private","value":12.3,
 *    "unit":"Mmsg/s","threads":2,"impl":"oshmem"}
 * A configuration the library cannot run (no SHMEM_THREAD_MULTIPLE, a failed
 * shmem_ctx_create) has no line; the table says why.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <shmem.h>
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

#define MAX_T 16
#define WINDOW 64
#define MAX_SAMPLES 31
#define LINE_LONGS 16 /* 128 bytes: a word per issuer on lines of its own */

enum { SHARED, SERIAL, PRIVATE, PES, NCONF };
enum { PUT, GET, FETCH, NOPS };
static const char *conf_name[NCONF] = {"shared", "serialized", "private", "pes"};
static const char *op_bench[NOPS] = {"mt_put", "mt_get", "mt_atomic_fetch"};

/* Symmetric data, on the heap (OSHMEM maps its heap between PEs of a node, not its static
 * data, which goes through the transport and needs the target's progress): a window of
 * 8-byte slots per issuer, an AMO word per issuer, and the phase bookkeeping. */
static long *region;  /* [MAX_T * WINDOW] */
static long *words;   /* [MAX_T * LINE_LONGS] */
static double *rates; /* PE 0: each issuer PE's rate of the phase [MAX_T] */
static long *ctl;     /* [0]: PE 0: issuers done, over all phases; [LINE_LONGS]: every PE:
                       * the last phase PE 0 closed; [2 * LINE_LONGS]: PE 0: whether the
                       * configuration runs */
#define FINISHED (&ctl[0])
#define DONE (&ctl[LINE_LONGS])
#define RUN (&ctl[2 * LINE_LONGS])

static int me, npes, T;
static double dur_ns;
static shmem_ctx_t serial_ctx;
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static int ctx_ok[NCONF];
static volatile long sink;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One issuer: op on ctx (under `lock` when not NULL) to slot i of pe; returns ops/s. */
static double issue(shmem_ctx_t ctx, pthread_mutex_t *lock, int op, int i, int pe) {
    long local[WINDOW];
    long acc = 0;
    unsigned long ops = 0;
    memset(local, 0, sizeof local);
    double t0 = now_ns(), t;
    do {
        for (int j = 0; j < WINDOW; j++) {
            if (lock) pthread_mutex_lock(lock);
            switch (op) {
            case PUT:
                shmem_ctx_putmem(ctx, &region[i * WINDOW + j], &local[j], 8, pe);
                break;
            case GET:
                shmem_ctx_getmem(ctx, &local[j], &region[i * WINDOW + j], 8, pe);
                break;
            default:
                acc += shmem_ctx_long_atomic_fetch_add(ctx, &words[i * LINE_LONGS], 1, pe);
            }
            if (lock) pthread_mutex_unlock(lock);
        }
        if (lock) pthread_mutex_lock(lock);
        shmem_ctx_quiet(ctx);
        if (lock) pthread_mutex_unlock(lock);
        ops += WINDOW;
        t = now_ns();
    } while (t - t0 < dur_ns);
    sink = acc; /* keeps the fetches */
    return ops * 1e9 / (t - t0);
}

struct arg {
    int conf, op, i;
    double rate;
};

static void *thread_main(void *p) {
    struct arg *a = p;
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    pthread_mutex_t *lock = NULL;
    if (a->conf == SERIAL) {
        ctx = serial_ctx;
        lock = &serial_lock;
    } else if (a->conf == PRIVATE && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        ctx_ok[PRIVATE] = 0;
        a->rate = -1.0;
        pthread_barrier_wait(&start);
        return NULL;
    }
    pthread_barrier_wait(&start);
    a->rate = issue(ctx, lock, a->op, a->i, T);
    if (a->conf == PRIVATE) shmem_ctx_destroy(ctx);
    return NULL;
}

/* T threads of PE 0 in configuration conf; returns the sum of their rates (< 0: failed). */
static double threads(int conf, int op) {
    pthread_t th[MAX_T];
    struct arg a[MAX_T];
    double sum = 0.0;
    for (int i = 0; i < T; i++) {
        a[i] = (struct arg){conf, op, i, 0.0};
        pthread_create(&th[i], NULL, thread_main, &a[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        if (a[i].rate < 0) return -1.0;
        sum += a[i].rate;
    }
    return sum;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    int quick = 0;
    T = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) T = atoi(argv[++i]);
        else {
            fprintf(stderr, "shmem_ctx: unknown argument %s (--threads T, --quick)\n", argv[i]);
            return 2;
        }
    }
    int provided = -1;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (T < 1 || T > MAX_T || npes != 2 * T) {
        if (me == 0)
            fprintf(stderr, "shmem_ctx: --threads T from 1 to %d, on exactly 2T PEs (T = %d, %d PEs)\n",
                    MAX_T, T, npes);
        shmem_finalize();
        return 2;
    }
    region = shmem_calloc(MAX_T * WINDOW, sizeof(long));
    words = shmem_calloc(MAX_T * LINE_LONGS, sizeof(long));
    rates = shmem_calloc(MAX_T, sizeof(double));
    ctl = shmem_calloc(3 * LINE_LONGS, sizeof(long));
    if (!region || !words || !rates || !ctl) {
        fprintf(stderr, "shmem_ctx: shmem_calloc failed\n");
        shmem_global_exit(1);
    }
    int samples = quick ? 3 : 11;
    dur_ns = quick ? 20e6 : 100e6;
    int multiple = provided == SHMEM_THREAD_MULTIPLE;
    for (int c = 0; c < NCONF; c++) ctx_ok[c] = c == PES || multiple;
    if (me == 0 && ctx_ok[SERIAL] && shmem_ctx_create(SHMEM_CTX_SERIALIZED, &serial_ctx) != 0)
        ctx_ok[SERIAL] = 0;
    pthread_barrier_init(&start, NULL, T);

    static double r[NOPS][NCONF][MAX_SAMPLES];
    long phase = 0, expected = 0;
    for (int op = 0; op < NOPS; op++) {
        for (int s = 0; s < samples; s++) {
            for (int c = 0; c < NCONF; c++) {
                /* Every PE knows whether a thread configuration runs: PE 0 decides. */
                if (me == 0) *RUN = ctx_ok[c];
                shmem_barrier_all();
                long go = shmem_long_atomic_fetch(RUN, 0);
                shmem_barrier_all();
                if (!go) {
                    r[op][c][s] = -1.0;
                    continue;
                }
                phase++;
                int issuers = c == PES ? T : 1;
                int active = c == PES ? me < T : me == 0;
                if (active) {
                    double v;
                    if (c == PES) {
                        v = issue(SHMEM_CTX_DEFAULT, NULL, op, me, T + me);
                        shmem_double_p(&rates[me], v, 0);
                        shmem_quiet();
                    } else {
                        v = threads(c, op);
                        rates[0] = v;
                    }
                    shmem_long_atomic_inc(FINISHED, 0);
                }
                if (me == 0) {
                    expected += issuers;
                    shmem_long_wait_until(FINISHED, SHMEM_CMP_GE, expected);
                    double sum = 0.0;
                    for (int i = 0; i < issuers; i++) {
                        if (rates[i] < 0) sum = -1e30;
                        sum += rates[i];
                    }
                    r[op][c][s] = sum < 0 ? -1.0 : sum / 1e6;
                    if (sum < 0) ctx_ok[c] = 0;
                    for (int p = 1; p < npes; p++) shmem_long_atomic_set(DONE, phase, p);
                    shmem_quiet();
                } else {
                    shmem_long_wait_until(DONE, SHMEM_CMP_GE, phase);
                }
                shmem_barrier_all();
            }
        }
    }

    if (me == 0) {
        printf("shmem_ctx (C): %s, %d PEs, T = %d threads of PE 0 -> PE %d; PEs: PE i -> PE %d+i; "
               "thread level %s; %s mode\n",
               BENCH_IMPL, npes, T, T, T,
               multiple ? "SHMEM_THREAD_MULTIPLE" : "below SHMEM_THREAD_MULTIPLE (threads skipped)",
               quick ? "quick" : "full");
        printf("aggregate message rate, Mmsg/s (median of %d samples of %.0f ms)\n", samples,
               dur_ns / 1e6);
        printf("%-16s %10s %10s %10s %10s\n", "op", "shared", "serialized", "private", "PEs");
        for (int op = 0; op < NOPS; op++) {
            double m[NCONF];
            printf("%-16s", op_bench[op]);
            for (int c = 0; c < NCONF; c++) {
                int ok = 1;
                for (int s = 0; s < samples; s++) ok &= r[op][c][s] >= 0;
                m[c] = ok ? median(r[op][c], samples) : -1.0;
                if (m[c] >= 0) printf(" %10.2f", m[c]);
                else printf(" %10s", "-");
            }
            printf("\n");
            for (int c = 0; c < NCONF; c++)
                if (m[c] >= 0)
                    printf("{\"bench\":\"%s\",\"size\":8,\"pes\":%d,\"metric\":\"rate_%s\","
                           "\"value\":%.4f,\"unit\":\"Mmsg/s\",\"threads\":%d,\"impl\":\"%s\"}\n",
                           op_bench[op], npes, conf_name[c], m[c], T, BENCH_IMPL);
        }
        if (!ctx_ok[SERIAL] && multiple) printf("(serialized: shmem_ctx_create failed)\n");
        if (!ctx_ok[PRIVATE] && multiple) printf("(private: shmem_ctx_create failed)\n");
        if (ctx_ok[SERIAL]) shmem_ctx_destroy(serial_ctx);
    }
    pthread_barrier_destroy(&start);
    shmem_barrier_all();
    shmem_free(ctl);
    shmem_free(rates);
    shmem_free(words);
    shmem_free(region);
    shmem_finalize();
    return 0;
}
