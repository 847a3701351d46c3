/* Teams: predefined handles, split_strided, split_2d, translate, config, sync, destroy,
 * and the shmemx HOST/LEADERS teams and split_color. */
#include "check.h"
#include <shmemx.h>

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me);
    CHECK(shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes);
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == expected_shared_size());
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1);
    CHECK(shmem_team_n_pes(SHMEMX_TEAM_HOST) == expected_host_size());

    /* team_ptr (1.6) on WORLD equals shmem_ptr; INVALID and stack addresses give NULL. */
    long *buf = shmem_malloc(sizeof(long));
    long local = 0;
    CHECK(buf != NULL);
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, buf, npes - 1) == shmem_ptr(buf, npes - 1));
    CHECK((shmem_team_ptr(SHMEM_TEAM_WORLD, buf, npes - 1) != NULL) ==
          shares_memory_with(npes - 1));
    CHECK(shmem_team_ptr(SHMEM_TEAM_INVALID, buf, 0) == NULL);
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, &local, 0) == NULL);

    /* even PEs */
    shmem_team_t even;
    shmem_team_config_t cfg = {2};
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &cfg,
                                      SHMEM_TEAM_NUM_CONTEXTS, &even);
    CHECK(rc == 0);
    if (me % 2 == 0) {
        CHECK(even != SHMEM_TEAM_INVALID);
        CHECK(shmem_team_my_pe(even) == me / 2);
        CHECK(shmem_team_n_pes(even) == (npes + 1) / 2);
        CHECK(shmem_team_translate_pe(even, 1 % shmem_team_n_pes(even), SHMEM_TEAM_WORLD) ==
              2 * (1 % shmem_team_n_pes(even)));
        shmem_team_config_t got = {0};
        CHECK(shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0);
        CHECK(got.num_contexts == 2);
        CHECK(shmem_team_sync(even) == 0);
        /* team_ptr takes team ranks: rank r of `even` is world PE 2r. */
        long *w = shmem_team_ptr(even, buf, shmem_team_n_pes(even) - 1);
        CHECK(w == shmem_ptr(buf, 2 * (shmem_team_n_pes(even) - 1)));
        CHECK(shmem_team_ptr(even, buf, shmem_team_n_pes(even)) == NULL);
    } else {
        CHECK(even == SHMEM_TEAM_INVALID);
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, even) == -1);
    }
    CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, 0, &cfg) != 0);

    /* an invalid triplet fails everywhere */
    shmem_team_t bad;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &bad) != 0);
    CHECK(bad == SHMEM_TEAM_INVALID);

    /* 2-D: rows of 2 */
    shmem_team_t xt, yt;
    rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt);
    CHECK(rc == 0);
    CHECK(shmem_team_my_pe(xt) == me % 2);
    CHECK(shmem_team_my_pe(yt) == me / 2);
    CHECK(shmem_team_n_pes(yt) == (npes - me % 2 + 1) / 2);
    shmem_team_sync(xt);

    /* color split: odd/even by color, reversed order by key */
    shmem_team_t col;
    rc = shmemx_team_split_color(SHMEM_TEAM_WORLD, me % 2, -me, NULL, 0, &col);
    CHECK(rc == 0 && col != SHMEM_TEAM_INVALID);
    CHECK(shmem_team_n_pes(col) == (me % 2 == 0 ? (npes + 1) / 2 : npes / 2));

    shmem_team_destroy(col);
    shmem_team_destroy(yt);
    shmem_team_destroy(xt);
    if (even != SHMEM_TEAM_INVALID) shmem_team_destroy(even);
    shmem_team_destroy(SHMEM_TEAM_INVALID); /* no-op */
    shmem_barrier_all();
    shmem_free(buf);
    DONE("team");
    shmem_finalize();
    return 0;
}
