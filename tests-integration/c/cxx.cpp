// The C API from C++17: extern "C" declarations, typed routines, teams, contexts and
// explicit non-blocking requests.
#include <shmem.h>
#include <shmemx.h>
#include <cstdio>
#include <vector>

int main() {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    auto *v = static_cast<long *>(shmem_malloc(npes * sizeof(long)));
    for (int i = 0; i < npes; i++) v[i] = -1;
    shmem_barrier_all();
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0 || ctx == SHMEM_CTX_INVALID) {
        std::fprintf(stderr, "FAIL shmem_ctx_create\n");
        shmem_global_exit(2);
    }
    for (int pe = 0; pe < npes; pe++) shmem_ctx_long_p(ctx, &v[me], me * 10, pe);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    std::vector<long> got(npes, -1);
    shmemx_request_h req = nullptr;
    shmemx_ctx_long_get_nbe(ctx, got.data(), v, npes, (me + 1) % npes, &req);
    int done = 0;
    while (!done) shmemx_request_test(&req, &done);
    for (int i = 0; i < npes; i++) {
        if (got[i] != i * 10 || req != nullptr) {
            std::fprintf(stderr, "FAIL got[%d]=%ld\n", i, got[i]);
            shmem_global_exit(2);
        }
    }
    shmem_ctx_destroy(ctx);
    std::vector<long> want(npes);
    for (int i = 0; i < npes; i++) {
        if (v[i] != i * 10) {
            std::fprintf(stderr, "FAIL v[%d]=%ld\n", i, v[i]);
            shmem_global_exit(2);
        }
    }
    shmem_barrier_all();
    long old = shmem_long_atomic_fetch_add(&v[0], 1, 0);
    (void)old;
    shmem_wait_until(&v[0], SHMEM_CMP_GE, 0);  // the long function in C++
    shmem_team_sync(SHMEM_TEAM_WORLD);
    shmem_barrier_all();
    shmem_free(v);
    std::printf("ok cxx pe=%d\n", me);
    std::fflush(stdout);
    shmem_finalize();
    return 0;
}
