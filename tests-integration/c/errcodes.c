/* Error codes (seed 004): shmemx_try_ forms return SHMEMX_ERR_* instead of ending the
 * job, name the routine and argument in shmemx_error_message, and leave the library
 * usable; values come back through the result pointer. With ERRCODES_FINALIZED set (2+
 * PEs), the last PE finalizes early and the others see SHMEMX_ERR_PE_FINALIZED from a
 * collective and from a wait that nobody can satisfy any more, instead of a hang or an
 * abort, on shared memory and through UCX (where the finalized PE may already have
 * left the job: a peer gone through UCX counts as finalized once it was seen to finalize,
 * directly or through a peer that gave up over it). */
#include "check.h"
#include <shmemx.h>

static long sym[4], ssrc;
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

int main(void) {
    long local = 5, v = -1;
    int flag = -1, i;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;
    for (i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;

    /* Bad input comes back as a code naming the routine and argument. */
    CHECK(shmemx_try_long_put(sym, &local, 1, n) == SHMEMX_ERR_PE);
    CHECK(strstr(shmemx_error_message(), "shmem_long_put") != NULL);
    CHECK(shmemx_try_long_put(&local, &local, 1, right) == SHMEMX_ERR_NOT_SYMMETRIC);
    CHECK(strstr(shmemx_error_message(), "dest") != NULL);
    CHECK(shmemx_try_long_atomic_fetch_add((long *)((char *)sym + 1), 1, right, &v) ==
          SHMEMX_ERR_MISALIGNED);
    CHECK(v == -1);
    CHECK(shmemx_try_long_g(sym, -1, &v) == SHMEMX_ERR_PE);
    CHECK(shmemx_try_int_sum_reduce(SHMEM_TEAM_INVALID, (int *)sym, (int *)sym + 2, 1) ==
          SHMEMX_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(shmemx_strerror(SHMEMX_SUCCESS), "success") == 0);
    CHECK(strcmp(shmemx_strerror(SHMEMX_ERR_PE), "PE out of range") == 0);
    CHECK(strcmp(shmemx_strerror(999), "unknown error code") == 0);
    CHECK(strcmp(shmemx_strerror(-1), "unknown error code") == 0);

    /* Good calls succeed, and values come back through result. */
    CHECK(shmemx_try_long_p(&sym[0], 100 + me, right) == SHMEMX_SUCCESS);
    CHECK(shmemx_try_barrier_all() == SHMEMX_SUCCESS);
    CHECK(sym[0] == 100 + (me + n - 1) % n);
    CHECK(shmemx_try_long_g(&sym[0], right, &v) == 0 && v == 100 + me);
    CHECK(shmemx_try_long_atomic_fetch_add(&sym[1], 3, right, &v) == 0 && v == 0);
    CHECK(shmemx_try_long_atomic_fetch_add(&sym[1], 3, right, NULL) == 0);
    CHECK(shmemx_try_quiet() == 0 && shmemx_try_ctx_quiet(SHMEM_CTX_DEFAULT) == 0);
    CHECK(shmemx_try_barrier_all() == 0);
    CHECK(sym[1] == 6);
    CHECK(shmemx_try_long_test(&sym[1], SHMEM_CMP_EQ, 6, &flag) == 0 && flag == 1);
    CHECK(shmemx_try_long_wait_until(&sym[1], SHMEM_CMP_GE, 6) == 0);
    /* A local (non-symmetric) source is refused, a symmetric one reduced. */
    CHECK(shmemx_try_long_sum_to_all(&sym[2], &local, 1, 0, 0, n, pwrk, psync) ==
          SHMEMX_ERR_NOT_SYMMETRIC);
    ssrc = me + 1;
    CHECK(shmemx_try_long_sum_to_all(&sym[2], &ssrc, 1, 0, 0, n, pwrk, psync) == 0);
    CHECK(sym[2] == (long)n * (n + 1) / 2);
    CHECK(shmemx_try_long_sum_reduce(SHMEM_TEAM_WORLD, &sym[3], &sym[2], 1) == 0);
    CHECK(sym[3] == (long)n * n * (n + 1) / 2);
    /* The plain routines still work after returned errors. */
    shmem_long_p(&sym[0], 7, right);
    shmem_barrier_all();
    CHECK(sym[0] == 7);

    if (getenv("ERRCODES_FINALIZED") && n > 1) {
        if (me == n - 1) {
            printf("ok errcodes pe=%d\n", me);
            shmem_finalize();
            return 0;
        }
        /* A collective over the world: the last PE will never join. */
        ssrc = 1;
        int rc = shmemx_try_long_sum_reduce(SHMEM_TEAM_WORLD, &sym[3], &ssrc, 1);
        CHECK(rc == SHMEMX_ERR_PE_FINALIZED);
        CHECK(strstr(shmemx_error_message(), "finalize") != NULL);
        if (n == 2) {
            /* Nobody is left to write sym[1]. */
            CHECK(shmemx_try_long_wait_until(&sym[1], SHMEM_CMP_EQ, 12345) ==
                  SHMEMX_ERR_PE_FINALIZED);
        }
    }
    printf("ok errcodes pe=%d\n", me);
    shmem_finalize();
    return 0;
}
