/* Shared by the C test programs: CHECK ends the whole job with status 2 on failure. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <shmem.h>

/* The size SHMEM_TEAM_SHARED should have: every PE of this one-host job, or this PE alone
 * when SHMEM_TRANSPORT=ucx sends every other PE through UCX (the suite runs both ways). */
static inline int expected_shared_size(void) {
    const char *t = getenv("SHMEM_TRANSPORT");
    return t && strcmp(t, "ucx") == 0 ? 1 : shmem_n_pes();
}

/* Whether this PE maps `pe`'s memory (shmem_ptr works): the PEs of SHMEM_TEAM_SHARED. */
static inline int shares_memory_with(int pe) {
    return shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) >= 0;
}

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "FAIL %s:%d (PE %d): %s\n", __FILE__, __LINE__,          \
                    shmem_my_pe(), #cond);                                           \
            fflush(stderr);                                                          \
            shmem_global_exit(2);                                                    \
        }                                                                            \
    } while (0)

#define DONE(name)                                                                   \
    do {                                                                             \
        printf("ok %s pe=%d\n", name, shmem_my_pe());                                \
        fflush(stdout);                                                              \
    } while (0)
#endif
