/* long double reductions: team-based max/min/sum/prod (typed and C11 generic), the 1.6
 * scans, and the deprecated active-set _to_all forms, with values that need more than
 * double's 53-bit mantissa where long double has more (x86-64's 64-bit). */
#include "check.h"
#include <float.h>

#define N 3

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long double *src = shmem_calloc(N, sizeof(long double));
    long double *dst = shmem_calloc(N * 4, sizeof(long double));
    long double *wrk = shmem_calloc(SHMEM_REDUCE_MIN_WRKDATA_SIZE + N, sizeof(long double));
    long *psync = shmem_malloc(SHMEM_REDUCE_SYNC_SIZE * sizeof(long));
    CHECK(src && dst && wrk && psync);
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    /* 1 + (me+1) * 2^-60: distinct only beyond double's precision when LDBL_MANT_DIG > 53. */
    const long double tiny = 1.0L / (1ULL << 60);
    src[0] = 1.0L + (me + 1) * tiny;
    src[1] = (long double)(me + 1);
    src[2] = -(long double)me;
    shmem_barrier_all();

    CHECK(shmem_longdouble_sum_reduce(SHMEM_TEAM_WORLD, dst, src, N) == 0);
    long double want_sum0 = 0, want_prod1 = 1;
    for (int p = 0; p < npes; p++) {
        want_sum0 += 1.0L + (p + 1) * tiny;
        want_prod1 *= (long double)(p + 1);
    }
    CHECK(dst[0] == want_sum0);
    CHECK(dst[1] == (long double)npes * (npes + 1) / 2);
    CHECK(shmem_longdouble_prod_reduce(SHMEM_TEAM_WORLD, dst, src, N) == 0);
    CHECK(dst[1] == want_prod1);
    CHECK(shmem_longdouble_max_reduce(SHMEM_TEAM_WORLD, dst, src, N) == 0);
    CHECK(dst[0] == 1.0L + npes * tiny);
    CHECK(dst[2] == 0.0L);
    CHECK(shmem_longdouble_min_reduce(SHMEM_TEAM_WORLD, dst, src, N) == 0);
    CHECK(dst[0] == 1.0L + tiny);
    CHECK(dst[2] == -(long double)(npes - 1));
    if (LDBL_MANT_DIG > 53 && npes > 1)
        CHECK(dst[0] != 1.0L); /* the extra precision survived the trip */

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, dst, src, N) == 0);
    CHECK(dst[0] == want_sum0);
#endif

    /* Scans: PE p gets the sum over PEs 0..p (inclusive) or 0..p-1 (exclusive). */
    CHECK(shmem_longdouble_sum_inscan(SHMEM_TEAM_WORLD, dst, src, N) == 0);
    CHECK(dst[1] == (long double)(me + 1) * (me + 2) / 2);
    CHECK(shmem_longdouble_sum_exscan(SHMEM_TEAM_WORLD, dst, src, N) == 0);
    if (me > 0)
        CHECK(dst[1] == (long double)me * (me + 1) / 2);

    /* Deprecated active set over every PE. */
    shmem_longdouble_sum_to_all(dst, src, N, 0, 0, npes, wrk, psync);
    CHECK(dst[0] == want_sum0);
    shmem_barrier_all();
    shmem_longdouble_max_to_all(dst, src, N, 0, 0, npes, wrk, psync);
    CHECK(dst[1] == (long double)npes);
    shmem_barrier_all();
    shmem_longdouble_min_to_all(dst, src, N, 0, 0, npes, wrk, psync);
    CHECK(dst[1] == 1.0L);
    shmem_barrier_all();
    shmem_longdouble_prod_to_all(dst, src, N, 0, 0, npes, wrk, psync);
    CHECK(dst[1] == want_prod1);

    shmem_free(psync);
    shmem_free(wrk);
    shmem_free(dst);
    shmem_free(src);
    DONE("longdouble");
    shmem_finalize();
    return 0;
}
