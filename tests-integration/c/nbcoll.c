/* Non-blocking collectives (seed 004): several in flight on one team, completed in any
 * order, merged with RMA requests, on WORLD, a split team and an active set, mixed with
 * blocking collectives (which run after them), tested while the caller computes. */
#include "check.h"
#include <shmemx.h>

#define N 3000

static long *a_src, *a_dst, *b_src, *b_dst, *c_buf, *f_dst, *t_src, *t_dst, *box;

static void run(shmem_team_t team) {
    int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team), i, it;
    int world_me = shmem_my_pe();
    for (it = 0; it < 5; it++) {
        shmemx_request_h ra = NULL, rb = NULL, rc = NULL, rf = NULL, rt = NULL, rs = NULL;
        for (i = 0; i < N; i++) {
            a_src[i] = i + me + it;
            b_src[i] = (long)(me + 1) * (i % 7);
        }
        if (me == 0)
            for (i = 0; i < N; i++) c_buf[i] = 10 * i + it;
        else
            for (i = 0; i < N; i++) c_buf[i] = -1;
        for (i = 0; i < n; i++) t_src[i] = me * 1000 + i + it;
        t_src[n] = me;
        CHECK(shmemx_long_sum_reduce_nbe(team, a_dst, a_src, N, &ra) == 0);
        CHECK(shmemx_long_max_reduce_nbe(team, b_dst, b_src, N, &rb) == 0);
        CHECK(shmemx_long_broadcast_nbe(team, c_buf, c_buf, N, 0, &rc) == 0);
        CHECK(shmemx_long_fcollect_nbe(team, f_dst, t_src + n, 1, &rf) == 0);
        CHECK(shmemx_long_alltoall_nbe(team, t_dst, t_src, 1, &rt) == 0);
        CHECK(shmemx_team_sync_nbe(team, &rs) == 0);
        CHECK(ra != NULL && rb != NULL && rc != NULL);
        /* compute while they run: poll one of them */
        volatile double x = 0;
        int flag = 0;
        while (!flag) {
            for (i = 0; i < 1000; i++) x += i * 0.5;
            CHECK(shmemx_request_test(&rs, &flag) == 0);
        }
        CHECK(rs == NULL);
        /* complete in reverse order; merge two first */
        shmemx_request_h merged = NULL, *both[2] = {&rt, &rf};
        CHECK(shmemx_merge_request(2, both, &merged) == 0);
        CHECK(rf == NULL && rt == NULL);
        shmemx_request_wait(&merged);
        for (i = 0; i < n; i++) CHECK(t_dst[i] == i * 1000 + me + it && f_dst[i] == i);
        shmemx_request_wait(&rc);
        for (i = 0; i < N; i++) CHECK(c_buf[i] == 10 * i + it);
        shmemx_request_wait(&rb);
        for (i = 0; i < N; i++) CHECK(b_dst[i] == (long)n * (i % 7));
        shmemx_request_wait(&ra);
        for (i = 0; i < N; i++) CHECK(a_dst[i] == (long)n * (i + it) + (long)n * (n - 1) / 2);
        CHECK(ra == NULL && rb == NULL && rc == NULL && rt == NULL);
    }
    /* a non-blocking reduce then a blocking one: the blocking one runs after it */
    {
        shmemx_request_h r = NULL;
        for (i = 0; i < N; i++) a_src[i] = 1;
        CHECK(shmemx_long_sum_reduce_nbe(team, a_dst, a_src, N, &r) == 0);
        CHECK(shmem_long_sum_reduce(team, b_dst, a_src, N) == 0);
        for (i = 0; i < N; i++) CHECK(b_dst[i] == n);
        shmemx_request_wait(&r);
        for (i = 0; i < N; i++) CHECK(a_dst[i] == n);
    }
    /* a put_nbe merged with a non-blocking barrier-like sync */
    {
        shmemx_request_h r = NULL, p = NULL;
        int right = shmem_team_translate_pe(team, (me + 1) % n, SHMEM_TEAM_WORLD);
        long v = world_me;
        shmemx_long_put_nbe(box, &v, 1, right, &p);
        shmemx_request_wait(&p);
        shmem_quiet();
        CHECK(shmemx_team_sync_nbe(team, &r) == 0);
        shmemx_request_wait(&r);
        int left = shmem_team_translate_pe(team, (me + n - 1) % n, SHMEM_TEAM_WORLD);
        CHECK(*box == left);
        shmem_team_sync(team);
    }
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    a_src = shmem_calloc(N, sizeof(long));
    a_dst = shmem_calloc(N, sizeof(long));
    b_src = shmem_calloc(N, sizeof(long));
    b_dst = shmem_calloc(N, sizeof(long));
    c_buf = shmem_calloc(N, sizeof(long));
    f_dst = shmem_calloc(64, sizeof(long));
    t_src = shmem_calloc(65, sizeof(long));
    t_dst = shmem_calloc(64, sizeof(long));
    box = shmem_calloc(1, sizeof(long));
    CHECK(a_src && a_dst && b_src && b_dst && c_buf && f_dst && t_src && t_dst && box);

    run(SHMEM_TEAM_WORLD);
    shmem_barrier_all();

    /* a split team: the odd PEs (or PE 0 alone at 1 PE) */
    shmem_team_t odd = SHMEM_TEAM_INVALID;
    int start = npes > 1 ? 1 : 0, size = npes > 1 ? npes / 2 : 1;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 2, size, NULL, 0, &odd);
    if (odd != SHMEM_TEAM_INVALID) {
        run(odd);
        shmem_team_destroy(odd);
    }
    shmem_barrier_all();

    /* an active set: WORLD reversed, through the generic constructor */
    int list[64];
    for (int i = 0; i < npes; i++) list[i] = npes - 1 - i;
    shmemx_aset_t rev = shmemx_create_generic_aset(list, npes);
    run(rev);
    shmemx_delete_aset(rev);

    /* non-blocking barrier_all, left in flight into finalize's neighbour */
    shmemx_request_h r = NULL;
    shmemx_barrier_all_nbe(&r);
    shmemx_request_wait(&r);
    shmem_barrier_all();
    DONE("nbcoll");
    (void)me;
    shmem_finalize();
    return 0;
}
