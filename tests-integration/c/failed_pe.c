/* A PE dies (SIGKILL) in the middle of a loop of WORLD reductions. With
 * SHMEM_FAULT_TOLERANT=1 the survivors get SHMEMX_ERR_PE_FAILED from the reduction,
 * see exactly that PE through shmemx_failed_pes / shmemx_pe_failed, make a team of the
 * survivors, reduce and barrier on it, and finalize. Without the variable the launcher
 * ends the job. The victim is PE npes-2 (a middle PE from 3 PEs on). */
#include <shmem.h>
#include <shmemx.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c, ...)                                                              \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "failed_pe pe=%d line %d: ", shmem_my_pe(), __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            exit(3);                                                               \
        }                                                                          \
    } while (0)

static long src, dst;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int victim = n - 2;
    CHECK(n >= 3, "run at 3 PEs or more");
    long rounds = 0;
    int rc = SHMEMX_SUCCESS;
    for (long i = 0; i < 100000; i++) {
        if (me == victim && i == 50)
            raise(SIGKILL);
        src = me + i;
        rc = shmemx_try_long_sum_reduce(SHMEM_TEAM_WORLD, &dst, &src, 1);
        if (rc != SHMEMX_SUCCESS)
            break;
        CHECK(dst == (long)n * (n - 1) / 2 + (long)n * i, "round %ld: sum %ld", i, dst);
        rounds++;
    }
    CHECK(rc == SHMEMX_ERR_PE_FAILED, "reduction ended with %d (%s), not SHMEMX_ERR_PE_FAILED: %s",
          rc, shmemx_strerror(rc), shmemx_error_message());
    CHECK(rounds == 50, "%ld rounds before the failure, not 50", rounds);
    char want[64];
    snprintf(want, sizeof want, "PE %d has failed", victim);
    CHECK(strstr(shmemx_error_message(), want) != NULL, "message does not name PE %d: %s",
          victim, shmemx_error_message());

    int failed[8];
    int nf = shmemx_failed_pes(failed, 8);
    CHECK(nf == 1 && failed[0] == victim, "failed PEs: %d (first %d)", nf, failed[0]);
    CHECK(shmemx_pe_failed(victim) == 1 && shmemx_pe_failed(me) == 0, "shmemx_pe_failed");

    shmem_team_t survivors;
    CHECK(shmemx_team_survivors(SHMEM_TEAM_WORLD, &survivors) == 0, "shmemx_team_survivors");
    CHECK(shmem_team_n_pes(survivors) == n - 1, "survivors: %d PEs", shmem_team_n_pes(survivors));
    int rank = shmem_team_my_pe(survivors);
    CHECK(rank == (me < victim ? me : me - 1), "rank %d", rank);
    CHECK(shmem_team_translate_pe(survivors, rank, SHMEM_TEAM_WORLD) == me, "translate");
    for (int k = 0; k < 3; k++) {
        src = me + k;
        CHECK(shmem_long_sum_reduce(survivors, &dst, &src, 1) == 0, "survivors' reduce");
        long want_sum = (long)n * (n - 1) / 2 - victim + (long)(n - 1) * k;
        CHECK(dst == want_sum, "survivors' sum %ld, want %ld", dst, want_sum);
        shmem_team_sync(survivors);
    }
    shmem_team_destroy(survivors);
    printf("ok failed_pe pe=%d\n", me);
    fflush(stdout);
    shmem_finalize();
    return 0;
}
