/* Shared by the C test programs: CHECK ends the whole job with status 2 on failure. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <shmem.h>

/* The real hosts the PEs run on, in contiguous blocks: RSHMEM_TEST_HOSTS (set by the
 * simulated-host tests), else one. */
static inline int test_hosts(void) {
    const char *h = getenv("RSHMEM_TEST_HOSTS");
    int n = shmem_n_pes(), k = h ? atoi(h) : 1;
    return k < 1 ? 1 : k > n ? n : k;
}

static inline int same_block(int p, int q, int k) {
    int n = shmem_n_pes();
    return (long)p * k / n == (long)q * k / n;
}

/* The size SHMEM_TEAM_SHARED should have: this PE's host (its virtual host under
 * SHMEM_TRANSPORT=mixed), or this PE alone under SHMEM_TRANSPORT=ucx. */
static inline int expected_shared_size(void) {
    const char *t = getenv("SHMEM_TRANSPORT");
    const char *v = getenv("SHMEM_VIRTUAL_HOSTS");
    int n = shmem_n_pes(), me = shmem_my_pe(), k = v ? atoi(v) : 0, h = test_hosts(), count = 0;
    int mixed = t && strcmp(t, "mixed") == 0 && k > 0;
    if (t && (strcmp(t, "ucx") == 0 || strcmp(t, "ofi") == 0))
        return 1;
    if (k > n)
        k = n;
    for (int p = 0; p < n; p++)
        count += same_block(p, me, h) && (!mixed || same_block(p, me, k));
    return count;
}

/* The size SHMEMX_TEAM_HOST should have: the PEs of this PE's block when
 * SHMEM_VIRTUAL_HOSTS cuts the job into virtual hosts, else its real host's. */
static inline int expected_host_size(void) {
    const char *v = getenv("SHMEM_VIRTUAL_HOSTS");
    int n = shmem_n_pes(), me = shmem_my_pe(), k = v ? atoi(v) : 0, count = 0;
    if (k <= 0)
        k = test_hosts();
    if (k > n)
        k = n;
    for (int p = 0; p < n; p++)
        count += same_block(p, me, k);
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
