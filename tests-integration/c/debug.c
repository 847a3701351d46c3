/* Bad arguments end the job with a message naming routine and argument.
 * argv[1]: "nonsym" (a non-symmetric dest), "null" (null source; needs SHMEM_DEBUG=1),
 * "cmp" (a bad comparison), "pe" (a PE out of range). */
#include <shmem.h>
#include <string.h>
int main(int argc, char **argv) {
    int local[4] = {0};
    shmem_init();
    int *sym = shmem_malloc(4 * sizeof(int));
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "nonsym") == 0) shmem_int_put(local, sym, 4, 0);
    if (strcmp(what, "null") == 0) shmem_int_put(sym, NULL, 4, 0);
    if (strcmp(what, "cmp") == 0) shmem_int_wait_until(sym, 42, 0);
    if (strcmp(what, "pe") == 0) shmem_int_p(sym, 1, shmem_n_pes());
    shmem_finalize();
    return 0;
}
