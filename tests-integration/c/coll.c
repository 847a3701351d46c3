/* Team-based collectives through the C API: broadcast, collect, fcollect, alltoall(s),
 * reductions (typed, C11 generic, in place, complex) and the 1.6 scans, on WORLD and on
 * a split team (the even PEs), plus SHMEM_TEAM_INVALID and a pshmem twin. */
#include "check.h"
#include <complex.h>
#include <pshmem.h>

#define MAXN 8

/* Symmetric buffers (on the symmetric heap). */
static long *lsrc, *ldst;
static double *dsrc, *ddst;
static char *msrc, *mdst;
static int *fsrc, *fdst;
static short *csrc, *cdst;
static int *asrc, *adst;
static long *ssrc, *sdst;
static int *ired, *ires;
static unsigned *ubits, *ures;
static double *dred, *dres;
static double _Complex *zsrc, *zres;
static float _Complex *fz, *fzres;
static long *scan_src, *scan_dst;
static uint64_t *u64src, *u64dst;

#define ALLOC(p, n) CHECK(((p) = shmem_calloc((n), sizeof(*(p)))) != NULL)

static void alloc_all(void) {
    ALLOC(lsrc, 4); ALLOC(ldst, 4);
    ALLOC(dsrc, 3); ALLOC(ddst, 3);
    ALLOC(msrc, 5); ALLOC(mdst, 5);
    ALLOC(fsrc, 2); ALLOC(fdst, 2 * MAXN);
    ALLOC(csrc, 2 * MAXN); ALLOC(cdst, MAXN * (MAXN + 1));
    ALLOC(asrc, 2 * MAXN); ALLOC(adst, 2 * MAXN);
    ALLOC(ssrc, 3 * MAXN); ALLOC(sdst, 2 * MAXN);
    ALLOC(ired, 3); ALLOC(ires, 3);
    ALLOC(ubits, 2); ALLOC(ures, 2);
    ALLOC(dred, 2); ALLOC(dres, 2);
    ALLOC(zsrc, 2); ALLOC(zres, 2);
    ALLOC(fz, 1); ALLOC(fzres, 1);
    ALLOC(scan_src, 2); ALLOC(scan_dst, 2);
    ALLOC(u64src, 1); ALLOC(u64dst, 1);
}

/* Every collective family on `team` (this PE is a member). */
static void run(shmem_team_t team, const char *what) {
    int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
    int root = n - 1, i, k;
    (void)what;

    /* broadcast: typed, generic and mem; the root's dest is updated too */
    for (i = 0; i < 4; i++) {
        lsrc[i] = me * 100 + i;
        ldst[i] = -1;
    }
    CHECK(shmem_long_broadcast(team, ldst, lsrc, 4, root) == 0);
    for (i = 0; i < 4; i++) CHECK(ldst[i] == root * 100 + i);
    for (i = 0; i < 3; i++) {
        dsrc[i] = me + 0.5 * i;
        ddst[i] = -1;
    }
    CHECK(shmem_broadcast(team, ddst, dsrc, 3, 0) == 0);
    for (i = 0; i < 3; i++) CHECK(ddst[i] == 0.5 * i);
    for (i = 0; i < 5; i++) msrc[i] = (char)('a' + me + i);
    CHECK(shmem_broadcastmem(team, mdst, msrc, 5, root) == 0);
    for (i = 0; i < 5; i++) CHECK(mdst[i] == (char)('a' + root + i));

    /* fcollect */
    fsrc[0] = me;
    fsrc[1] = me * 10;
    CHECK(shmem_int_fcollect(team, fdst, fsrc, 2) == 0);
    for (i = 0; i < n; i++) CHECK(fdst[2 * i] == i && fdst[2 * i + 1] == i * 10);
    CHECK(shmem_fcollect(team, fdst, fsrc, 1) == 0);
    for (i = 0; i < n; i++) CHECK(fdst[i] == i);

    /* collect: rank r contributes r + 1 elements of value r */
    for (i = 0; i <= me; i++) csrc[i] = (short)me;
    CHECK(shmem_collect(team, cdst, csrc, (size_t)me + 1) == 0);
    for (i = 0, k = 0; i < n; i++) {
        int j;
        for (j = 0; j <= i; j++, k++) CHECK(cdst[k] == i);
    }
    CHECK(shmem_collectmem(team, cdst, csrc, 2 * ((size_t)me + 1)) == 0);
    for (i = 0, k = 0; i < n; i++) {
        int j;
        for (j = 0; j <= i; j++, k++) CHECK(cdst[k] == i);
    }

    /* alltoall: block j of rank i lands in block i of rank j */
    for (i = 0; i < n; i++)
        for (k = 0; k < 2; k++) asrc[2 * i + k] = me * 100 + i * 10 + k;
    CHECK(shmem_int_alltoall(team, adst, asrc, 2) == 0);
    for (i = 0; i < n; i++)
        for (k = 0; k < 2; k++) CHECK(adst[2 * i + k] == i * 100 + me * 10 + k);
    CHECK(shmem_alltoallmem(team, adst, asrc, 2 * sizeof(int)) == 0);
    for (i = 0; i < n; i++)
        for (k = 0; k < 2; k++) CHECK(adst[2 * i + k] == i * 100 + me * 10 + k);

    /* alltoalls: one element per block, source stride 3, dest stride 2 */
    for (i = 0; i < n; i++) ssrc[3 * i] = me * 100 + i;
    CHECK(shmem_alltoalls(team, sdst, ssrc, 2, 3, 1) == 0);
    for (i = 0; i < n; i++) CHECK(sdst[2 * i] == i * 100 + me);

    /* reductions */
    ired[0] = me + 1;
    ired[1] = -me;
    ired[2] = 2;
    CHECK(shmem_int_sum_reduce(team, ires, ired, 3) == 0);
    CHECK(ires[0] == n * (n + 1) / 2 && ires[1] == -n * (n - 1) / 2 && ires[2] == 2 * n);
    CHECK(shmem_max_reduce(team, ires, ired, 2) == 0);
    CHECK(ires[0] == n && ires[1] == 0);
    CHECK(shmem_int_min_reduce(team, ires, ired, 2) == 0);
    CHECK(ires[0] == 1 && ires[1] == -(n - 1));
    CHECK(shmem_prod_reduce(team, ires, ired, 3) == 0);
    CHECK(ires[2] == 1 << n);
    ubits[0] = 1u << me;
    ubits[1] = 0xffu & ~(1u << me);
    CHECK(shmem_uint_or_reduce(team, ures, ubits, 2) == 0);
    CHECK(ures[0] == (1u << n) - 1);
    CHECK(shmem_and_reduce(team, ures, ubits, 2) == 0);
    CHECK(ures[1] == (0xffu & ~((1u << n) - 1)));
    CHECK(shmem_xor_reduce(team, ures, ubits, 1) == 0);
    CHECK(ures[0] == (1u << n) - 1);
    /* in place */
    ired[0] = me;
    CHECK(shmem_int_sum_reduce(team, ired, ired, 1) == 0);
    CHECK(ired[0] == n * (n - 1) / 2);
    dred[0] = 0.5 * me;
    dred[1] = me;
    CHECK(shmem_double_sum_reduce(team, dres, dred, 2) == 0);
    CHECK(dres[0] == 0.25 * n * (n - 1) && dres[1] == n * (n - 1) / 2);
    CHECK(shmem_double_max_reduce(team, dres, dred, 2) == 0);
    CHECK(dres[1] == n - 1);
    *u64src = (uint64_t)1 << (40 + me);
    CHECK(shmem_uint64_or_reduce(team, u64dst, u64src, 1) == 0);
    CHECK(*u64dst == (((uint64_t)1 << n) - 1) << 40);
    /* complex */
    zsrc[0] = me + (2.0 * me) * I;
    zsrc[1] = I;
    CHECK(shmem_complexd_sum_reduce(team, zres, zsrc, 2) == 0);
    CHECK(creal(zres[0]) == n * (n - 1) / 2 && cimag(zres[0]) == n * (n - 1));
    CHECK(creal(zres[1]) == 0 && cimag(zres[1]) == n);
    CHECK(shmem_complexd_prod_reduce(team, zres, zsrc, 2) == 0);
    {
        /* I^n */
        double _Complex want = 1;
        for (i = 0; i < n; i++) want *= I;
        CHECK(zres[1] == want);
    }
    *fz = 1.0f + 1.0f * I;
    CHECK(shmem_sum_reduce(team, fzres, fz, 1) == 0);
    CHECK(crealf(*fzres) == (float)n && cimagf(*fzres) == (float)n);

    /* scans */
    scan_src[0] = me + 1;
    scan_src[1] = 1;
    CHECK(shmem_long_sum_inscan(team, scan_dst, scan_src, 2) == 0);
    CHECK(scan_dst[0] == (me + 1) * (me + 2) / 2 && scan_dst[1] == me + 1);
    CHECK(shmem_sum_exscan(team, scan_dst, scan_src, 2) == 0);
    CHECK(scan_dst[0] == me * (me + 1) / 2 && scan_dst[1] == me);

    /* profiling twin and team sync */
    ired[0] = 1;
    CHECK(pshmem_int_sum_reduce(team, ires, ired, 1) == 0);
    CHECK(ires[0] == n);
    CHECK(shmem_sync(team) == 0);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes <= MAXN);
    alloc_all();
    run(SHMEM_TEAM_WORLD, "world");

    shmem_team_t even;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even) ==
          0);
    if (me % 2 == 0) {
        CHECK(shmem_team_my_pe(even) == me / 2);
        run(even, "even");
        shmem_team_destroy(even);
    } else {
        CHECK(even == SHMEM_TEAM_INVALID);
        CHECK(shmem_int_sum_reduce(even, ires, ired, 1) != 0);
        CHECK(shmem_broadcastmem(even, mdst, msrc, 1, 0) != 0);
    }
    /* the two halves of WORLD did different numbers of collectives: realign */
    shmem_barrier_all();
    run(SHMEM_TEAM_WORLD, "world again");
    DONE("coll");
    shmem_finalize();
    return 0;
}
