/* The profiling interface: a tool defines routines under their plain names and reaches
 * the library through the pshmem_ (p-prefixed) names. Linked against the shared and the
 * static library. */
#include <pshmem.h>
#include "check.h"

static int puts_seen, barriers_seen;

void shmem_int_put(int *dest, const int *source, size_t nelems, int pe) {
    puts_seen++;
    pshmem_int_put(dest, source, nelems, pe);
}

void shmem_barrier_all(void) {
    barriers_seen++;
    pshmem_barrier_all();
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(p_my_pe() == me && p_num_pes() == n && pshmem_n_pes() == n);
    int *x = shmem_malloc(sizeof(int));
    CHECK(x != NULL);
    *x = -1;
    shmem_barrier_all();
    int v = me;
    shmem_int_put(x, &v, 1, (me + 1) % n);
    shmem_barrier_all();
    CHECK(*x == (me + n - 1) % n);
    CHECK(puts_seen == 1 && barriers_seen == 2);
    shmem_free(x);
    DONE("profiling");
    shmem_finalize();
    return 0;
}
