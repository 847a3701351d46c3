/* shmem_global_exit: PE 1 (or 0 alone) ends the job with status 7 while the others wait. */
#include <shmem.h>
#include <stdio.h>
int main(void) {
    shmem_init();
    int me = shmem_my_pe();
    long *never = shmem_malloc(sizeof(long));
    *never = 0;
    shmem_barrier_all();
    if (me == (shmem_n_pes() > 1 ? 1 : 0)) {
        printf("exiting pe=%d\n", me);
        fflush(stdout);
        shmem_global_exit(7);
    }
    shmem_long_wait_until(never, SHMEM_CMP_NE, 0);
    return 1;
}
