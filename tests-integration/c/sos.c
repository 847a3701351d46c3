/* Sandia OpenSHMEM's shmemx_ names: block-strided RMA, signals, scans, the node team,
 * shmemx_wtime and allocations without a barrier, each checked by its result. */
#include <shmem.h>
#include <shmemx.h>

#include "check.h"

#ifndef HAVE_SHMEMX_WTIME
#error "shmemx.h must define HAVE_SHMEMX_WTIME"
#endif

static int src[8], dst[8];
static long lsrc[8], ldst[8];
static uint64_t sig;
static long arrived;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < 8; i++) {
        src[i] = me * 100 + i;
        lsrc[i] = me * 1000 + i;
    }
    shmem_barrier_all();

    /* Block-strided put: 2 blocks of 2 ints, source blocks 4 apart, dest blocks 3 apart. */
    shmemx_int_ibput(dst, src, 3, 4, 2, 2, right);
    shmem_barrier_all();
    CHECK(dst[0] == left * 100 + 0 && dst[1] == left * 100 + 1);
    CHECK(dst[3] == left * 100 + 4 && dst[4] == left * 100 + 5);
    shmem_barrier_all();
    shmemx_ibput32(dst, src, 2, 1, 1, 3, right); /* 3 blocks of 1: src 0,1,2 -> dst 0,2,4 */
    shmemx_ctx_ibput64(SHMEM_CTX_DEFAULT, ldst, lsrc, 2, 2, 2, 2, right);
    shmem_barrier_all();
    CHECK(dst[0] == left * 100 + 0 && dst[2] == left * 100 + 1 && dst[4] == left * 100 + 2);
    CHECK(ldst[0] == left * 1000 + 0 && ldst[1] == left * 1000 + 1);
    CHECK(ldst[2] == left * 1000 + 2 && ldst[3] == left * 1000 + 3);
    shmem_barrier_all();
    /* Block-strided get: the right neighbour's src[1], src[3] (blocks of 1, stride 2). */
    int got[4] = {0};
    long lgot[4] = {0};
    shmemx_ibget(got, src, 1, 2, 1, 2, right);
    CHECK(got[0] == right * 100 + 0 && got[1] == right * 100 + 2);
    shmemx_ctx_long_ibget(SHMEM_CTX_DEFAULT, lgot, lsrc, 2, 1, 2, 1, right);
    CHECK(lgot[0] == right * 1000 + 0 && lgot[1] == right * 1000 + 1);
    shmemx_ibget64(lgot, lsrc, 1, 4, 1, 2, right);
    CHECK(lgot[0] == right * 1000 + 0 && lgot[1] == right * 1000 + 4);
    shmemx_ibput(SHMEM_CTX_DEFAULT, ldst, lsrc, 1, 1, 1, 1, right);
    shmem_barrier_all();
    CHECK(ldst[0] == left * 1000);

    /* Signals. */
    shmemx_signal_set(&sig, 5, right);
    shmem_barrier_all();
    CHECK(shmem_signal_fetch(&sig) == 5);
    shmem_barrier_all();
    shmemx_signal_add(&sig, 2, right);
    shmemx_ctx_signal_add(SHMEM_CTX_DEFAULT, &sig, 3, right);
    shmem_barrier_all();
    CHECK(shmem_signal_fetch(&sig) == 10);
    shmem_barrier_all();
    shmemx_ctx_signal_set(SHMEM_CTX_DEFAULT, &sig, 1, right);
    shmem_barrier_all();
    CHECK(shmem_signal_fetch(&sig) == 1);

    /* Scans over the world: PE p contributes p + 1 (and 2p + 2). */
    static int sv[2], in[2], ex[2];
    sv[0] = me + 1;
    sv[1] = 2 * me + 2;
    CHECK(shmemx_int_sum_inscan(SHMEM_TEAM_WORLD, in, sv, 2) == 0);
    CHECK(shmemx_int_sum_exscan(SHMEM_TEAM_WORLD, ex, sv, 2) == 0);
    CHECK(in[0] == (me + 1) * (me + 2) / 2 && in[1] == (me + 1) * (me + 2));
    if (me > 0) CHECK(ex[0] == me * (me + 1) / 2 && ex[1] == me * (me + 1));
    static long lv[1], lin[1];
    lv[0] = 1;
    CHECK(shmemx_sum_inscan(SHMEM_TEAM_WORLD, lin, lv, 1) == 0);
    CHECK(lin[0] == me + 1);

    /* The node team is the shared team. */
    CHECK(SHMEMX_TEAM_NODE == SHMEM_TEAM_SHARED);
    CHECK(shmem_team_n_pes(SHMEMX_TEAM_NODE) == expected_shared_size());
    int below = 0;
    for (int p = 0; p < me; p++)
        below += shmem_ptr(lin, p) != NULL;
    CHECK(shmem_team_my_pe(SHMEMX_TEAM_NODE) == below);

    double t0 = shmemx_wtime(), t1 = shmemx_wtime();
    CHECK(t0 >= 0.0 && t1 >= t0);

    /* No barrier: PE 0 allocates and then signals PE n-1, which waits for that signal
     * before its own (matching) call. A barrier in PE 0's call would never end. */
    shmem_barrier_all();
    long *blk[4];
    if (me == n - 1 && n > 1) shmem_long_wait_until(&arrived, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < 4; i++) blk[i] = shmem_malloc_with_hints(64, SHMEMX_MALLOC_NO_BARRIER);
    if (me == 0 && n > 1) shmem_long_atomic_inc(&arrived, n - 1);
    long *fence = shmem_malloc(8); /* with its barrier: every block exists everywhere */
    for (int i = 0; i < 4; i++) {
        CHECK(blk[i] != NULL);
        CHECK(shmem_addr_accessible(blk[i], right));
        shmem_long_p(&blk[i][me % 8], me + 10 * i, right);
    }
    shmem_barrier_all();
    for (int i = 0; i < 4; i++) CHECK(blk[i][left % 8] == left + 10 * i);
    shmem_free(fence);
    for (int i = 0; i < 4; i++) shmem_free(blk[i]);

    DONE("sos");
    shmem_finalize();
    return 0;
}
