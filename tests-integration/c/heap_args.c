/* Issue 26: symmetric allocation and team arguments. argv[1]:
 * "align"       (run with SHMEM_SYMMETRIC_SIZE=16M) shmem_align gives truly aligned
 *               addresses up to 64 MiB, NULL when an alignment cannot fit, and the
 *               blocks work remotely; prints "ok align pe=N";
 * "align_huge"  shmem_align(128 MiB, 64): an error naming the routine and argument;
 * "align_zero"  shmem_align(0, 64): likewise;
 * "split_null"  shmem_team_split_strided(..., NULL): an error naming new_team;
 * "aset_twice"  shmemx_delete_aset on a set already deleted: an error naming
 *               shmemx_delete_aset. */
#include <shmem.h>
#include <shmemx.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#define MIB ((size_t)1 << 20)

static int aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (strcmp(what, "align") == 0) {
        /* The heap (16 MiB) starts on a 64 MiB boundary: offset 0 suits any alignment
         * up to there, and nothing else in the heap suits 32 MiB. */
        char *p = shmem_align(64 * MIB, 100);
        CHECK(p != NULL && aligned(p, 64 * MIB));
        char *q = shmem_align(32 * MIB, 64);
        CHECK(q == NULL);
        shmem_free(p);
        q = shmem_align(32 * MIB, 64);
        CHECK(q != NULL && aligned(q, 32 * MIB));
        char *r = shmem_align(MIB, 4 * MIB);
        CHECK(r != NULL && aligned(r, MIB));
        CHECK(shmem_align(MIB, 32 * MIB) == NULL); /* larger than the heap */
        /* The blocks are symmetric: put into the right neighbour's. */
        int right = (me + 1) % n, left = (me + n - 1) % n;
        shmem_putmem(q, &me, sizeof me, right);
        shmem_putmem(r + 4 * MIB - sizeof me, &me, sizeof me, right);
        shmem_barrier_all();
        int a, b;
        memcpy(&a, q, sizeof a);
        memcpy(&b, r + 4 * MIB - sizeof me, sizeof b);
        CHECK(a == left && b == left);
        shmem_free(r);
        shmem_free(q);
        printf("ok align pe=%d\n", me);
    }
    if (strcmp(what, "align_huge") == 0) shmem_align(128 * MIB, 64);
    if (strcmp(what, "align_zero") == 0) shmem_align(0, 64);
    if (strcmp(what, "split_null") == 0)
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, NULL);
    if (strcmp(what, "aset_twice") == 0) {
        shmemx_aset_t s = shmemx_create_strided_aset(0, 1, n);
        shmemx_delete_aset(s);
        shmemx_delete_aset(s);
    }
    shmem_finalize();
    return 0;
}
