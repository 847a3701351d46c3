/* Zero-length calls with null pointers (OpenSHMEM allows them for every routine with a
 * count): team collectives (collect with some PEs contributing nothing from NULL, others
 * contributing data; every other collective with NULL everywhere), scans, RMA in every
 * form, put-with-signal (the signal still arrives), and the active-set collectives.
 * With the argument `skip_active` the last PE skips an active-set barrier and finalizes
 * instead: the others must fail naming the routine and that PE (issue 10, item 10). */
#include "check.h"
#include <shmemx.h>
#include <stdint.h>
#include <string.h>

static long psync[SHMEM_COLLECT_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (argc > 1 && strcmp(argv[1], "skip_active") == 0) {
        if (me != n - 1) {
            shmem_barrier(0, 0, n, psync);
            printf("passed pe=%d\n", me);
        }
        shmem_finalize();
        return 0;
    }
    long *src = shmem_calloc(4, sizeof(long));
    long *dst = shmem_calloc(4 * (size_t)n, sizeof(long));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    CHECK(src && dst && sig);
    shmem_team_t w = SHMEM_TEAM_WORLD;

    /* collect: odd PEs give nothing (NULL source), even PEs give me + 1 values. */
    for (int i = 0; i < 4; i++) src[i] = 100 * me + i;
    size_t mine = me % 2 ? 0 : (size_t)(me % 4 + 1);
    CHECK(shmem_long_collect(w, dst, mine ? src : NULL, mine) == 0);
    size_t at = 0;
    for (int r = 0; r < n; r++) {
        size_t len = r % 2 ? 0 : (size_t)(r % 4 + 1);
        for (size_t i = 0; i < len; i++) CHECK(dst[at + i] == 100 * r + (long)i);
        at += len;
    }
    CHECK(shmem_collectmem(w, dst, mine ? (void *)src : NULL, mine * sizeof(long)) == 0);
    /* Everyone zero, everything NULL. */
    CHECK(shmem_long_collect(w, NULL, NULL, 0) == 0);
    CHECK(shmem_collectmem(w, NULL, NULL, 0) == 0);
    CHECK(shmem_long_fcollect(w, NULL, NULL, 0) == 0);
    CHECK(shmem_long_broadcast(w, NULL, NULL, 0, 0) == 0);
    CHECK(shmem_long_alltoall(w, NULL, NULL, 0) == 0);
    CHECK(shmem_long_alltoalls(w, NULL, NULL, 1, 1, 0) == 0);
    CHECK(shmem_long_sum_reduce(w, NULL, NULL, 0) == 0);
    CHECK(shmem_long_max_reduce(w, NULL, NULL, 0) == 0);
    CHECK(shmem_long_sum_inscan(w, NULL, NULL, 0) == 0);
    CHECK(shmem_long_sum_exscan(w, NULL, NULL, 0) == 0);

    /* RMA: every form with nothing to move. */
    int pe = (me + 1) % n;
    shmem_long_put(NULL, NULL, 0, pe);
    shmem_long_get(NULL, NULL, 0, pe);
    shmem_putmem(NULL, NULL, 0, pe);
    shmem_getmem(NULL, NULL, 0, pe);
    shmem_long_iput(NULL, NULL, 1, 1, 0, pe);
    shmem_long_iget(NULL, NULL, 1, 1, 0, pe);
    shmem_long_ibput(NULL, NULL, 1, 1, 0, 3, pe);
    shmem_long_ibget(NULL, NULL, 1, 1, 2, 0, pe);
    shmem_long_put_nbi(NULL, NULL, 0, pe);
    shmem_long_get_nbi(NULL, NULL, 0, pe);
    shmem_ctx_long_put(SHMEM_CTX_DEFAULT, NULL, NULL, 0, pe);
    shmem_ctx_long_iput(SHMEM_CTX_DEFAULT, NULL, NULL, 1, 1, 0, pe);
    shmem_ctx_long_ibput(SHMEM_CTX_DEFAULT, NULL, NULL, 1, 1, 0, 0, pe);
    shmem_ctx_long_put_nbi(SHMEM_CTX_DEFAULT, NULL, NULL, 0, pe);
    shmem_ctx_long_get_nbi(SHMEM_CTX_DEFAULT, NULL, NULL, 0, pe);
    shmemx_request_h req = NULL;
    shmemx_long_put_nbe(NULL, NULL, 0, pe, &req);
    CHECK(shmemx_request_wait(&req) == 0);
    shmemx_long_get_nbe(NULL, NULL, 0, pe, &req);
    CHECK(shmemx_request_wait(&req) == 0);
    shmem_quiet();
    /* put-with-signal of nothing still delivers the signal. */
    shmem_long_put_signal(NULL, NULL, 0, sig, 1, SHMEM_SIGNAL_ADD, pe);
    shmem_putmem_signal_nbi(NULL, NULL, 0, sig, 1, SHMEM_SIGNAL_ADD, pe);
    shmem_quiet();
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 2);

    /* Active-set collectives, odd PEs contributing nothing from NULL to collect. */
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    memset(dst, 0, 4 * (size_t)n * sizeof(long));
    shmem_barrier_all();
    shmem_collect64(dst, mine ? src : NULL, mine, 0, 0, n, psync);
    at = 0;
    for (int r = 0; r < n; r++) {
        size_t len = r % 2 ? 0 : (size_t)(r % 4 + 1);
        for (size_t i = 0; i < len; i++) CHECK(dst[at + i] == 100 * r + (long)i);
        at += len;
    }
    shmem_collect32(NULL, NULL, 0, 0, 0, n, psync);
    shmem_fcollect64(NULL, NULL, 0, 0, 0, n, psync);
    shmem_broadcast64(NULL, NULL, 0, 0, 0, 0, n, psync);
    shmem_alltoall64(NULL, NULL, 0, 0, 0, n, psync);
    shmem_alltoalls64(NULL, NULL, 1, 1, 0, 0, 0, n, psync);
    shmem_long_sum_to_all(NULL, NULL, 0, 0, 0, n, pwrk, psync);
    shmem_barrier_all();
    DONE("zero_len");
    shmem_finalize();
    return 0;
}
