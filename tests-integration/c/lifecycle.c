/* Start and end of a program's OpenSHMEM part. argv[1]:
 * "start_pes"   legacy start_pes(0), never finalized: the job ends 0, no warning;
 * "no_finalize" shmem_init, PE 0 returns from main without finalizing while the others
 *               still work, then finalize: a one-line warning from PE 0, status 0;
 * "init_twice"  shmem_init twice, shmem_finalize once: status 0, no warning;
 * "nested"      two init/finalize pairs: the inner finalize keeps the library up;
 * "reinit"      shmem_init after the last shmem_finalize: a clear error;
 * "exit_fail"   PE 1 (0 alone) calls exit(3) while the others wait: status 3, no hang;
 * "calloc"      shmem_calloc whose count * size overflows gives NULL on every PE;
 * "fork_exit"   a forked child calls exit(0): it is no PE, nothing is finalized for it;
 * "global_exit0" PE 1 (0 alone) calls shmem_global_exit(0) while the others wait: the
 *               job ends 0 at once (no finalize at exit while the job is torn down). */
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static long ring;

/* Every PE puts to its right neighbour; checks what the left one put. */
static void ring_check(void) {
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_long_p(&ring, me + 1, (me + 1) % n);
    shmem_barrier_all();
    CHECK(ring == (me + n - 1) % n + 1);
    shmem_barrier_all();
}

static void nap(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "start_pes") == 0) {
        start_pes(0);
        ring_check();
        printf("ok start_pes pe=%d\n", _my_pe());
        return 0;
    }
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (strcmp(what, "no_finalize") == 0) {
        ring_check();
        printf("ok no_finalize pe=%d\n", me);
        if (me == 0) return 0; /* the at-exit finalize waits for the others */
        nap(200);
        shmem_finalize();
        return 0;
    }
    if (strcmp(what, "init_twice") == 0) {
        shmem_init();
        ring_check();
        printf("ok init_twice pe=%d\n", me);
        shmem_finalize();
        return 0;
    }
    if (strcmp(what, "nested") == 0) {
        int up = 0;
        shmem_init();
        shmem_finalize(); /* inner: a barrier, the library stays up */
        shmem_query_initialized(&up);
        CHECK(up == 1);
        ring_check();
        shmem_finalize();
        shmem_query_initialized(&up);
        CHECK(up == 0);
        printf("ok nested pe=%d\n", me);
        return 0;
    }
    if (strcmp(what, "reinit") == 0) {
        shmem_finalize();
        printf("finalized pe=%d\n", me);
        fflush(stdout);
        shmem_init();
        printf("reinitialized pe=%d\n", me);
        return 0;
    }
    if (strcmp(what, "exit_fail") == 0 || strcmp(what, "global_exit0") == 0) {
        static long never;
        shmem_barrier_all();
        if (me == (n > 1 ? 1 : 0)) {
            if (what[0] == 'g') shmem_global_exit(0);
            exit(3);
        }
        shmem_long_wait_until(&never, SHMEM_CMP_NE, 0);
        return 0;
    }
    if (strcmp(what, "calloc") == 0) {
        CHECK(shmem_calloc(SIZE_MAX / 2 + 1, 2) == NULL);
        CHECK(shmem_calloc(2, SIZE_MAX) == NULL);
        CHECK(shmem_malloc(SIZE_MAX) == NULL);
        long *z = shmem_calloc(4, sizeof(long));
        CHECK(z != NULL);
        for (int i = 0; i < 4; i++) CHECK(z[i] == 0);
        shmem_barrier_all();
        shmem_long_p(&z[me % 4], me + 1, (me + 1) % n);
        shmem_barrier_all();
        CHECK(z[(me + n - 1) % n % 4] == (me + n - 1) % n + 1);
        shmem_free(z);
        printf("ok calloc pe=%d\n", me);
        shmem_finalize();
        return 0;
    }
    if (strcmp(what, "fork_exit") == 0) {
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) exit(0);
        int status = -1;
        CHECK(child > 0 && waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ring_check();
        printf("ok fork_exit pe=%d\n", me);
        shmem_finalize();
        return 0;
    }
    fprintf(stderr, "lifecycle: unknown mode %s\n", what);
    return 2;
}
