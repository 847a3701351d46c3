/* Issue 26: waits on PEs that finalized or exited must end with an error naming them,
 * never hang. argv[1] picks the case (the last PE, `last`, is the one that leaves):
 *   lock HOW      PE 1 takes a lock and leaves holding it (HOW: finalize, exit, return);
 *                 the others' shmem_set_lock must fail naming PE 1.
 *   wait          `last` exits 0 after init (finalized at exit); the others wait for a
 *                 flag it would have set: the waits fail naming it.
 *   try_barrier   `last` finalizes; the others' shmemx_try_barrier_all() all return
 *                 SHMEMX_ERR_PE_FINALIZED naming it, then they sync as an active set.
 *   exit3         `last` exits 3 while the others are in barriers.
 *   abort         PE 1 passes a bad PE number (a fatal error) while the others are in
 *                 barriers. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include "check.h"
#include <shmemx.h>

static void pause_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static long lk;
static int flag;
static long psync[SHMEM_BARRIER_SYNC_SIZE];

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), last = n - 1;
    CHECK(argc >= 2 && n >= 2);
    const char *mode = argv[1];
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    if (strcmp(mode, "lock") == 0) {
        CHECK(argc == 3);
        if (me == 1) shmem_set_lock(&lk);
        shmem_barrier_all();
        if (me == 1) {
            printf("holding pe=%d\n", me);
            fflush(stdout);
            if (strcmp(argv[2], "finalize") == 0) {
                shmem_finalize();
                return 0;
            }
            if (strcmp(argv[2], "exit") == 0) exit(0);
            return 0;
        }
        shmem_set_lock(&lk);
        printf("not caught pe=%d\n", me);
    } else if (strcmp(mode, "wait") == 0) {
        if (me == last) exit(0);
        shmem_int_wait_until(&flag, SHMEM_CMP_EQ, 1);
        printf("not caught pe=%d\n", me);
    } else if (strcmp(mode, "try_barrier") == 0) {
        if (me == last) {
            shmem_finalize();
            return 0;
        }
        int rc = shmemx_try_barrier_all();
        printf("try pe=%d rc=%d msg=%s\n", me, rc, rc ? shmemx_error_message() : "");
        fflush(stdout);
        CHECK(rc == SHMEMX_ERR_PE_FINALIZED);
        char want[64];
        snprintf(want, sizeof want, "PE %d called shmem_finalize", last);
        CHECK(strstr(shmemx_error_message(), want) != NULL);
        /* The survivors go on together. */
        shmem_barrier(0, 0, n - 1, psync);
        shmem_barrier(0, 0, n - 1, psync);
        printf("ok live pe=%d\n", me);
    } else if (strcmp(mode, "exit3") == 0) {
        if (me == last) {
            pause_ms(200);
            exit(3);
        }
        for (;;) shmem_barrier_all();
    } else if (strcmp(mode, "abort") == 0) {
        if (me == 1) {
            pause_ms(200);
            shmem_int_p(&flag, 1, n + 98);
        }
        for (;;) shmem_barrier_all();
    } else {
        CHECK(0 && "unknown mode");
    }
    shmem_finalize();
    return 0;
}
