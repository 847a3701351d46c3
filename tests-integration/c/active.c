/* Deprecated active-set collectives: barrier, 4-argument sync, {broadcast,collect,
 * fcollect,alltoall,alltoalls}{32,64} and *_to_all on WORLD, on disjoint strided sets run
 * concurrently, on overlapping pairs and on singletons; pSync is left untouched. */
#include "check.h"
#include <complex.h>
#include <stdlib.h>

#define MAXN 8

static long *psync, *psync2;
static double *pwrk;
static int64_t *bsrc, *bdst;
static int32_t *csrc, *cdst;
static int64_t *fsrc, *fdst;
static int32_t *asrc, *adst;
static int64_t *ssrc, *sdst;
static int *isrc, *idst;
static long *lsrc, *ldst;
static double *dbuf;
static double _Complex *zsrc, *zdst, *zwrk;
/* Large enough for several messages and tree chunks. */
#define BIG 40000
static long *bigsrc, *bigdst;

#define ALLOC(p, n) CHECK(((p) = shmem_calloc((n), sizeof(*(p)))) != NULL)

/* Every active-set family on (start, 2^logstride, size); this PE is a member. */
static void run(int start, int logstride, int size, long *ps) {
    int me = (shmem_my_pe() - start) >> logstride, n = size, i, k;
    int root = n - 1;

    shmem_barrier(start, logstride, size, ps);
    shmem_sync(start, logstride, size, ps);

    /* broadcast64: the root's dest is left alone */
    for (i = 0; i < 3; i++) {
        bsrc[i] = me * 100 + i;
        bdst[i] = -1;
    }
    shmem_broadcast64(bdst, bsrc, 3, root, start, logstride, size, ps);
    for (i = 0; i < 3; i++) CHECK(bdst[i] == (me == root ? -1 : root * 100 + i));

    /* collect32: rank r contributes r + 1 elements of value r */
    for (i = 0; i <= me; i++) csrc[i] = me;
    shmem_collect32(cdst, csrc, (size_t)me + 1, start, logstride, size, ps);
    for (i = 0, k = 0; i < n; i++) {
        int j;
        for (j = 0; j <= i; j++, k++) CHECK(cdst[k] == i);
    }

    /* fcollect64 */
    fsrc[0] = me;
    fsrc[1] = -me;
    shmem_fcollect64(fdst, fsrc, 2, start, logstride, size, ps);
    for (i = 0; i < n; i++) CHECK(fdst[2 * i] == i && fdst[2 * i + 1] == -i);

    /* alltoall32 */
    for (i = 0; i < n; i++) asrc[i] = me * 10 + i;
    shmem_alltoall32(adst, asrc, 1, start, logstride, size, ps);
    for (i = 0; i < n; i++) CHECK(adst[i] == i * 10 + me);

    /* alltoalls64: dest stride 2, source stride 3 */
    for (i = 0; i < n; i++) ssrc[3 * i] = me * 10 + i;
    shmem_alltoalls64(sdst, ssrc, 2, 3, 1, start, logstride, size, ps);
    for (i = 0; i < n; i++) CHECK(sdst[2 * i] == i * 10 + me);

    /* reductions */
    isrc[0] = me + 1;
    isrc[1] = me;
    shmem_int_sum_to_all(idst, isrc, 2, start, logstride, size, (int *)pwrk, ps);
    CHECK(idst[0] == n * (n + 1) / 2 && idst[1] == n * (n - 1) / 2);
    shmem_int_max_to_all(idst, isrc, 2, start, logstride, size, (int *)pwrk, ps);
    CHECK(idst[0] == n && idst[1] == n - 1);
    lsrc[0] = 1L << me;
    shmem_long_or_to_all(ldst, lsrc, 1, start, logstride, size, (long *)pwrk, ps);
    CHECK(ldst[0] == (1L << n) - 1);
    shmem_long_xor_to_all(ldst, lsrc, 1, start, logstride, size, (long *)pwrk, ps);
    CHECK(ldst[0] == (1L << n) - 1);
    /* in place */
    dbuf[0] = me;
    dbuf[1] = -me;
    shmem_double_min_to_all(dbuf, dbuf, 2, start, logstride, size, pwrk, ps);
    CHECK(dbuf[0] == 0 && dbuf[1] == -(n - 1));
    zsrc[0] = me + 1.0 * I;
    shmem_complexd_sum_to_all(zdst, zsrc, 1, start, logstride, size, zwrk, ps);
    CHECK(creal(zdst[0]) == n * (n - 1) / 2 && cimag(zdst[0]) == n);

    /* large: reductions in several messages, broadcasts in several chunks */
    for (i = 0; i < BIG; i++) bigsrc[i] = (long)i * (me + 1);
    shmem_long_sum_to_all(bigdst, bigsrc, BIG, start, logstride, size, (long *)pwrk, ps);
    for (i = 0; i < BIG; i++) CHECK(bigdst[i] == (long)i * n * (n + 1) / 2);
    for (i = 0; i < BIG; i++) bigdst[i] = -1;
    shmem_broadcast64(bigdst, bigsrc, BIG, 0, start, logstride, size, ps);
    for (i = 0; i < BIG; i++) CHECK(bigdst[i] == (me == 0 ? -1 : (long)i));
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), i;
    CHECK(npes <= MAXN);
    ALLOC(psync, SHMEM_REDUCE_SYNC_SIZE);
    ALLOC(psync2, SHMEM_REDUCE_SYNC_SIZE);
    for (i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = psync2[i] = SHMEM_SYNC_VALUE;
    ALLOC(pwrk, SHMEM_REDUCE_MIN_WRKDATA_SIZE + MAXN);
    ALLOC(bsrc, 3); ALLOC(bdst, 3);
    ALLOC(csrc, MAXN); ALLOC(cdst, MAXN * (MAXN + 1) / 2);
    ALLOC(fsrc, 2); ALLOC(fdst, 2 * MAXN);
    ALLOC(asrc, MAXN); ALLOC(adst, MAXN);
    ALLOC(ssrc, 3 * MAXN); ALLOC(sdst, 2 * MAXN);
    ALLOC(isrc, 2); ALLOC(idst, 2);
    ALLOC(lsrc, 1); ALLOC(ldst, 1);
    ALLOC(dbuf, 2);
    ALLOC(bigsrc, BIG); ALLOC(bigdst, BIG);
    ALLOC(zsrc, 1); ALLOC(zdst, 1); ALLOC(zwrk, SHMEM_REDUCE_MIN_WRKDATA_SIZE);
    shmem_barrier_all();

    /* WORLD, alternating two pSync arrays */
    run(0, 0, npes, psync);
    run(0, 0, npes, psync2);

    /* disjoint strided sets at the same time: evens and odds */
    if (me % 2 == 0)
        run(0, 1, (npes + 1) / 2, psync);
    else
        run(1, 1, npes / 2, psync);

    /* overlapping pairs in sequence: {0,1} then {1,2} */
    if (npes >= 3) {
        if (me <= 1) run(0, 0, 2, psync);
        if (me == 1 || me == 2) run(1, 0, 2, psync2);
    }

    /* a singleton set */
    run(me, 0, 1, psync);

    /* and WORLD again, after all that */
    run(0, 0, npes, psync);
    for (i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        CHECK(psync[i] == SHMEM_SYNC_VALUE && psync2[i] == SHMEM_SYNC_VALUE);
    shmem_barrier_all();
    DONE("active");
    shmem_finalize();
    return 0;
}
