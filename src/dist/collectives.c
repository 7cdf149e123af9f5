/* Collectives on tensors (tg/dist.h): started non-blocking, waited for
 * through the polled wait of world.c. A world of one needs no MPI: every
 * collective is then the identity. */
#ifdef TG_HAVE_MPI
#include "dist/collectives.h"
#include "core/status_impl.h"
#include "core/tensor_impl.h"

#include <string.h>

static bool mpi_type(tg_dtype dt, MPI_Datatype *out)
{
    switch (dt) {
    case TG_FLOAT32: *out = MPI_FLOAT; return true;
    case TG_FLOAT64: *out = MPI_DOUBLE; return true;
    case TG_INT32: *out = MPI_INT32_T; return true;
    case TG_INT64: *out = MPI_INT64_T; return true;
    default: return false;
    }
}

static MPI_Op mpi_op(tg_reduce_op op)
{
    return op == TG_REDUCE_MAX ? MPI_MAX : op == TG_REDUCE_MIN ? MPI_MIN : MPI_SUM;
}

/* t usable in place by MPI: concrete, contiguous, a type MPI knows */
static bool check_tensor(const char *fn, const tg_tensor *t, MPI_Datatype *type)
{
    if (!t) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "%s: tensor is NULL", fn);
        return false;
    }
    if (!tg__check_concrete(fn, t))
        return false;
    if (!tg_is_contiguous(t)) {
        tg__error(TG_ERR_ARG, "%s: the tensor must be contiguous (call tg_contiguous)", fn);
        return false;
    }
    if (!mpi_type(t->dtype, type)) {
        tg__error(TG_ERR_DTYPE, "%s: expected float32, float64, int32 or int64, got %s", fn,
                  tg_dtype_name(t->dtype));
        return false;
    }
    if (t->numel > 0x7fffffff) {
        tg__error(TG_ERR_ARG, "%s: %lld elements, MPI counts stop at 2^31 - 1", fn,
                  (long long)t->numel);
        return false;
    }
    return true;
}

void tg__dist_scale(void *data, tg_dtype dt, int64_t n, double by)
{
    if (dt == TG_FLOAT32) {
        float *p = data, f = (float)by;
        for (int64_t i = 0; i < n; i++)
            p[i] *= f;
    } else {
        double *p = data;
        for (int64_t i = 0; i < n; i++)
            p[i] *= by;
    }
}

tg_status tg__dist_iallreduce(void *data, int64_t n, tg_dtype dt, tg_reduce_op op,
                              MPI_Request *req)
{
    MPI_Datatype type = MPI_FLOAT;
    mpi_type(dt, &type);
    int e = MPI_Iallreduce(MPI_IN_PLACE, data, (int)n, type, mpi_op(op), tg__dist_comm(), req);
    return e == MPI_SUCCESS ? TG_OK : tg__dist_mpi_error(e, "allreduce");
}

tg_status tg_dist_allreduce(tg_tensor *t, tg_reduce_op op)
{
    static const char fn[] = "tg_dist_allreduce";
    MPI_Datatype type;
    if (!check_tensor(fn, t, &type) || !tg__dist_ready(fn))
        return tg_last_status();
    if ((unsigned)op > TG_REDUCE_MIN)
        return tg__error(TG_ERR_ARG, "%s: unknown reduce op %d", fn, (int)op);
    if (op == TG_REDUCE_MEAN && !tg_dtype_is_float(t->dtype))
        return tg__error(TG_ERR_DTYPE, "%s: MEAN needs a float tensor, got %s", fn,
                         tg_dtype_name(t->dtype));
    if (!tg__dist_multi() || t->numel == 0)
        return TG_OK;
    MPI_Request req;
    tg_status s = tg__dist_iallreduce(tg__base(t), t->numel, t->dtype, op, &req);
    if (s == TG_OK)
        s = tg__dist_wait(&req, fn);
    if (s == TG_OK && op == TG_REDUCE_MEAN)
        tg__dist_scale(tg__base(t), t->dtype, t->numel, 1.0 / tg_dist_world_size());
    if (s == TG_OK)
        tg__bump_version(t);
    return s;
}

tg_status tg_dist_broadcast(tg_tensor *t, int root)
{
    static const char fn[] = "tg_dist_broadcast";
    MPI_Datatype type;
    if (!check_tensor(fn, t, &type) || !tg__dist_ready(fn))
        return tg_last_status();
    if (root < 0 || root >= tg_dist_world_size())
        return tg__error(TG_ERR_ARG, "%s: root %d is not a rank of a world of %d", fn, root,
                         tg_dist_world_size());
    if (!tg__dist_multi() || t->numel == 0)
        return TG_OK;
    MPI_Request req;
    int e = MPI_Ibcast(tg__base(t), (int)t->numel, type, root, tg__dist_comm(), &req);
    tg_status s = e == MPI_SUCCESS ? tg__dist_wait(&req, fn) : tg__dist_mpi_error(e, fn);
    if (s == TG_OK && tg_dist_rank() != root)
        tg__bump_version(t);
    return s;
}

/* the checks both ends of a point-to-point transfer make */
static bool check_peer(const char *fn, const tg_tensor *t, int peer, int tag, MPI_Datatype *type)
{
    if (!check_tensor(fn, t, type) || !tg__dist_ready(fn))
        return false;
    if (peer < 0 || peer >= tg_dist_world_size() || peer == tg_dist_rank()) {
        tg__error(TG_ERR_ARG, "%s: %d is not another rank of a world of %d", fn, peer,
                  tg_dist_world_size());
        return false;
    }
    if (tag < 0 || tag > 32767) {
        tg__error(TG_ERR_ARG, "%s: tag %d is outside [0, 32767]", fn, tag);
        return false;
    }
    return true;
}

tg_status tg_dist_send(const tg_tensor *t, int dst, int tag)
{
    static const char fn[] = "tg_dist_send";
    MPI_Datatype type;
    if (!check_peer(fn, t, dst, tag, &type))
        return tg_last_status();
    MPI_Request req;
    int e = MPI_Isend(tg__base(t), (int)t->numel, type, dst, tag, tg__dist_comm(), &req);
    return e == MPI_SUCCESS ? tg__dist_wait(&req, fn) : tg__dist_mpi_error(e, fn);
}

tg_status tg_dist_recv(tg_tensor *t, int src, int tag)
{
    static const char fn[] = "tg_dist_recv";
    MPI_Datatype type;
    if (!check_peer(fn, t, src, tag, &type))
        return tg_last_status();
    MPI_Request req;
    int e = MPI_Irecv(tg__base(t), (int)t->numel, type, src, tag, tg__dist_comm(), &req);
    tg_status s = e == MPI_SUCCESS ? tg__dist_wait(&req, fn) : tg__dist_mpi_error(e, fn);
    if (s == TG_OK)
        tg__bump_version(t);
    return s;
}

tg_status tg_dist_barrier(void)
{
    static const char fn[] = "tg_dist_barrier";
    if (!tg__dist_ready(fn))
        return tg_last_status();
    if (!tg__dist_multi())
        return TG_OK;
    MPI_Request req;
    int e = MPI_Ibarrier(tg__dist_comm(), &req);
    return e == MPI_SUCCESS ? tg__dist_wait(&req, fn) : tg__dist_mpi_error(e, fn);
}
#endif
