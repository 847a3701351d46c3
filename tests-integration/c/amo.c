/* AMOs: typed names, C11 generics, fetching nbi and the deprecated names. */
#include <stdint.h>
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *cnt = shmem_malloc(sizeof(long));
    int *ci = shmem_malloc(sizeof(int));
    uint64_t *bits = shmem_malloc(sizeof(uint64_t));
    double *dv = shmem_malloc(sizeof(double));
    unsigned int *uv = shmem_malloc(sizeof(unsigned int));
    *cnt = 0; *ci = 0; *bits = 0; *dv = 0; *uv = 0;
    shmem_barrier_all();

    /* everybody adds to PE 0 */
    shmem_long_atomic_add(cnt, me + 1, 0);
    shmem_atomic_inc(ci, 0);                       /* generic */
    shmem_uint64_atomic_or(bits, (uint64_t)1 << me, 0);
    long old = shmem_atomic_fetch_add(cnt, 10, 0); /* generic */
    CHECK(old >= 0);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(*cnt == (long)npes * (npes + 1) / 2 + 10L * npes);
        CHECK(*ci == npes);
        CHECK(*bits == ((uint64_t)1 << npes) - 1);
    }
    shmem_barrier_all();

    /* compare_swap: exactly one PE wins */
    int won = shmem_int_atomic_compare_swap(ci, npes, 1000 + me, 0) == npes;
    int *wins = shmem_malloc(sizeof(int));
    *wins = 0;
    shmem_barrier_all();
    if (won) shmem_int_atomic_inc(wins, 0);
    shmem_barrier_all();
    if (me == 0) CHECK(*wins == 1 && *ci >= 1000);

    /* fetch/set/swap on double (extended) */
    shmem_barrier_all();
    if (me == 0) shmem_double_atomic_set(dv, 2.5, npes - 1);
    shmem_barrier_all();
    if (me == npes - 1) CHECK(*dv == 2.5);
    CHECK(shmem_atomic_fetch(dv, npes - 1) == 2.5);
    shmem_barrier_all();
    if (me == 0) CHECK(shmem_double_atomic_swap(dv, 4.0, npes - 1) == 2.5);
    shmem_barrier_all();

    /* bitwise fetch forms */
    if (me == 0) {
        *uv = 0xF0;
        CHECK(shmem_uint_atomic_fetch_and(uv, 0x3C, 0) == 0xF0);
        CHECK(shmem_atomic_fetch_xor(uv, 0xFFu, 0) == 0x30);
        CHECK(*uv == 0xCF);
        CHECK(shmem_uint_atomic_fetch_or(uv, 0x100, 0) == 0xCF && *uv == 0x1CF);
    }

    /* fetching nbi */
    shmem_barrier_all();
    long f1 = -1, f2 = -1;
    shmem_long_atomic_fetch_inc_nbi(&f1, cnt, 0);
    shmem_atomic_fetch_nbi(&f2, cnt, 0); /* generic */
    shmem_quiet();
    CHECK(f1 >= 0 && f2 > 0);
    shmem_barrier_all();

    /* deprecated names */
    *ci = 5;
    shmem_barrier_all();
    if (me == 0) {
        CHECK(shmem_int_fetch(ci, npes - 1) == 5);
        CHECK(shmem_int_finc(ci, npes - 1) == 5);
        CHECK(shmem_int_fadd(ci, 2, npes - 1) == 6);
        shmem_int_add(ci, 1, npes - 1);
        shmem_int_inc(ci, npes - 1);
        CHECK(shmem_int_cswap(ci, 10, 20, npes - 1) == 10);
        CHECK(shmem_int_swap(ci, 30, npes - 1) == 20);
        shmem_int_set(ci, 40, npes - 1);
        CHECK(shmem_finc(ci, npes - 1) == 40); /* deprecated generic */
    }
    shmem_barrier_all();
    DONE("amo");
    shmem_finalize();
    return 0;
}
