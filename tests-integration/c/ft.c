#define _POSIX_C_SOURCE 200809L
/* Fault tolerance (issue 13 §3). PE 1 kills itself (SIGKILL) in the middle of a loop of
 * collectives. With SHMEM_FAULT_TOLERANT=1 the survivors see the failure as
 * SHMEMX_ERR_PE_FAILED from the shmemx_try_ forms within a bound, find exactly PE 1
 * failed, build the team of the survivors, reduce and sync on it, and finalize (which
 * skips the dead PE). Without the variable oshrun ends the job (nothing is printed). */
#include <shmem.h>
#include <shmemx.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VICTIM 1
#define FATAL_AT 50

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void fail(const char *what, int me) {
    fprintf(stderr, "ft: PE %d: %s (%s)\n", me, what, shmemx_error_message());
    shmem_global_exit(2);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *src = shmem_malloc(sizeof(long)), *dst = shmem_malloc(sizeof(long));
    shmem_barrier_all();
    int rc = 0, i;
    double took = 0;
    for (i = 0; i < 1000; i++) {
        if (me == VICTIM && i == FATAL_AT)
            raise(SIGKILL);
        *src = me + i;
        double t = now();
        rc = shmemx_try_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 1);
        if (rc == 0)
            rc = shmemx_try_barrier_all();
        took = now() - t;
        if (rc != 0)
            break;
        if (*dst != (long)n * (n - 1) / 2 + (long)n * i)
            fail("wrong sum before the failure", me);
    }
    if (rc != SHMEMX_ERR_PE_FAILED)
        fail("expected SHMEMX_ERR_PE_FAILED", me);
    if (i != FATAL_AT)
        fail("the error came at the wrong iteration", me);
    if (took > 3.0)
        fail("the failure took more than 3 s to be seen", me);
    char want[32];
    snprintf(want, sizeof want, "PE %d failed", VICTIM);
    if (!strstr(shmemx_error_message(), want))
        fail("the message does not name the dead PE", me);

    int failed[8] = {-1, -1};
    int nf = shmemx_failed_pes(failed, 8);
    if (nf != 1 || failed[0] != VICTIM)
        fail("shmemx_failed_pes must give exactly the dead PE", me);
    if (shmemx_failed_pes(NULL, 0) != 1)
        fail("shmemx_failed_pes(NULL, 0) must count", me);
    if (shmemx_pe_failed(VICTIM) != 1 || shmemx_pe_failed(0) != 0 || shmemx_pe_failed(me) != 0)
        fail("shmemx_pe_failed", me);

    shmem_team_t surv = SHMEM_TEAM_INVALID;
    if (shmemx_team_survivors(SHMEM_TEAM_WORLD, &surv) != 0 || surv == SHMEM_TEAM_INVALID)
        fail("shmemx_team_survivors", me);
    if (shmem_team_n_pes(surv) != n - 1 || shmem_team_my_pe(surv) != (me < VICTIM ? me : me - 1))
        fail("the survivors' team has the wrong size or order", me);
    for (int k = 0; k < 20; k++) {
        *src = me * 10 + k;
        if (shmem_long_sum_reduce(surv, dst, src, 1) != 0)
            fail("reduce on the survivors", me);
        long want_sum = 10L * ((long)n * (n - 1) / 2 - VICTIM) + (long)(n - 1) * k;
        if (*dst != want_sum)
            fail("wrong sum on the survivors", me);
        shmem_team_sync(surv);
    }
    if (shmem_team_translate_pe(surv, shmem_team_my_pe(surv), SHMEM_TEAM_WORLD) != me)
        fail("translate from the survivors' team", me);
    printf("ok ft pe=%d\n", me);
    fflush(stdout);
    shmem_team_destroy(surv);
    /* No shmem_free: it is collective over the world, which holds the dead PE. */
    shmem_finalize();
    return 0;
}
