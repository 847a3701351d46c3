/* Explicit non-blocking operations (shmemx_*_nbe) and their requests: small and large
 * (>= 1 MiB, copy engine) puts and gets, typed/SIZE/mem forms, fetching AMOs, one handle
 * joined by many operations, requests merged across PEs and operation kinds, test until
 * complete (the handle is NULL afterwards), alloc/free, and the shmemx_ctx_ forms on a
 * world context and on a reversed team (team-relative PEs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <shmemx.h>
#include "check.h"

#define N 32
#define LARGE ((1 << 20) + 4096 + 24) /* bytes: over 1 MiB, not a multiple of a page */
#define CHUNK (128 * 1024)
#define NCHUNK 16

static long *la;      /* N */
static int *ia;       /* N */
static uint64_t *ua;  /* N */
static double *da;    /* 2 */
static long *ctr;     /* 4 */
static unsigned char *big;  /* max(LARGE, NCHUNK * CHUNK) */
static unsigned char *big2; /* LARGE */

static unsigned char pat(int pe, size_t i) { return (unsigned char)(pe * 31 + i * 7 + (i >> 12)); }

/* Waits for a request by testing it, as a caller overlapping work would. */
static void test_until_done(shmemx_request_h *req) {
    int flag = 0;
    long spins = 0;
    while (!flag) {
        CHECK(shmemx_request_test(req, &flag) == 0);
        spins++;
    }
    CHECK(*req == NULL);
    (void)spins;
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    int far = (me + 2) % npes, from_far = ((me - 2) % npes + npes) % npes;
    size_t bigsize = LARGE > NCHUNK * CHUNK ? LARGE : NCHUNK * CHUNK;

    la = shmem_calloc(N, sizeof(long));
    ia = shmem_calloc(N, sizeof(int));
    ua = shmem_calloc(N, sizeof(uint64_t));
    da = shmem_calloc(2, sizeof(double));
    ctr = shmem_calloc(4, sizeof(long));
    big = shmem_malloc(bigsize);
    big2 = shmem_malloc(LARGE);
    unsigned char *lsrc = malloc(bigsize), *ldst = malloc(bigsize);
    CHECK(la && ia && ua && da && ctr && big && big2 && lsrc && ldst);
    for (size_t i = 0; i < bigsize; i++) lsrc[i] = pat(me, i);

    /* A NULL handle is an empty, complete request. */
    shmemx_request_h req = NULL;
    int flag = 0;
    CHECK(shmemx_request_test(&req, &flag) == 0 && flag == 1 && req == NULL);
    CHECK(shmemx_request_wait(&req) == 0 && req == NULL);
    CHECK(shmemx_request_free(&req) == 0 && req == NULL);

    /* Small typed put: the operation allocates the request; wait releases it. */
    long ls[N];
    for (int i = 0; i < N; i++) ls[i] = me * 1000 + i;
    shmemx_long_put_nbe(la, ls, N, right, &req);
    CHECK(req != NULL);
    CHECK(shmemx_request_wait(&req) == 0 && req == NULL);
    shmem_barrier_all();
    for (int i = 0; i < N; i++) CHECK(la[i] == left * 1000 + i);

    /* Small typed get, SIZE and mem forms, each on its own request. */
    long lg[N];
    shmemx_request_h r[4] = {NULL, NULL, NULL, NULL};
    shmemx_long_get_nbe(lg, la, N, right, &r[0]);
    uint64_t u64[N], g32[N];
    for (int i = 0; i < N; i++) u64[i] = ((uint64_t)me << 40) + (uint64_t)i;
    shmemx_put64_nbe(ua, u64, N, right, &r[1]);
    shmemx_putmem_nbe(ia, "nbe!", 5, right, &r[2]);
    CHECK(shmemx_request_wait(&r[0]) == 0 && shmemx_request_wait(&r[1]) == 0);
    test_until_done(&r[2]);
    for (int i = 0; i < N; i++) CHECK(lg[i] == me * 1000 + i);
    shmem_barrier_all();
    for (int i = 0; i < N; i++) CHECK(ua[i] == ((uint64_t)left << 40) + (uint64_t)i);
    CHECK(memcmp(ia, "nbe!", 5) == 0);
    shmemx_get32_nbe(g32, ua, 2 * N, right, &r[0]); /* 2N 32-bit words = N 64-bit ones */
    shmemx_get128_nbe(lg, la, N / 2, right, &r[1]);
    char gm[5];
    shmemx_getmem_nbe(gm, ia, 5, right, &r[2]);
    shmemx_int_get_nbe((int *)&lg[0], ia, 0, right, &r[3]); /* nothing to move */
    for (int k = 0; k < 4; k++) CHECK(shmemx_request_wait(&r[k]) == 0 && r[k] == NULL);
    CHECK(memcmp(g32, u64, N * sizeof(uint64_t)) == 0);
    for (int i = 1; i < N; i++) CHECK(lg[i] == me * 1000 + i);
    CHECK(memcmp(gm, "nbe!", 5) == 0);
    shmem_barrier_all();

    /* Large put (copy engine at the default 256K threshold), completed by testing. */
    shmemx_putmem_nbe(big, lsrc, LARGE, right, &req);
    test_until_done(&req);
    shmem_barrier_all();
    for (size_t i = 0; i < LARGE; i += 509) CHECK(big[i] == pat(left, i));
    CHECK(big[LARGE - 1] == pat(left, LARGE - 1));
    /* Large get: reads back what this PE put on the right. */
    memset(ldst, 0, bigsize);
    shmemx_getmem_nbe(ldst, big, LARGE, right, &req);
    CHECK(shmemx_request_wait(&req) == 0 && req == NULL);
    CHECK(memcmp(ldst, lsrc, LARGE) == 0);
    shmem_barrier_all();

    /* One handle for many operations: the first allocates, the others join. */
    for (int k = 0; k < NCHUNK; k++)
        shmemx_putmem_nbe(big + (size_t)k * CHUNK, lsrc + (size_t)k * CHUNK, CHUNK, right, &req);
    shmemx_long_put_nbe(la, ls, N, right, &req);
    long fetched = -1;
    shmemx_long_fadd_nbe(&fetched, &ctr[0], 1, right, &req);
    CHECK(shmemx_request_wait(&req) == 0 && req == NULL);
    CHECK(fetched == 0);
    shmem_barrier_all();
    for (size_t i = 0; i < (size_t)NCHUNK * CHUNK; i += 4099) CHECK(big[i] == pat(left, i));
    CHECK(ctr[0] == 1);
    shmem_barrier_all();

    /* Fetching AMOs on the right neighbour's words (only this PE touches them). */
    long fl[4];
    int fi[2];
    uint64_t fu[4];
    double fd[2];
    shmemx_request_h a = NULL;
    shmemx_long_swap_nbe(&fl[0], &ctr[1], 5, right, &a);
    CHECK(shmemx_request_wait(&a) == 0);
    shmemx_long_cswap_nbe(&fl[1], &ctr[1], 5, 8, right, &a);
    CHECK(shmemx_request_wait(&a) == 0); /* operations on one request are unordered */
    shmemx_long_cswap_nbe(&fl[2], &ctr[1], 5, 9, right, &a); /* fails: it is 8 */
    CHECK(shmemx_request_wait(&a) == 0);
    shmemx_long_finc_nbe(&fl[3], &ctr[1], right, &a);
    shmemx_int_fetch_nbe(&fi[0], &ia[N - 1], right, &a);
    shmemx_uint64_fetch_or_nbe(&fu[0], &ua[N - 1], 0xF, right, &a);
    CHECK(shmemx_request_wait(&a) == 0);
    shmemx_uint64_fetch_and_nbe(&fu[1], &ua[N - 1], 0x3C, right, &a);
    CHECK(shmemx_request_wait(&a) == 0);
    shmemx_uint64_fetch_xor_nbe(&fu[2], &ua[N - 1], 0x5, right, &a);
    shmemx_double_swap_nbe(&fd[0], &da[0], 2.5, right, &a);
    CHECK(shmemx_request_wait(&a) == 0);
    shmemx_double_fetch_nbe(&fd[1], &da[0], right, &a);
    shmemx_int_fadd_nbe(&fi[1], &ia[N - 1], 0, right, &a);
    shmemx_uint64_fetch_nbe(&fu[3], &ua[N - 1], right, &a);
    test_until_done(&a);
    uint64_t last = ((uint64_t)me << 40) + N - 1; /* what this PE put there */
    CHECK(fl[0] == 0 && fl[1] == 5 && fl[2] == 8 && fl[3] == 8);
    CHECK(fi[0] == 0 && fi[1] == 0);
    CHECK(fu[0] == last && fu[1] == (last | 0xF) && fu[2] == ((last | 0xF) & 0x3C));
    CHECK(fu[3] == (((last | 0xF) & 0x3C) ^ 0x5));
    CHECK(fd[0] == 0.0 && fd[1] == 2.5);
    shmem_barrier_all();
    CHECK(ctr[1] == 9 && da[0] == 2.5);
    shmem_barrier_all();

    /* Merged requests across PEs and kinds: a large put to the right, a large get from
     * the left, a fetching AMO to PE 0 and a small put two PEs on, merged into an
     * allocated request; the merged-in handles are consumed (NULL). */
    memset(ldst, 0, bigsize);
    shmemx_request_h m = NULL, parts[4] = {NULL, NULL, NULL, NULL};
    shmemx_request_params_t params = {0};
    CHECK(shmemx_request_alloc(params, &m) == 0 && m != NULL);
    long ticket = -1;
    shmemx_putmem_nbe(big2, lsrc, LARGE, right, &parts[0]);
    shmemx_getmem_nbe(ldst, big, LARGE, left, &parts[1]);
    shmemx_long_fadd_nbe(&ticket, &ctr[2], 1, 0, &parts[2]);
    shmemx_int_put_nbe(&ia[0], &me, 1, far, &parts[3]);
    shmemx_request_h *pp[5] = {&parts[0], &parts[1], &parts[2], &parts[3], &m};
    CHECK(shmemx_merge_request(5, pp, &m) == 0);
    for (int k = 0; k < 4; k++) CHECK(parts[k] == NULL);
    CHECK(m != NULL);
    test_until_done(&m);
    CHECK(ticket >= 0 && ticket < npes);
    /* The left's big holds (NCHUNK chunks of) the left's left data. */
    int ll = (left + npes - 1) % npes;
    for (size_t i = 0; i < LARGE; i += 4099) CHECK(ldst[i] == pat(ll, i));
    shmem_barrier_all();
    for (size_t i = 0; i < LARGE; i += 509) CHECK(big2[i] == pat(left, i));
    CHECK(ia[0] == from_far);
    if (me == 0) CHECK(ctr[2] == npes);
    shmem_barrier_all();

    /* Merging into an empty handle allocates; merging twice, and a NULL part, are fine. */
    shmemx_request_h m2 = NULL, p1 = NULL, p2 = NULL;
    shmemx_long_put_nbe(la, ls, N, right, &p1);
    shmemx_request_h *pq[3] = {&p1, &p2, &p1};
    CHECK(shmemx_merge_request(3, pq, &m2) == 0 && p1 == NULL && m2 != NULL);
    CHECK(shmemx_merge_request(0, NULL, &m2) == 0);
    CHECK(shmemx_request_free(&m2) == 0 && m2 == NULL);

    /* Alloc, join, free (free completes first). */
    CHECK(shmemx_request_alloc(params, &req) == 0 && req != NULL);
    shmemx_putmem_nbe(big, lsrc, LARGE, right, &req);
    CHECK(shmemx_request_free(&req) == 0 && req == NULL);
    shmem_barrier_all();
    CHECK(big[LARGE - 2] == pat(left, LARGE - 2));
    shmem_barrier_all();

    /* Context forms: a world context, then a reversed team (rank r = PE npes-1-r). */
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0);
    shmemx_ctx_putmem_nbe(ctx, big2, lsrc, LARGE, left, &req);
    shmemx_ctx_long_put_nbe(ctx, la, ls, N, left, &req);
    shmemx_ctx_long_fadd_nbe(ctx, &fl[0], &ctr[3], 10, left, &req);
    shmem_ctx_quiet(ctx); /* quiet ignores requests: the wait completes them */
    CHECK(shmemx_request_wait(&req) == 0 && req == NULL && fl[0] == 0);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    for (size_t i = 0; i < LARGE; i += 509) CHECK(big2[i] == pat(right, i));
    CHECK(la[N - 1] == right * 1000 + N - 1 && ctr[3] == 10);
    shmem_barrier_all();

    shmem_team_t rev;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL, 0, &rev) == 0);
    shmem_ctx_t tctx;
    CHECK(shmem_team_create_ctx(rev, 0, &tctx) == 0);
    int trank = shmem_team_my_pe(rev);
    int tnext = (trank + 1) % npes; /* team rank after mine: world PE (me - 1) mod npes */
    shmemx_ctx_getmem_nbe(tctx, ldst, big2, LARGE, tnext, &req);
    shmemx_ctx_uint64_get_nbe(tctx, u64, ua, N, tnext, &req);
    shmemx_ctx_long_swap_nbe(tctx, &fl[1], &ctr[3], me, tnext, &req);
    test_until_done(&req);
    shmemx_ctx_int64_fetch_xor_nbe(tctx, &fl[2], &ctr[3], 0, tnext, &req);
    CHECK(shmemx_request_wait(&req) == 0 && req == NULL);
    int tw = shmem_team_translate_pe(rev, tnext, SHMEM_TEAM_WORLD);
    CHECK(tw == left);
    /* The left's big2 holds the left's right (this PE)'s data. */
    for (size_t i = 0; i < LARGE; i += 509) CHECK(ldst[i] == pat(me, i));
    CHECK(u64[0] == ((uint64_t)((left + npes - 1) % npes) << 40));
    CHECK(fl[1] == 10 && fl[2] == me);
    shmem_team_destroy(rev); /* destroys tctx */
    shmem_barrier_all();

    /* C11 generics pick the typed routine by the pointee, with or without a context. */
    {
        long *gv = shmem_calloc(2, sizeof(long));
        CHECK(gv != NULL);
        shmemx_request_h g = NULL;
        long gl[N], back[N], old0 = -1, old1 = -1;
        for (int i = 0; i < N; i++) gl[i] = 7000 + me * 10 + i;
        shmemx_put_nbe(la, gl, N, right, &g);
        shmemx_fadd_nbe(&old0, &gv[0], 5L, right, &g);
        shmemx_finc_nbe(SHMEM_CTX_DEFAULT, &old1, &gv[1], right, &g);
        CHECK(shmemx_request_wait(&g) == 0 && g == NULL);
        CHECK(old0 == 0 && old1 == 0);
        shmem_barrier_all();
        for (int i = 0; i < N; i++) CHECK(la[i] == 7000 + left * 10 + i);
        CHECK(gv[0] == 5 && gv[1] == 1);
        shmemx_get_nbe(SHMEM_CTX_DEFAULT, back, la, N, right, &g);
        CHECK(shmemx_request_wait(&g) == 0 && g == NULL);
        for (int i = 0; i < N; i++) CHECK(back[i] == 7000 + me * 10 + i);
        shmem_barrier_all();
        shmem_free(gv);
    }

    free(lsrc);
    free(ldst);
    shmem_free(big2);
    shmem_free(big);
    shmem_barrier_all();
    DONE("nbe");
    shmem_finalize();
    return 0;
}
