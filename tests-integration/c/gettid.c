/* shmemx_register_gettid (Sandia OpenSHMEM): the program names its threads, and the
 * library tells threads apart by those names. Run with SHMEM_DEBUG=1, which checks that
 * a SHMEM_CTX_PRIVATE context is used by the thread that made it. argv[1]:
 * "same"  a context made by a worker is used by a second OS thread that carries the same
 *         name (a user-level thread moved to another OS thread): accepted; the workers'
 *         atomics all arrive; prints "ok gettid pe=N";
 * "other" the second thread carries another name: the use is refused, naming the ctx. */
#include <pthread.h>
#include <shmem.h>
#include <shmemx.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#define T 4

static _Thread_local uint64_t name; /* 0 on the main thread */
static int calls;                   /* how often the library asked, for the check */
static long counter;
static shmem_ctx_t handed;

static uint64_t program_tid(void) {
    __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    return name;
}

struct job { uint64_t name; int use_handed; };

static void *work(void *arg) {
    const struct job *j = arg;
    name = j->name;
    int n = shmem_n_pes();
    if (j->use_handed) {
        for (int pe = 0; pe < n; pe++) shmem_ctx_long_atomic_add(handed, &counter, 1, pe);
        shmem_ctx_quiet(handed);
        return NULL;
    }
    shmem_ctx_t c;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &c) == 0);
    for (int pe = 0; pe < n; pe++) shmem_ctx_long_atomic_add(c, &counter, 1, pe);
    shmem_ctx_quiet(c);
    shmem_ctx_destroy(c);
    return NULL;
}

static void run(struct job *j) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, work, j) == 0);
    CHECK(pthread_join(t, NULL) == 0);
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    int provided;
    shmemx_register_gettid(program_tid); /* before init, as SOS allows */
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0);
    CHECK(provided == SHMEM_THREAD_MULTIPLE);
    int me = shmem_my_pe(), n = shmem_n_pes();
    pthread_t t[T];
    struct job jobs[T];
    for (int i = 0; i < T; i++) {
        jobs[i] = (struct job){.name = 100 + (uint64_t)i, .use_handed = 0};
        CHECK(pthread_create(&t[i], NULL, work, &jobs[i]) == 0);
    }
    for (int i = 0; i < T; i++) CHECK(pthread_join(t[i], NULL) == 0);
    /* A private context made under name 7, then used from another OS thread. */
    name = 7;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &handed) == 0);
    name = 0;
    struct job next = {.name = strcmp(what, "other") == 0 ? 8 : 7, .use_handed = 1};
    run(&next);
    name = 7; /* destroyed by its owner too */
    shmem_ctx_destroy(handed);
    name = 0;
    shmem_barrier_all();
    CHECK(counter == (long)(T + 1) * n);
    CHECK(__atomic_load_n(&calls, __ATOMIC_RELAXED) > 0);
    printf("ok gettid pe=%d\n", me);
    shmem_finalize();
    return 0;
}
