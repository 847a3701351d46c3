/* Global and static variables are symmetric: RMA, AMOs, waits, locks, collectives and
 * shmem_ptr on them, in a position-independent executable with ASLR. */
#include <stdint.h>
#include "check.h"

#define N 32

static int sarr[N];                 /* .bss */
static long counter;                /* .bss */
static uint64_t flag;               /* .bss */
long lock_word = 0;                 /* global */
static int initialized[4] = {1, 2, 3, 4}; /* .data */
static long bsrc[N], bdst[N];
static long shared_sum;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    CHECK(initialized[0] == 1 && initialized[3] == 4);
    CHECK(shmem_addr_accessible(sarr, right));

    int src[N];
    for (int i = 0; i < N; i++) src[i] = me * 100 + i;
    shmem_int_put(sarr, src, N, right);
    shmem_long_atomic_add(&counter, me + 1, 0);
    shmem_fence();
    shmem_uint64_atomic_set(&flag, 1, right);
    shmem_uint64_wait_until(&flag, SHMEM_CMP_EQ, 1);
    shmem_barrier_all();
    for (int i = 0; i < N; i++) CHECK(sarr[i] == left * 100 + i);
    if (me == 0) CHECK(counter == (long)npes * (npes + 1) / 2);

    /* shmem_ptr gives a load/store view of every PE's copy. */
    for (int pe = 0; pe < npes; pe++) {
        uint64_t *p = shmem_ptr(&flag, pe);
        if (shares_memory_with(pe))
            CHECK(p != NULL && *p == 1);
        else
            CHECK(p == NULL);
    }

    /* A lock and a non-atomic counter on PE 0, both statics. */
    for (int k = 0; k < 20; k++) {
        shmem_set_lock(&lock_word);
        long v = shmem_long_g(&shared_sum, 0);
        shmem_long_p(&shared_sum, v + 1, 0);
        shmem_clear_lock(&lock_word);
    }
    shmem_barrier_all();
    if (me == 0) CHECK(shared_sum == 20L * npes);

    /* Team collectives on static buffers. */
    for (int i = 0; i < N; i++) bsrc[i] = me + i;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, bdst, bsrc, N);
    for (int i = 0; i < N; i++) CHECK(bdst[i] == (long)npes * (npes - 1) / 2 + (long)npes * i);
    shmem_long_broadcast(SHMEM_TEAM_WORLD, bdst, bsrc, N, npes - 1);
    for (int i = 0; i < N; i++) CHECK(bdst[i] == npes - 1 + i);

    DONE("statics");
    shmem_finalize();
    return 0;
}
