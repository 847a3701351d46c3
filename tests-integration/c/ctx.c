/* Communication contexts: creation and its failures, SHMEM_CTX_INVALID no-ops,
 * ctx_get_team, every shmem_ctx_ routine family (RMA, AMO, signals, ordering) with its
 * results checked, the C11 generics' context form, and contexts made from teams, whose
 * PE numbers are team ranks (a reversed world team and a split without PE 0). Each
 * family runs on SHMEM_CTX_DEFAULT, on a created world context and on team contexts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define N 16
#define BIG (64 * 1024) /* longs: 512 KiB, above the copy-engine threshold when it is 4K */

static long sl[4];   /* a static (symmetric) target */
static int *ia;      /* N ints */
static double *da;   /* N doubles */
static uint64_t *ua; /* N */
static char *bytes;  /* N */
static long double *lda;
static long *amo;      /* 4 */
static uint64_t *bits; /* 4 */
static double *damo;  /* 1 */
static long *sbuf;     /* N, put_signal target */
static uint64_t *sig;  /* 3 signals, one per kind of update */
static long *big;      /* BIG */
static long *bigsrc;   /* BIG, local */

static void reset(shmem_team_t team) {
    for (int i = 0; i < N; i++) {
        ia[i] = -1; da[i] = -1.0; ua[i] = 0; bytes[i] = 0; sbuf[i] = -1;
    }
    for (int i = 0; i < 4; i++) { amo[i] = 0; bits[i] = 0; sl[i] = -1; }
    lda[0] = 0.0L; damo[0] = 0.0; sig[0] = 0; sig[1] = 0; sig[2] = 0;
    for (int i = 0; i < BIG; i++) big[i] = -1;
    shmem_team_sync(team);
}

/* Runs every family on `ctx`, whose PE numbers are ranks of `team` (this PE is a member). */
static void exercise(shmem_ctx_t ctx, shmem_team_t team) {
    int me = shmem_my_pe();
    int tme = shmem_team_my_pe(team), tn = shmem_team_n_pes(team);
    int right = (tme + 1) % tn, left = (tme + tn - 1) % tn;
    int lw = shmem_team_translate_pe(team, left, SHMEM_TEAM_WORLD); /* its world number */
    CHECK(tme >= 0 && lw >= 0);
    shmem_team_t got_team = SHMEM_TEAM_INVALID;
    CHECK(shmem_ctx_get_team(ctx, &got_team) == 0 && got_team == team);
    reset(team);

    /* Contiguous typed put and get; gets read back from the right what this PE put. */
    int src[N], got[N];
    for (int i = 0; i < N; i++) src[i] = me * 100 + i;
    shmem_ctx_int_put(ctx, ia, src, N, right);
    shmem_ctx_quiet(ctx);
    shmem_team_sync(team);
    for (int i = 0; i < N; i++) CHECK(ia[i] == lw * 100 + i);
    shmem_ctx_int_get(ctx, got, ia, N, right);
    for (int i = 0; i < N; i++) CHECK(got[i] == me * 100 + i);
    shmem_team_sync(team);

    /* nbi forms, completed by the context's quiet, and by pe_quiet. */
    double ds[N], dg[N];
    for (int i = 0; i < N; i++) ds[i] = me + i / 8.0;
    shmem_ctx_double_put_nbi(ctx, da, ds, N, right);
    shmem_ctx_pe_quiet(ctx, &right, 1);
    for (int i = 0; i < BIG; i++) bigsrc[i] = (long)me * BIG + i;
    shmem_ctx_long_put_nbi(ctx, big, bigsrc, BIG, right);
    shmem_ctx_quiet(ctx);
    shmem_team_sync(team);
    for (int i = 0; i < N; i++) CHECK(da[i] == lw + i / 8.0);
    for (int i = 0; i < BIG; i += 4093) CHECK(big[i] == (long)lw * BIG + i);
    CHECK(big[BIG - 1] == (long)lw * BIG + BIG - 1);
    shmem_ctx_double_get_nbi(ctx, dg, da, N, right);
    for (int i = 0; i < BIG; i++) bigsrc[i] = 0;
    shmem_ctx_long_get_nbi(ctx, bigsrc, big, BIG, right);
    shmem_ctx_quiet(ctx);
    for (int i = 0; i < N; i++) CHECK(dg[i] == me + i / 8.0);
    for (int i = 0; i < BIG; i += 4093) CHECK(bigsrc[i] == (long)me * BIG + i);
    shmem_team_sync(team);

    /* p and g, on a static and in long double. */
    shmem_ctx_long_p(ctx, &sl[0], me, right);
    shmem_ctx_longdouble_p(ctx, lda, 0.25L + me, right);
    shmem_ctx_quiet(ctx);
    shmem_team_sync(team);
    CHECK(sl[0] == lw && lda[0] == 0.25L + lw);
    CHECK(shmem_ctx_long_g(ctx, &sl[0], right) == me);
    CHECK(shmem_ctx_longdouble_g(ctx, lda, right) == 0.25L + me);
    shmem_team_sync(team);

    /* Strided and blocked. */
    for (int i = 0; i < N; i++) ia[i] = -1;
    shmem_team_sync(team);
    shmem_ctx_int_iput(ctx, ia, src, 2, 1, N / 2, right);
    shmem_ctx_quiet(ctx);
    shmem_team_sync(team);
    for (int i = 0; i < N; i++) CHECK(ia[i] == (i % 2 == 0 ? lw * 100 + i / 2 : -1));
    shmem_ctx_int_iget(ctx, got, ia, 1, 2, N / 2, right);
    for (int i = 0; i < N / 2; i++) CHECK(got[i] == me * 100 + i);
    shmem_team_sync(team);
    for (int i = 0; i < N; i++) ia[i] = -1;
    shmem_team_sync(team);
    shmem_ctx_int_ibput(ctx, ia, src, 4, 2, 2, 3, right); /* 3 blocks of 2 */
    shmem_ctx_quiet(ctx);
    shmem_team_sync(team);
    for (int b = 0; b < 3; b++) {
        CHECK(ia[4 * b] == lw * 100 + 2 * b && ia[4 * b + 1] == lw * 100 + 2 * b + 1);
        CHECK(ia[4 * b + 2] == -1);
    }
    shmem_ctx_int_ibget(ctx, got, ia, 2, 4, 2, 3, right);
    for (int i = 0; i < 6; i++) CHECK(got[i] == me * 100 + i);
    shmem_team_sync(team);

    /* SIZE and mem forms (put128 moves 16-byte elements). */
    uint64_t s64[N], g64[N];
    for (int i = 0; i < N; i++) s64[i] = ((uint64_t)me << 32) | (uint64_t)i;
    shmem_ctx_put128(ctx, ua, s64, N / 2, right);
    shmem_ctx_putmem_nbi(ctx, bytes, "context!", 9, right);
    shmem_ctx_quiet(ctx);
    shmem_team_sync(team);
    for (int i = 0; i < N; i++) CHECK(ua[i] == (((uint64_t)lw << 32) | (uint64_t)i));
    CHECK(strcmp(bytes, "context!") == 0);
    shmem_ctx_get64(ctx, g64, ua, N, right);
    for (int i = 0; i < N; i++) CHECK(g64[i] == s64[i]);
    uint32_t g32[2];
    shmem_ctx_get32(ctx, g32, ua, 2, right);
    CHECK(g32[0] == 0 && g32[1] == (uint32_t)me);
    char gm[9];
    shmem_ctx_getmem(ctx, gm, bytes, 9, right);
    CHECK(strcmp(gm, "context!") == 0);
    shmem_team_sync(team);

    /* Atomics on the right neighbour's words (only this PE touches them). */
    shmem_ctx_long_atomic_set(ctx, &amo[0], me, right);
    CHECK(shmem_ctx_long_atomic_fetch(ctx, &amo[0], right) == me);
    CHECK(shmem_ctx_long_atomic_swap(ctx, &amo[0], 7, right) == me);
    CHECK(shmem_ctx_long_atomic_compare_swap(ctx, &amo[0], 7, 9, right) == 7);
    CHECK(shmem_ctx_long_atomic_compare_swap(ctx, &amo[0], 7, 11, right) == 9);
    CHECK(shmem_ctx_long_atomic_fetch_inc(ctx, &amo[0], right) == 9);
    shmem_ctx_long_atomic_inc(ctx, &amo[0], right);
    CHECK(shmem_ctx_long_atomic_fetch_add(ctx, &amo[0], 5, right) == 11);
    shmem_ctx_long_atomic_add(ctx, &amo[0], 5, right);
    shmem_ctx_uint64_atomic_set(ctx, &bits[0], 0xF0, right);
    CHECK(shmem_ctx_uint64_atomic_fetch_and(ctx, &bits[0], 0x3C, right) == 0xF0);
    CHECK(shmem_ctx_uint64_atomic_fetch_or(ctx, &bits[0], 0x01, right) == 0x30);
    CHECK(shmem_ctx_uint64_atomic_fetch_xor(ctx, &bits[0], 0x11, right) == 0x31);
    shmem_ctx_uint64_atomic_and(ctx, &bits[0], 0x60, right);
    shmem_ctx_uint64_atomic_or(ctx, &bits[0], 0x05, right);
    shmem_ctx_uint64_atomic_xor(ctx, &bits[0], 0x0F, right);
    shmem_ctx_double_atomic_set(ctx, damo, 1.5, right);
    CHECK(shmem_ctx_double_atomic_swap(ctx, damo, 2.5, right) == 1.5);
    CHECK(shmem_ctx_double_atomic_fetch(ctx, damo, right) == 2.5);
    /* Fetching nbi forms: values land by the context's quiet. */
    long f[6];
    uint64_t fb[3];
    double fd;
    shmem_ctx_long_atomic_fetch_nbi(ctx, &f[0], &amo[0], right);
    shmem_ctx_long_atomic_fetch_add_nbi(ctx, &f[1], &amo[1], 3, right);
    shmem_ctx_long_atomic_fetch_inc_nbi(ctx, &f[2], &amo[1], right);
    shmem_ctx_long_atomic_swap_nbi(ctx, &f[3], &amo[1], 40, right);
    shmem_ctx_long_atomic_compare_swap_nbi(ctx, &f[4], &amo[1], 40, 41, right);
    shmem_ctx_uint64_atomic_fetch_and_nbi(ctx, &fb[0], &bits[1], 0, right);
    shmem_ctx_uint64_atomic_fetch_or_nbi(ctx, &fb[1], &bits[1], 6, right);
    shmem_ctx_uint64_atomic_fetch_xor_nbi(ctx, &fb[2], &bits[1], 3, right);
    shmem_ctx_double_atomic_swap_nbi(ctx, &fd, damo, 3.5, right);
    shmem_ctx_quiet(ctx);
    CHECK(f[0] == 21 && f[1] == 0 && f[2] == 3 && f[3] == 4 && f[4] == 40);
    CHECK(fb[0] == 0 && fb[1] == 0 && fb[2] == 6 && fd == 2.5);
    shmem_team_sync(team);
    CHECK(amo[0] == 21 && amo[1] == 41 && bits[0] == 0x2A && bits[1] == 5 && damo[0] == 3.5);
    shmem_team_sync(team);

    /* Put with signal (blocking, nbi, large nbi), and signal set/add ordered by a fence. */
    long ls[N];
    for (int i = 0; i < N; i++) ls[i] = me * 1000 + i;
    shmem_ctx_long_put_signal(ctx, sbuf, ls, N, &sig[0], 1, SHMEM_SIGNAL_ADD, right);
    CHECK(shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 1) == 1);
    for (int i = 0; i < N; i++) CHECK(sbuf[i] == lw * 1000 + i);
    for (int i = 0; i < BIG; i++) bigsrc[i] = (long)me * 7 + i;
    shmem_ctx_putmem_signal_nbi(ctx, big, bigsrc, BIG * sizeof(long), &sig[1], 5,
                                SHMEM_SIGNAL_SET, right);
    shmem_ctx_quiet(ctx);
    CHECK(shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, 5) == 5);
    for (int i = 0; i < BIG; i += 4093) CHECK(big[i] == (long)lw * 7 + i);
    shmem_ctx_signal_set(ctx, &sig[2], 10, right);
    shmem_ctx_fence(ctx);
    shmem_ctx_signal_add(ctx, &sig[2], 5, right);
    CHECK(shmem_signal_wait_until(&sig[2], SHMEM_CMP_EQ, 15) == 15);
    shmem_team_sync(team);

    /* The C11 generics take a leading context. */
    shmem_put(ctx, ia, src, N, right);
    shmem_p(ctx, &sl[1], (long)me, right);
    shmem_atomic_add(ctx, &amo[2], 2L, right);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    shmem_team_sync(team);
    CHECK(ia[N - 1] == lw * 100 + N - 1 && sl[1] == lw && amo[2] == 2);
    shmem_team_sync(team);
    CHECK(shmem_g(ctx, &sl[1], right) == me);
    CHECK(shmem_atomic_fetch_add(ctx, &amo[2], 1L, right) == 2);
    long gl = 0;
    shmem_atomic_fetch_nbi(ctx, &gl, &amo[2], right);
    shmem_ctx_quiet(ctx);
    CHECK(gl == 3);
    shmem_signal_set(ctx, &sig[2], 0, right);
    shmem_signal_add(&sig[2], 0, shmem_my_pe()); /* the generic without a context */
    shmem_team_sync(team);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();

    ia = shmem_malloc(N * sizeof(int));
    da = shmem_malloc(N * sizeof(double));
    ua = shmem_malloc(N * sizeof(uint64_t));
    bytes = shmem_malloc(N);
    lda = shmem_malloc(sizeof(long double));
    amo = shmem_malloc(4 * sizeof(long));
    bits = shmem_malloc(4 * sizeof(uint64_t));
    damo = shmem_malloc(sizeof(double));
    sbuf = shmem_malloc(N * sizeof(long));
    sig = shmem_malloc(3 * sizeof(uint64_t));
    big = shmem_malloc(BIG * sizeof(long));
    bigsrc = malloc(BIG * sizeof(long));
    CHECK(ia && da && ua && bytes && lda && amo && bits && damo && sbuf && sig && big && bigsrc);

    /* SHMEM_CTX_INVALID: fence, quiet, pe_quiet and destroy do nothing; get_team fails. */
    shmem_ctx_fence(SHMEM_CTX_INVALID);
    shmem_ctx_quiet(SHMEM_CTX_INVALID);
    shmem_ctx_pe_quiet(SHMEM_CTX_INVALID, &me, 1);
    shmem_ctx_destroy(SHMEM_CTX_INVALID);
    shmem_pe_quiet(&me, 1);
    shmem_team_t t = SHMEM_TEAM_WORLD;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &t) != 0 && t == SHMEM_TEAM_INVALID);
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &t) == 0 && t == SHMEM_TEAM_WORLD);
    CHECK(SHMEM_CTX_DEFAULT != SHMEM_CTX_INVALID);

    /* Creation failures return nonzero and SHMEM_CTX_INVALID; they are not errors. */
    shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
    CHECK(shmem_ctx_create(1L << 20, &bad) != 0 && bad == SHMEM_CTX_INVALID);
    bad = SHMEM_CTX_DEFAULT;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0 && bad == SHMEM_CTX_INVALID);
    bad = SHMEM_CTX_DEFAULT;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, -1L, &bad) != 0 && bad == SHMEM_CTX_INVALID);

    /* The default context, and world contexts with each option. */
    exercise(SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD);
    long opts[4] = {0, SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE,
                    SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE};
    for (int k = 0; k < 4; k++) {
        shmem_ctx_t ctx = SHMEM_CTX_INVALID;
        CHECK(shmem_ctx_create(opts[k], &ctx) == 0);
        CHECK(ctx != SHMEM_CTX_INVALID && ctx != SHMEM_CTX_DEFAULT);
        exercise(ctx, SHMEM_TEAM_WORLD);
        shmem_ctx_destroy(ctx);
    }
    shmem_ctx_t wctx;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &wctx) == 0);
    exercise(wctx, SHMEM_TEAM_WORLD);
    shmem_ctx_destroy(wctx);

    /* The world reversed: team rank r is world PE npes-1-r. */
    shmem_team_t rev;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL, 0, &rev) == 0);
    CHECK(shmem_team_my_pe(rev) == npes - 1 - me);
    shmem_ctx_t rctx, rpriv;
    CHECK(shmem_team_create_ctx(rev, 0, &rctx) == 0);
    CHECK(shmem_team_create_ctx(rev, SHMEM_CTX_PRIVATE, &rpriv) == 0);
    exercise(rctx, rev);
    exercise(rpriv, rev);
    shmem_ctx_destroy(rpriv); /* private: the user's to destroy, before the team */
    /* rctx is shareable: destroying the team destroys it (debug.c checks its use fails). */
    shmem_team_destroy(rev);

    /* A team without PE 0 (ranks are world PE - 1), its contexts made and destroyed
     * many times over. */
    if (npes > 1) {
        shmem_team_t tail;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, npes - 1, NULL, 0, &tail) == 0);
        if (me == 0) {
            CHECK(tail == SHMEM_TEAM_INVALID);
        } else {
            CHECK(shmem_team_my_pe(tail) == me - 1);
            for (int k = 0; k < 1000; k++) {
                shmem_ctx_t c;
                CHECK(shmem_team_create_ctx(tail, k % 2 ? SHMEM_CTX_PRIVATE : 0, &c) == 0);
                shmem_team_t g = SHMEM_TEAM_INVALID;
                CHECK(shmem_ctx_get_team(c, &g) == 0 && g == tail);
                shmem_ctx_long_atomic_inc(c, &amo[3], 0); /* team rank 0 = world PE 1 */
                shmem_ctx_destroy(c);
            }
            shmem_ctx_t tctx;
            CHECK(shmem_team_create_ctx(tail, SHMEM_CTX_SERIALIZED, &tctx) == 0);
            shmem_team_sync(tail);
            if (me == 1) CHECK(amo[3] == 1000L * (npes - 1));
            shmem_team_sync(tail);
            exercise(tctx, tail);
            shmem_team_destroy(tail);
        }
    }

    /* Many world contexts alive at once, then destroyed. */
    shmem_barrier_all(); /* PE 0 skipped the tail team's work */
    shmem_ctx_t many[64];
    for (int k = 0; k < 64; k++) CHECK(shmem_ctx_create(SHMEM_CTX_SERIALIZED, &many[k]) == 0);
    for (int k = 0; k < 64; k++) shmem_ctx_int_p(many[k], &ia[k % N], k, (me + 1) % npes);
    for (int k = 0; k < 64; k++) shmem_ctx_destroy(many[k]);
    shmem_barrier_all();
    CHECK(ia[N - 1] == 64 - N + N - 1);

    /* 1.6 sessions: hints around a batch of operations; results are unchanged. */
    ia[0] = 0;
    shmem_barrier_all();
    shmem_ctx_t sc;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &sc) == 0);
    shmem_ctx_session_config_t scfg = {.total_ops = 16};
    shmem_ctx_session_start(sc, SHMEM_CTX_SESSION_BATCH, &scfg, SHMEM_CTX_SESSION_TOTAL_OPS);
    shmem_ctx_session_start(sc, 0, NULL, 0); /* combines with the running session */
    for (int k = 0; k < 16; k++) shmem_ctx_int_atomic_add(sc, &ia[0], 1, (me + 1) % npes);
    shmem_ctx_session_stop(sc);
    shmem_ctx_quiet(sc);
    shmem_ctx_session_start(SHMEM_CTX_INVALID, SHMEM_CTX_SESSION_BATCH, NULL, 0); /* no-op */
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);
    shmem_ctx_destroy(sc);
    shmem_barrier_all();
    CHECK(ia[0] == 16);

    free(bigsrc);
    shmem_free(big);
    shmem_barrier_all();
    DONE("ctx");
    shmem_finalize();
    return 0;
}
