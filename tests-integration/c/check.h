/* Shared by the C test programs: CHECK ends the whole job with status 2 on failure. */
#ifndef CHECK_H
#define CHECK_H
#include <stdio.h>
#include <shmem.h>

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
