/* Threads under SHMEM_THREAD_MULTIPLE: 2-4 threads per PE (PE p runs 2 + p % 3), each
 * with its own private context, putting its slice to the right neighbour, adding to a
 * counter on every PE and exchanging tickets, plus explicit non-blocking puts on its
 * context and AMOs on the shared default context. Every result is checked. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <shmemx.h>
#include "check.h"

#define MAXT 4
#define M 64      /* longs per thread slice */
#define ITERS 2000 /* rounds per thread */
#define NBE (64 * 1024) /* bytes per thread, large enough for the copy engine at 4K */

static long *slices;   /* MAXT * M: slice t is written by thread t of the left PE */
static long *counter;  /* 2: [0] per-context adds, [1] default-context adds */
static long *tickets;  /* 1, on PE 0 */
static char *nbebuf;   /* MAXT * NBE */

struct arg {
    int tid, me, npes;
    long got_tickets;
};

static void *worker(void *p) {
    struct arg *a = p;
    int me = a->me, npes = a->npes, right = (me + 1) % npes;
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0);
    long src[M];
    char *nsrc = malloc(NBE);
    CHECK(nsrc != NULL);
    for (int i = 0; i < NBE; i++) nsrc[i] = (char)(me + a->tid + i);
    long last_ticket = -1;
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < M; i++) src[i] = ((long)me << 32) | ((long)a->tid << 24) | (it * M + i);
        shmem_ctx_long_put(ctx, &slices[a->tid * M], src, M, right);
        for (int pe = 0; pe < npes; pe++) shmem_ctx_long_atomic_add(ctx, &counter[0], 1, pe);
        shmem_long_atomic_inc(&counter[1], (me + it) % npes);
        long t = shmem_ctx_long_atomic_fetch_inc(ctx, tickets, 0);
        CHECK(t > last_ticket); /* tickets only grow */
        last_ticket = t;
        a->got_tickets++;
        if (it % 100 == 0) {
            shmemx_request_h req = NULL;
            shmemx_ctx_putmem_nbe(ctx, &nbebuf[(size_t)a->tid * NBE], nsrc, NBE, right, &req);
            long f = -1;
            shmemx_ctx_long_fadd_nbe(ctx, &f, &counter[0], 0, me, &req);
            CHECK(shmemx_request_wait(&req) == 0 && req == NULL && f >= 0);
        }
        if (it % 16 == 0) shmem_ctx_fence(ctx);
    }
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    free(nsrc);
    return NULL;
}

int main(void) {
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0);
    CHECK(provided == SHMEM_THREAD_MULTIPLE);
    int q = -1;
    shmem_query_thread(&q);
    CHECK(q == SHMEM_THREAD_MULTIPLE);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int left = (me + npes - 1) % npes;

    slices = shmem_calloc(MAXT * M, sizeof(long));
    counter = shmem_calloc(2, sizeof(long));
    tickets = shmem_calloc(1, sizeof(long));
    nbebuf = shmem_calloc(MAXT, NBE);
    CHECK(slices && counter && tickets && nbebuf);

    int nt = 2 + me % 3;
    pthread_t th[MAXT];
    struct arg args[MAXT];
    for (int t = 0; t < nt; t++) {
        args[t] = (struct arg){t, me, npes, 0};
        CHECK(pthread_create(&th[t], NULL, worker, &args[t]) == 0);
    }
    for (int t = 0; t < nt; t++) CHECK(pthread_join(th[t], NULL) == 0);
    for (int t = 0; t < nt; t++) CHECK(args[t].got_tickets == ITERS);
    shmem_barrier_all();

    /* The left PE's threads wrote slices 0..2+left%3-1 with their last round. */
    int lt = 2 + left % 3;
    for (int t = 0; t < MAXT; t++) {
        for (int i = 0; i < M; i++) {
            long want = t < lt ? (((long)left << 32) | ((long)t << 24) | ((ITERS - 1) * M + i)) : 0;
            CHECK(slices[t * M + i] == want);
        }
        for (int i = 0; i < NBE; i += 997)
            CHECK(nbebuf[(size_t)t * NBE + i] == (t < lt ? (char)(left + t + i) : 0));
    }
    long threads = 0; /* threads in the whole job */
    for (int pe = 0; pe < npes; pe++) threads += 2 + pe % 3;
    CHECK(counter[0] == threads * ITERS);
    long inc = 0; /* default-context increments aimed here: round it hits PE (p + it) % npes */
    for (int pe = 0; pe < npes; pe++)
        for (int it = 0; it < ITERS; it++)
            if ((pe + it) % npes == me) inc += 2 + pe % 3;
    CHECK(counter[1] == inc);
    if (me == 0) CHECK(tickets[0] == threads * ITERS);
    shmem_barrier_all();
    DONE("ctx_threads");
    shmem_finalize();
    return 0;
}
