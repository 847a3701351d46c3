/* Issue 26: misused collectives and request handles end the job with an error naming the
 * routine and the argument (or both calls), never a hang or a crash; and the extensions'
 * try forms return error codes instead.
 * argv[1]:
 *   skip_reduce      PE 1 skips shmem_long_sum_reduce(WORLD) and goes on to a barrier
 *   skip_nbe_reduce  PE 1 never issues shmemx_long_sum_reduce_nbe, goes on to a barrier
 *   req_copy_wait    waits on a copy of a completed non-blocking collective's request
 *   req_copy_free    frees such a copy
 *   req_garbage      waits on (shmemx_request_h)0x1234
 *   req_garbage_nbe  issues a non-blocking collective into a slot holding garbage
 *   nbe_bad_root     a broadcast_nbe with root 99, never waited for
 *   try_forms        shmemx_try_request_wait and shmemx_try_create_*_aset return codes
 *                    (the last PE finalizes while the others sync through try waits) */
#include "check.h"
#include <shmemx.h>

static long src[4], dst[4];

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), i;
    const char *what = argc > 1 ? argv[1] : "";
    for (i = 0; i < 4; i++) src[i] = me + i;
    shmem_barrier_all();
    if (strcmp(what, "skip_reduce") == 0) {
        if (me != 1) shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 4);
        shmem_barrier_all();
        printf("passed pe=%d\n", me);
    }
    if (strcmp(what, "skip_nbe_reduce") == 0) {
        if (me != 1) {
            shmemx_request_h r = NULL;
            CHECK(shmemx_long_sum_reduce_nbe(SHMEM_TEAM_WORLD, dst, src, 4, &r) == 0);
            shmemx_request_wait(&r);
        }
        shmem_barrier_all();
        printf("passed pe=%d\n", me);
    }
    if (strcmp(what, "req_copy_wait") == 0 || strcmp(what, "req_copy_free") == 0) {
        shmemx_request_h r = NULL, copy;
        CHECK(shmemx_long_sum_reduce_nbe(SHMEM_TEAM_WORLD, dst, src, 4, &r) == 0);
        copy = r;
        shmemx_request_wait(&r);
        CHECK(r == NULL && dst[0] == (long)n * (n - 1) / 2);
        if (what[9] == 'w')
            shmemx_request_wait(&copy);
        else
            shmemx_request_free(&copy);
        printf("passed pe=%d\n", me);
    }
    if (strcmp(what, "req_garbage") == 0) {
        shmemx_request_h r = (shmemx_request_h)(void *)0x1234;
        shmemx_request_wait(&r);
        printf("passed pe=%d\n", me);
    }
    if (strcmp(what, "req_garbage_nbe") == 0) {
        shmemx_request_h r = (shmemx_request_h)(void *)0x1234;
        shmemx_long_sum_reduce_nbe(SHMEM_TEAM_WORLD, dst, src, 4, &r);
        printf("passed pe=%d\n", me);
    }
    if (strcmp(what, "nbe_bad_root") == 0) {
        shmemx_request_h r = NULL;
        shmemx_long_broadcast_nbe(SHMEM_TEAM_WORLD, dst, src, 4, 99, &r);
        printf("issued pe=%d\n", me);
    }
    if (strcmp(what, "try_forms") == 0) {
        shmemx_request_h r = NULL;
        shmemx_aset_t set = SHMEM_TEAM_INVALID;
        int got;
        /* A bad active set is refused with a code, the job goes on. */
        got = shmemx_try_create_strided_aset(0, 1, n + 5, &set);
        CHECK(got == SHMEMX_ERR_PE || got == SHMEMX_ERR_INVALID_ARGUMENT);
        CHECK(strstr(shmemx_error_message(), "shmemx_create_strided_aset") != NULL);
        got = shmemx_try_create_generic_aset(NULL, 2, &set);
        CHECK(got == SHMEMX_ERR_INVALID_ARGUMENT);
        CHECK(shmemx_try_create_strided_aset(0, 1, n, &set) == 0 && set != SHMEM_TEAM_INVALID);
        CHECK(shmemx_aset_size(set) == n);
        shmemx_delete_aset(set);
        /* An argument error of a non-blocking collective comes back from the try wait. */
        CHECK(shmemx_long_broadcast_nbe(SHMEM_TEAM_WORLD, dst, src, 4, 99, &r) == 0);
        CHECK(shmemx_try_request_wait(&r) == SHMEMX_ERR_PE);
        CHECK(r == NULL && strstr(shmemx_error_message(), "PE_root") != NULL);
        /* A good one completes with 0. */
        CHECK(shmemx_long_sum_reduce_nbe(SHMEM_TEAM_WORLD, dst, src, 4, &r) == 0);
        CHECK(shmemx_try_request_wait(&r) == 0 && r == NULL);
        CHECK(dst[3] == (long)n * (n - 1) / 2 + 3L * n);
        /* A member that finalized: the others' sync fails with a code. */
        shmem_barrier_all();
        if (n > 1 && me == n - 1) {
            shmem_finalize();
            return 0;
        }
        if (n > 1) {
            CHECK(shmemx_team_sync_nbe(SHMEM_TEAM_WORLD, &r) == 0);
            got = shmemx_try_request_wait(&r);
            CHECK(got == SHMEMX_ERR_PE_FINALIZED);
            CHECK(r == NULL && strstr(shmemx_error_message(), "shmem_finalize") != NULL);
        }
        DONE("try_forms");
    }
    shmem_finalize();
    return 0;
}
