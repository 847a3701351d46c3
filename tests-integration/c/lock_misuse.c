/* Lock misuse must end the job with an error naming the routine and the lock, not hang.
 * argv[1] picks the misuse; every mode first checks that the lock works when used right. */
#include <pthread.h>
#include <string.h>
#include "check.h"

static long *lock;

/* Thread of PE 1 in "set_while_waiting": queues behind PE 0 and waits. */
static void *waiter(void *arg) {
    (void)arg;
    shmem_set_lock(lock);
    shmem_clear_lock(lock);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK(provided == SHMEM_THREAD_MULTIPLE);
    CHECK(argc == 2);
    const char *mode = argv[1];
    int me = shmem_my_pe();
    lock = shmem_calloc(1, sizeof(long));
    long *counter = shmem_calloc(1, sizeof(long));

    /* Right use first: a lock-protected counter, and test_lock on a free lock. */
    for (int i = 0; i < 10; i++) {
        shmem_set_lock(lock);
        long c = shmem_long_g(counter, 0);
        shmem_long_p(counter, c + 1, 0);
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    CHECK(shmem_long_g(counter, 0) == 10L * shmem_n_pes());
    if (me == 0) {
        CHECK(shmem_test_lock(lock) == 0);
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    printf("ready pe=%d\n", me);
    fflush(stdout);

    if (me == 0 && strcmp(mode, "clear_unheld") == 0) {
        shmem_clear_lock(lock);
    } else if (me == 0 && strcmp(mode, "set_twice") == 0) {
        shmem_set_lock(lock);
        shmem_set_lock(lock);
    } else if (me == 0 && strcmp(mode, "test_held") == 0) {
        shmem_set_lock(lock);
        (void)shmem_test_lock(lock);
    } else if (strcmp(mode, "clear_other") == 0) {
        /* PE 0 holds the lock; PE 1 clears it. */
        if (me == 0)
            shmem_set_lock(lock);
        shmem_barrier_all();
        if (me == 1)
            shmem_clear_lock(lock);
    } else if (strcmp(mode, "set_while_waiting") == 0) {
        /* PE 0 holds the lock; a thread of PE 1 waits for it; PE 1's main thread sets it
         * again once its own word shows the PE queued. */
        if (me == 0)
            shmem_set_lock(lock);
        shmem_barrier_all();
        if (me == 1) {
            pthread_t t;
            CHECK(pthread_create(&t, NULL, waiter, NULL) == 0);
            shmem_long_wait_until(lock, SHMEM_CMP_NE, 0);
            shmem_set_lock(lock);
        }
    } else if (strcmp(mode, "ok") == 0) {
        DONE("lock_misuse");
        shmem_finalize();
        return 0;
    }
    /* The misusing PE never gets here; the others wait for the job to end. */
    shmem_barrier_all();
    printf("not caught pe=%d\n", me);
    fflush(stdout);
    shmem_finalize();
    return 0;
}
