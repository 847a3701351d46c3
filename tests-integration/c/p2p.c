/* Point-to-point waits and tests, signals, put-with-signal, locks. */
#include <stdint.h>
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes;
    long *flag = shmem_malloc(sizeof(long));
    int *flags = shmem_malloc(npes * sizeof(int));
    uint64_t *sig = shmem_malloc(sizeof(uint64_t));
    int *data = shmem_malloc(4 * sizeof(int));
    long *lock = shmem_malloc(sizeof(long));
    long *counter = shmem_malloc(sizeof(long));
    *flag = 0; *sig = 0; *lock = 0; *counter = 0;
    for (int i = 0; i < npes; i++) flags[i] = 0;
    shmem_barrier_all();

    /* ring: wait_until on a flag set by the left neighbour */
    shmem_long_atomic_set(flag, 1, right);
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
    CHECK(shmem_long_test(flag, SHMEM_CMP_GE, 1) == 1);
    CHECK(shmem_test(flag, SHMEM_CMP_GT, 1) == 0); /* generic */
    shmem_barrier_all();

    /* everyone sets its slot on PE 0; PE 0 waits for all, any, some */
    shmem_int_atomic_set(&flags[me], me + 1, 0);
    if (me == 0) {
        shmem_int_wait_until_all(flags, npes, NULL, SHMEM_CMP_NE, 0);
        int status[64] = {0};
        size_t idx[64];
        size_t k = shmem_int_wait_until_any(flags, npes, status, SHMEM_CMP_GT, 0);
        CHECK(k < (size_t)npes);
        size_t n = shmem_int_test_some(flags, npes, idx, NULL, SHMEM_CMP_GE, 1);
        CHECK(n == (size_t)npes);
        status[0] = 1; /* exclude element 0 */
        n = shmem_wait_until_some(flags, npes, idx, status, SHMEM_CMP_GE, 1); /* generic */
        CHECK(n == (size_t)npes - 1);
        for (size_t i = 0; i < n; i++) CHECK(idx[i] != 0);
        int want[64];
        for (int i = 0; i < npes; i++) want[i] = i + 1;
        CHECK(shmem_int_test_all_vector(flags, npes, NULL, SHMEM_CMP_EQ, want) == 1);
        want[npes - 1] = 99;
        CHECK(shmem_int_test_all_vector(flags, npes, NULL, SHMEM_CMP_EQ, want) == 0);
        CHECK(shmem_int_test_any(flags, npes, NULL, SHMEM_CMP_LT, 0) == SIZE_MAX);
        for (int i = 0; i < npes; i++) status[i] = 1;
        CHECK(shmem_int_wait_until_any(flags, npes, status, SHMEM_CMP_EQ, 0) == SIZE_MAX);
        CHECK(shmem_int_test_all(flags, npes, status, SHMEM_CMP_EQ, 0) == 1);
    }
    shmem_barrier_all();

    /* put with signal to the right neighbour, then signal_add */
    int payload[4] = {me, me * 2, me * 3, me * 4};
    shmem_int_put_signal(data, payload, 4, sig, 7, SHMEM_SIGNAL_SET, right);
    uint64_t v = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 7);
    CHECK(v == 7);
    int left = (me + npes - 1) % npes;
    CHECK(data[3] == left * 4);
    shmem_barrier_all();
    shmem_signal_add(sig, 3, right);
    shmem_signal_wait_until(sig, SHMEM_CMP_GE, 10);
    CHECK(shmem_signal_fetch(sig) == 10);
    shmem_barrier_all();
    shmem_putmem_signal_nbi(data, payload, sizeof payload, sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_quiet();
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 11);
    shmem_barrier_all();
    shmem_signal_set(sig, 0, me);
    CHECK(shmem_signal_fetch(sig) == 0);

    /* lock-protected non-atomic counter on PE 0 */
    for (int i = 0; i < 20; i++) {
        shmem_set_lock(lock);
        long c = shmem_long_g(counter, 0);
        shmem_long_p(counter, c + 1, 0);
        shmem_quiet();
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    if (me == 0) CHECK(*counter == 20L * npes);
    if (me == 0) {
        CHECK(shmem_test_lock(lock) == 0);
        shmem_clear_lock(lock);
    }
    shmem_fence();
    shmem_sync_all();
    DONE("p2p");
    shmem_finalize();
    return 0;
}
