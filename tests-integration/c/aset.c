/* Explicit active sets (seed 004): the four constructors, membership and rank
 * translation, long-lived sets used by many collectives (an active set is a team handle,
 * so every team collective takes one), sets only their members create, a reversed WORLD
 * (ranks differ from PE numbers), overlapping sets in sequence, deletion, and refusals. */
#include "check.h"
#include <shmemx.h>

#define MAXN 8
#define BIG 5000

static long *src, *dst, *big, *bigdst;
static long *bsrc, *bdst;

static int square_plus_start(int i, int start, int size, void *params) {
    (void)size;
    (void)params;
    return i * i + start;
}

static int reversed(int i, int start, int size, void *params) {
    (void)start;
    (void)size;
    return *(int *)params - 1 - i;
}

/* Collectives over `s` (this PE is a member); members are `pes[0..n)` in rank order. */
static void exercise(shmemx_aset_t s, const int *pes, int n) {
    int me = shmem_my_pe(), rank = -1, i;
    for (i = 0; i < n; i++)
        if (pes[i] == me) rank = i;
    CHECK(rank >= 0);
    CHECK(shmemx_in_aset(s) == 1 && shmemx_aset_size(s) == n);
    CHECK(shmem_team_my_pe(s) == rank && shmem_team_n_pes(s) == n);
    for (i = 0; i < n; i++) {
        CHECK(shmemx_aset_pe(s, i) == pes[i]);
        CHECK(shmemx_aset_rank(s, pes[i]) == i);
        CHECK(shmem_team_translate_pe(s, i, SHMEM_TEAM_WORLD) == pes[i]);
    }
    CHECK(shmemx_aset_pe(s, n) == -1);
    shmemx_barrier_aset(s);
    shmemx_sync_aset(s);

    /* a long-lived set: many calls */
    for (int it = 0; it < 50; it++) {
        src[0] = me + it;
        src[1] = 1;
        CHECK(shmem_long_sum_reduce(s, dst, src, 2) == 0);
        long want = it * n;
        for (i = 0; i < n; i++) want += pes[i];
        CHECK(dst[0] == want && dst[1] == n);
    }
    CHECK(shmem_long_max_reduce(s, dst, src, 1) == 0);
    bsrc[0] = me * 7;
    bsrc[1] = rank;
    CHECK(shmem_broadcastmem(s, bdst, bsrc, 2 * sizeof(long), n - 1) == 0);
    CHECK(bdst[0] == pes[n - 1] * 7 && bdst[1] == n - 1);
    src[0] = rank;
    CHECK(shmem_long_fcollect(s, dst, src, 1) == 0);
    for (i = 0; i < n; i++) CHECK(dst[i] == i);
    for (i = 0; i < n; i++) src[i] = rank * 100 + i;
    CHECK(shmem_long_alltoall(s, dst, src, 1) == 0);
    for (i = 0; i < n; i++) CHECK(dst[i] == i * 100 + rank);
    for (i = 0; i <= rank; i++) src[i] = rank;
    CHECK(shmem_long_collect(s, dst, src, (size_t)rank + 1) == 0);
    for (i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) CHECK(dst[i * (i + 1) / 2 + j] == i);
    for (i = 0; i < BIG; i++) big[i] = (long)i * (rank + 1);
    CHECK(shmem_long_sum_reduce(s, bigdst, big, BIG) == 0);
    for (i = 0; i < BIG; i++) CHECK(bigdst[i] == (long)i * n * (n + 1) / 2);
    CHECK(shmem_team_sync(s) == 0);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), i, pes[MAXN];
    CHECK(npes <= MAXN);
    src = shmem_calloc(MAXN * MAXN, sizeof(long));
    dst = shmem_calloc(MAXN * MAXN, sizeof(long));
    bsrc = shmem_calloc(2, sizeof(long));
    bdst = shmem_calloc(2, sizeof(long));
    big = shmem_calloc(BIG, sizeof(long));
    bigdst = shmem_calloc(BIG, sizeof(long));
    CHECK(src && dst && bsrc && bdst && big && bigdst);

    /* strided: the evens, made only by their members (creation is local) */
    if (me % 2 == 0) {
        int n = (npes + 1) / 2;
        shmemx_aset_t evens = shmemx_create_strided_aset(0, 2, n);
        for (i = 0; i < n; i++) pes[i] = 2 * i;
        exercise(evens, pes, n);
        shmemx_delete_aset(evens);
    }
    shmem_barrier_all();

    /* log-strided: stride 2^1, the odds; evens get SHMEM_TEAM_INVALID */
    if (npes >= 2) {
        int n = npes / 2;
        shmemx_aset_t odds = shmemx_create_log_strided_aset(1, 1, n, 2);
        if (me % 2 == 1) {
            for (i = 0; i < n; i++) pes[i] = 1 + 2 * i;
            exercise(odds, pes, n);
        } else {
            CHECK(odds == SHMEM_TEAM_INVALID && shmemx_in_aset(odds) == 0);
            CHECK(shmemx_aset_size(odds) == -1);
        }
        shmemx_delete_aset(odds);
    }
    shmem_barrier_all();

    /* custom: the seed's PE_index^2 + PE_start, and WORLD reversed */
    {
        int n = npes >= 4 ? 2 : 1; /* PEs 1, 2 at 4 PEs; PE 1 alone below (if it exists) */
        if (npes >= 2) {
            shmemx_aset_t sq = shmemx_create_custom_aset(1, square_plus_start, n, NULL);
            int in = me == 1 || (n == 2 && me == 2);
            CHECK(shmemx_in_aset(sq) == in);
            if (in) {
                pes[0] = 1;
                pes[1] = 2;
                exercise(sq, pes, n);
            }
            shmemx_delete_aset(sq);
        }
        shmemx_aset_t rev = shmemx_create_custom_aset(0, reversed, npes, &npes);
        for (i = 0; i < npes; i++) pes[i] = npes - 1 - i;
        exercise(rev, pes, npes);
        shmemx_delete_aset(rev);
    }
    shmem_barrier_all();

    /* generic: an unordered list, {last, 0} */
    if (npes >= 2 && (me == 0 || me == npes - 1)) {
        int list[2] = {npes - 1, 0};
        shmemx_aset_t g = shmemx_create_generic_aset(list, 2);
        exercise(g, list, 2);
        shmemx_delete_aset(g);
    }
    shmem_barrier_all();

    /* overlapping sets alive at once, used in sequence: {0,1} and {1,2} */
    if (npes >= 3 && me <= 2) {
        shmemx_aset_t a = me <= 1 ? shmemx_create_strided_aset(0, 1, 2) : SHMEM_TEAM_INVALID;
        shmemx_aset_t b = me >= 1 ? shmemx_create_strided_aset(1, 1, 2) : SHMEM_TEAM_INVALID;
        for (int it = 0; it < 20; it++) {
            if (a != SHMEM_TEAM_INVALID) {
                int p[2] = {0, 1};
                exercise(a, p, 2);
            }
            if (b != SHMEM_TEAM_INVALID) {
                int p[2] = {1, 2};
                exercise(b, p, 2);
            }
        }
        shmemx_delete_aset(a);
        shmemx_delete_aset(b);
    }
    shmem_barrier_all();

    /* WORLD's members: WORLD's algorithms; deleting it leaves WORLD alone */
    {
        shmemx_aset_t w = shmemx_create_strided_aset(0, 1, npes);
        for (i = 0; i < npes; i++) pes[i] = i;
        exercise(w, pes, npes);
        shmemx_delete_aset(w);
    }
    {
        /* an active set cannot be split (its creation was not collective) */
        shmemx_aset_t s = shmemx_create_strided_aset(me, 1, 1);
        shmem_team_t t;
        if (npes > 1) { /* at 1 PE the set is WORLD itself */
            CHECK(shmem_team_split_strided(s, 0, 1, 1, NULL, 0, &t) != 0);
            CHECK(t == SHMEM_TEAM_INVALID);
        }
        pes[0] = me;
        exercise(s, pes, 1);
        shmem_team_destroy(s); /* the team routine deletes an active set too */
    }
    shmem_barrier_all();
    CHECK(shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes);
    DONE("aset");
    shmem_finalize();
    return 0;
}
