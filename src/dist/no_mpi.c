/* tg/dist.h when the library was built without MPI: the queries answer
 * for a world of one, everything that would communicate says why not. */
#ifndef TG_HAVE_MPI
#include "tg/dist.h"
#include "core/status_impl.h"

static tg_status not_built(const char *fn)
{
    return tg__error(TG_ERR_UNSUPPORTED,
                     "%s: tensorgraph was built without MPI (install libopenmpi-dev, "
                     "e.g. with scripts/setup.sh, and configure again)", fn);
}

bool tg_dist_built(void) { return false; }
tg_status tg_dist_init(void) { return not_built("tg_dist_init"); }
tg_status tg_dist_finalize(void) { return TG_OK; }
tg_status tg_dist_serve(void) { return not_built("tg_dist_serve"); }
bool tg_dist_is_initialized(void) { return false; }
int tg_dist_rank(void) { return 0; }
int tg_dist_world_size(void) { return 1; }

tg_status tg_dist_set_timeout(double seconds)
{
    (void)seconds;
    return not_built("tg_dist_set_timeout");
}

tg_status tg_dist_allreduce(tg_tensor *t, tg_reduce_op op)
{
    (void)t, (void)op;
    return not_built("tg_dist_allreduce");
}

tg_status tg_dist_broadcast(tg_tensor *t, int root)
{
    (void)t, (void)root;
    return not_built("tg_dist_broadcast");
}

tg_status tg_dist_barrier(void) { return not_built("tg_dist_barrier"); }

tg_status tg_dist_send(const tg_tensor *t, int dst, int tag)
{
    (void)t, (void)dst, (void)tag;
    return not_built("tg_dist_send");
}

tg_status tg_dist_recv(tg_tensor *t, int src, int tag)
{
    (void)t, (void)src, (void)tag;
    return not_built("tg_dist_recv");
}

tg_dist_reducer *tg_dist_reducer_new(int n, tg_tensor *const *params, size_t bucket_bytes,
                                     tg_reduce_op op)
{
    (void)n, (void)params, (void)bucket_bytes, (void)op;
    not_built("tg_dist_reducer_new");
    return NULL;
}

tg_status tg_dist_reducer_arm(tg_dist_reducer *r)
{
    (void)r;
    return not_built("tg_dist_reducer_arm");
}

tg_status tg_dist_reducer_finish(tg_dist_reducer *r)
{
    (void)r;
    return not_built("tg_dist_reducer_finish");
}

int tg_dist_reducer_buckets(const tg_dist_reducer *r, int *started_early)
{
    (void)r, (void)started_early;
    not_built("tg_dist_reducer_buckets");
    return -1;
}

void tg_dist_reducer_free(tg_dist_reducer *r) { (void)r; }
#endif
