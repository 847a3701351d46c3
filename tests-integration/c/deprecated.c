/* Deprecated API: start_pes, _my_pe, _num_pes, shmalloc family, shmem_wait, typed waits,
 * the long shmem_wait_until function, <mpp/shmem.h>, _SHMEM_ constants, pshmem names,
 * info and query routines. */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>
#include <pshmem.h>
#include <stdio.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "FAIL %d: %s\n", __LINE__, #c); shmem_global_exit(2); } } while (0)

int main(void) {
    long psync[_SHMEM_BCAST_SYNC_SIZE];
    for (int i = 0; i < _SHMEM_BCAST_SYNC_SIZE; i++) psync[i] = _SHMEM_SYNC_VALUE;
    (void)psync;
    start_pes(0);
    int me = _my_pe(), npes = _num_pes();
    CHECK(me == pshmem_my_pe() && npes == pshmem_n_pes());
    int init = 0;
    shmem_query_initialized(&init);
    CHECK(init == 1);
    int major = 0, minor = 0;
    shmem_info_get_version(&major, &minor);
    CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION);
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0);
    int level = -1;
    shmem_query_thread(&level);
    CHECK(level >= SHMEM_THREAD_SINGLE && level <= SHMEM_THREAD_MULTIPLE);
    shmem_pcontrol(1, "ignored");
    CHECK(shmemx_wtime() >= 0.0);
    CHECK(shmemx_heap_size() > 0 && shmemx_heap_free() <= shmemx_heap_size());

    long *w = shmalloc(sizeof(long));
    int *iw = shmemalign(64, sizeof(int));
    CHECK(w && iw && ((unsigned long)iw % 64) == 0);
    *w = 0; *iw = 0;
    long *grown = shrealloc(w, 4 * sizeof(long));
    CHECK(grown != NULL);
    w = grown;
    *w = 0;
    shmem_barrier_all();
    int right = (me + 1) % npes;
    pshmem_long_p(w, 5, right);
    shmem_wait(w, 0);                  /* until *w != 0 */
    CHECK(*w == 5);
    shmem_barrier_all();
    shmem_int_p(iw, 9, right);
    shmem_int_wait(iw, 0);
    CHECK(*iw == 9);
    shmem_barrier_all();
    shmem_long_p(w, 8, right);
    (shmem_wait_until)(w, _SHMEM_CMP_EQ, 8L); /* the deprecated long function */
    pshmem_barrier_all();
    shfree(iw);
    shfree(w);
    printf("ok deprecated pe=%d\n", me);
    fflush(stdout);
    shmem_finalize();
    return 0;
}
