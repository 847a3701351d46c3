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
    const char *v = getenv("SHMEM_VIRTUAL_HOSTS");
    int n = shmem_n_pes(), me = shmem_my_pe(), k = v ? atoi(v) : 0, count = 0;
    if (t && strcmp(t, "ucx") == 0)
        return 1;
    if (!t || strcmp(t, "mixed") != 0 || k <= 0)
        return n;
    /* mixed: each of k contiguous blocks of PEs (a virtual host) shares memory. */
    if (k > n)
        k = n;
    for (int p = 0; p < n; p++)
        count += (long)p * k / n == (long)me * k / n;
    return count;
}

/* The size SHMEMX_TEAM_HOST should have on one machine: the PEs of this PE's block when
 * SHMEM_VIRTUAL_HOSTS cuts the job into virtual hosts, else every PE. */
static inline int expected_host_size(void) {
    const char *v = getenv("SHMEM_VIRTUAL_HOSTS");
    int n = shmem_n_pes(), me = shmem_my_pe(), k = v ? atoi(v) : 0, count = 0;
    if (k <= 0)
        return n;
    if (k > n)
        k = n;
    for (int p = 0; p < n; p++)
        count += (long)p * k / n == (long)me * k / n;
    return count;
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
