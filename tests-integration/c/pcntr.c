/* Profiling from C: shmem_pcontrol levels and the shmemx_pcntr_* counters of the default
 * context and of a private one (issued and completed writes and reads; completed catches
 * up with issued at quiet), and level 0 stopping the counts. */
#include "check.h"
#include <shmemx.h>

int main(void) {
    static long buf[8];
    long v = 0;
    uint64_t w, r, cw, cr, t;
    shmemx_pcntr_t all;
    shmem_ctx_t ctx;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, i;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0);
    shmem_barrier_all();
    if (!getenv("SHMEM_PROFILE")) {
        shmemx_pcntr_get_issued_write(SHMEM_CTX_DEFAULT, &w);
        CHECK(w == 0);
        shmem_pcontrol(1);
    }
    for (i = 0; i < 10 + me; i++) shmem_long_p(&buf[i % 8], i, right);
    for (i = 0; i < 4; i++) v += shmem_long_g(&buf[0], right);
    shmem_long_atomic_add(&buf[7], 1, right);          /* a write */
    (void)shmem_long_atomic_fetch(&buf[7], right);      /* a read */
    shmem_quiet();
    shmemx_pcntr_get_issued_write(SHMEM_CTX_DEFAULT, &w);
    shmemx_pcntr_get_issued_read(SHMEM_CTX_DEFAULT, &r);
    shmemx_pcntr_get_completed_write(SHMEM_CTX_DEFAULT, &cw);
    shmemx_pcntr_get_completed_read(SHMEM_CTX_DEFAULT, &cr);
    shmemx_pcntr_get_completed_target(&t);
    CHECK(w == (uint64_t)(11 + me) && r == 5 && cw == w && cr == r && t == 0);

    for (i = 0; i < 3 + me; i++) shmem_ctx_long_put_nbi(ctx, &buf[1], &v, 1, right);
    shmem_ctx_quiet(ctx);
    shmemx_pcntr_get_all(ctx, &all);
    CHECK(all.pending_put == (uint64_t)(3 + me) && all.completed_put == all.pending_put);
    CHECK(all.pending_get == 0 && all.completed_get == 0 && all.target == 0);
    /* The default context's counts are not the private context's. */
    shmemx_pcntr_get_all(SHMEM_CTX_DEFAULT, &all);
    CHECK(all.pending_put == (uint64_t)(11 + me) && all.pending_get == 5);

    shmem_pcontrol(0);
    for (i = 0; i < 5; i++) shmem_long_p(&buf[0], i, right);
    shmem_quiet();
    shmemx_pcntr_get_issued_write(SHMEM_CTX_DEFAULT, &w);
    CHECK(w == (uint64_t)(11 + me));
    shmem_pcontrol(2);
    shmem_long_p(&buf[0], 1, right);
    shmem_quiet();
    shmemx_pcntr_get_issued_write(SHMEM_CTX_DEFAULT, &w);
    CHECK(w == (uint64_t)(12 + me));
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    printf("ok pcntr pe=%d\n", me);
    shmem_finalize();
    return 0;
}
