// The C API from C++17: extern "C" declarations, typed routines, teams, contexts,
// explicit non-blocking requests, and the overloaded generic names (as SOS has them).
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

    // Overloads: each call must pick the routine of its argument's type.
    static double d[4];
    static unsigned short us[2];
    static int flag;
    static long long ll;
    static float fsum;
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    double dsrc[4] = {me + 0.5, me + 1.5, me + 2.5, me + 3.5};
    shmem_put(d, dsrc, 4, right);
    shmem_put(SHMEM_CTX_DEFAULT, us, &us[0], 1, right);
    shmem_p(&us[1], (unsigned short)(60000 + me), right);
    shmem_atomic_add(&ll, 1LL << 40, 0);
    shmem_atomic_add(SHMEM_CTX_DEFAULT, &ll, 1LL, 0);
    shmem_quiet();
    shmem_barrier_all();
    if (shmem_g(&d[3], me) != left + 3.5 || us[1] != 60000 + left) {
        std::fprintf(stderr, "FAIL overloads d[3]=%f us[1]=%u\n", d[3], us[1]);
        shmem_global_exit(2);
    }
    if (me == 0 && shmem_atomic_fetch(&ll, 0) != npes * ((1LL << 40) + 1)) {
        std::fprintf(stderr, "FAIL overloaded atomics ll=%lld\n", ll);
        shmem_global_exit(2);
    }
    static float one = 1.0f;
    shmem_sum_reduce(SHMEM_TEAM_WORLD, &fsum, &one, 1);
    if (fsum != (float)npes) {
        std::fprintf(stderr, "FAIL overloaded reduce %f\n", fsum);
        shmem_global_exit(2);
    }
    shmem_atomic_set(&flag, 1, right);
    shmem_wait_until(&flag, SHMEM_CMP_EQ, 1);
    // The short set forms Sandia OpenSHMEM also has (1.5 lists short for wait_until only).
    static short sflags[2];
    shmem_short_p(&sflags[1], 7, right);
    shmem_wait_until_any(sflags, 2, nullptr, SHMEM_CMP_EQ, 7);
    if (!shmem_short_test_all(&sflags[1], 1, nullptr, SHMEM_CMP_EQ, 7)) {
        std::fprintf(stderr, "FAIL short test_all\n");
        shmem_global_exit(2);
    }
    shmem_barrier_all();
    shmem_free(v);
    std::printf("ok cxx pe=%d\n", me);
    std::fflush(stdout);
    shmem_finalize();
    return 0;
}
