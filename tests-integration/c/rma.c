/* Typed, SIZE and mem RMA: put/get/p/g/iput/iget/ibput/ibget/put_nbi/get_nbi. */
#include <stdint.h>
#include <string.h>
#include "check.h"

#define N 16

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    int *ia = shmem_malloc(N * sizeof(int));
    double *da = shmem_calloc(N, sizeof(double));
    uint64_t *ua = shmem_malloc(N * sizeof(uint64_t));
    char *bytes = shmem_malloc(N);
    long double *lda = shmem_malloc(N * sizeof(long double));
    CHECK(ia && da && ua && bytes && lda);
    for (int i = 0; i < N; i++) CHECK(da[i] == 0.0);
    shmem_barrier_all(); /* nobody writes before everybody checked calloc's zeros */

    int src[N];
    double dsrc[N];
    for (int i = 0; i < N; i++) { src[i] = me * 100 + i; dsrc[i] = me + i / 4.0; }
    shmem_int_put(ia, src, N, right);
    shmem_double_put_nbi(da, dsrc, N, right);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < N; i++) {
        CHECK(ia[i] == left * 100 + i);
        CHECK(da[i] == left + i / 4.0);
    }

    /* get, g, get_nbi from the right neighbour */
    int got[N];
    shmem_int_get(got, ia, N, right);
    for (int i = 0; i < N; i++) CHECK(got[i] == me * 100 + i);
    CHECK(shmem_int_g(ia + 3, right) == me * 100 + 3);
    double dg[N];
    shmem_double_get_nbi(dg, da, N, left);
    shmem_quiet();
    CHECK(dg[5] == ((left + npes - 1) % npes) + 5 / 4.0);

    /* p and single-element long double */
    shmem_barrier_all();
    shmem_uint64_p(ua, (uint64_t)me << 40, right);
    shmem_longdouble_p(lda, 0.5L + me, right);
    shmem_barrier_all();
    CHECK(ua[0] == (uint64_t)left << 40);
    CHECK(lda[0] == 0.5L + left);
    CHECK(shmem_longdouble_g(lda, right) == 0.5L + me);

    /* strided: every other element */
    shmem_barrier_all();
    for (int i = 0; i < N; i++) ia[i] = -1;
    shmem_barrier_all();
    shmem_int_iput(ia, src, 2, 1, N / 2, right);
    shmem_barrier_all();
    for (int i = 0; i < N; i++) CHECK(ia[i] == (i % 2 == 0 ? left * 100 + i / 2 : -1));
    int ig[N / 2];
    shmem_int_iget(ig, ia, 1, 2, N / 2, me);
    for (int i = 0; i < N / 2; i++) CHECK(ig[i] == left * 100 + i);

    /* blocks (1.6 ibput): 3 blocks of 2 elements, dest stride 4, source stride 2 */
    shmem_barrier_all();
    for (int i = 0; i < N; i++) ia[i] = -1;
    shmem_barrier_all();
    shmem_int_ibput(ia, src, 4, 2, 2, 3, right);
    shmem_barrier_all();
    for (int b = 0; b < 3; b++) {
        CHECK(ia[4 * b] == left * 100 + 2 * b);
        CHECK(ia[4 * b + 1] == left * 100 + 2 * b + 1);
        CHECK(ia[4 * b + 2] == -1);
    }

    /* SIZE and mem variants */
    shmem_barrier_all();
    uint64_t s64[4] = {1, 2, 3, (uint64_t)me};
    shmem_put64(ua, s64, 4, right);
    shmem_putmem(bytes, "hello, rshmem!", 15, right);
    shmem_put128(ua + 4, s64, 2, right);
    shmem_barrier_all();
    CHECK(ua[3] == (uint64_t)left && ua[7] == (uint64_t)left && ua[4] == 1);
    CHECK(strcmp(bytes, "hello, rshmem!") == 0);
    char b2[15];
    shmem_getmem(b2, bytes, 15, left);
    CHECK(memcmp(b2, "hello, rshmem!", 15) == 0);
    uint32_t g32[2];
    shmem_get32(g32, ua, 2, left);
    CHECK(g32[0] == 1 && g32[1] == 0);
    shmem_int_put(ia, src, 0, right); /* nelems == 0 is a no-op */

    /* shmem_ptr: non-null exactly for the PEs whose memory this PE maps */
    CHECK((shmem_ptr(ia, right) != NULL) == shares_memory_with(right));
    CHECK(shmem_ptr(ia, me) != NULL);
    CHECK(shmem_addr_accessible(ia, right) == 1);
    CHECK(shmem_pe_accessible(right) == 1);

    shmem_barrier_all();
    shmem_free(lda);
    shmem_free(bytes);
    shmem_free(ua);
    shmem_free(da);
    shmem_free(ia);
    DONE("rma");
    shmem_finalize();
    return 0;
}
