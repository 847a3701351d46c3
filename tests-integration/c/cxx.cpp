// The C API from C++17: extern "C" declarations, typed routines, teams.
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
    for (int pe = 0; pe < npes; pe++) shmem_long_p(&v[me], me * 10, pe);
    shmem_barrier_all();
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
