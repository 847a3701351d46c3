/* Bad arguments end the job with a message naming routine and argument.
 * argv[1]: "nonsym" (a non-symmetric dest), "null" (null source; needs SHMEM_DEBUG=1),
 * "cmp" (a bad comparison), "pe" (a PE out of range); contexts: "ctx_invalid",
 * "ctx_destroyed", "ctx_team" (a shareable context destroyed with its team),
 * "ctx_default" (destroying SHMEM_CTX_DEFAULT), "team_pe" (a PE outside a context's
 * team), "ctx_fake" and "ctx_private" (need SHMEM_DEBUG=1: a handle never created, a
 * private context used by another thread); requests: "req_null", "merge_null"; teams:
 * "team_destroy_twice", "team_use_destroyed", "team_garbage" (a value never made by a
 * split), "team_destroy_world", "team_destroy_shared", "team_parent_destroyed". */
#include <pthread.h>
#include <shmem.h>
#include <shmemx.h>
#include <string.h>

static int *sym;

static void *use_ctx(void *ctx) {
    shmem_ctx_int_p((shmem_ctx_t)ctx, sym, 1, 0);
    return NULL;
}

int main(int argc, char **argv) {
    int local[4] = {0};
    shmem_init();
    sym = shmem_malloc(4 * sizeof(int));
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "nonsym") == 0) shmem_int_put(local, sym, 4, 0);
    if (strcmp(what, "null") == 0) shmem_int_put(sym, NULL, 4, 0);
    if (strcmp(what, "cmp") == 0) shmem_int_wait_until(sym, 42, 0);
    if (strcmp(what, "pe") == 0) shmem_int_p(sym, 1, shmem_n_pes());
    if (strcmp(what, "ctx_invalid") == 0) shmem_ctx_int_p(SHMEM_CTX_INVALID, sym, 1, 0);
    if (strcmp(what, "ctx_destroyed") == 0) {
        shmem_ctx_t c;
        if (shmem_ctx_create(0, &c) == 0) shmem_ctx_destroy(c);
        shmem_ctx_int_atomic_add(c, sym, 1, 0);
    }
    if (strcmp(what, "ctx_team") == 0 || strcmp(what, "team_pe") == 0) {
        shmem_team_t t;
        shmem_ctx_t c = SHMEM_CTX_INVALID;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), NULL, 0, &t);
        shmem_team_create_ctx(t, 0, &c);
        if (strcmp(what, "team_pe") == 0) shmem_ctx_int_p(c, sym, 1, shmem_team_n_pes(t));
        shmem_team_destroy(t);
        shmem_ctx_int_p(c, sym, 1, 0);
    }
    if (strcmp(what, "ctx_default") == 0) shmem_ctx_destroy(SHMEM_CTX_DEFAULT);
    if (strcmp(what, "ctx_fake") == 0) {
        static _Alignas(128) char fake[256];
        shmem_ctx_int_p((shmem_ctx_t)(void *)fake, sym, 1, 0);
    }
    if (strcmp(what, "ctx_private") == 0) {
        shmem_ctx_t c;
        pthread_t th;
        if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &c) == 0 &&
            pthread_create(&th, NULL, use_ctx, (void *)c) == 0)
            pthread_join(th, NULL);
    }
    if (strncmp(what, "team_", 5) == 0 && strcmp(what, "team_pe") != 0) {
        shmem_team_t t = SHMEM_TEAM_INVALID, u = SHMEM_TEAM_INVALID;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), NULL, 0, &t);
        if (strcmp(what, "team_destroy_twice") == 0) {
            shmem_team_destroy(t);
            shmem_team_destroy(t);
        }
        if (strcmp(what, "team_use_destroyed") == 0) {
            shmem_team_destroy(t);
            shmem_team_sync(t);
        }
        if (strcmp(what, "team_parent_destroyed") == 0) {
            shmem_team_destroy(t);
            shmem_team_split_strided(t, 0, 1, 1, NULL, 0, &u);
        }
        if (strcmp(what, "team_garbage") == 0) {
            static long junk[4];
            shmem_team_n_pes((shmem_team_t)(void *)junk);
        }
        if (strcmp(what, "team_destroy_world") == 0) shmem_team_destroy(SHMEM_TEAM_WORLD);
        if (strcmp(what, "team_destroy_shared") == 0) shmem_team_destroy(SHMEM_TEAM_SHARED);
    }
    if (strcmp(what, "req_null") == 0) shmemx_putmem_nbe(sym, local, 4, 0, NULL);
    if (strcmp(what, "merge_null") == 0) {
        shmemx_request_h r = NULL, *rp = &r;
        shmemx_merge_request(1, &rp, NULL);
    }
    shmem_finalize();
    return 0;
}
