/* tg/dist.h: the backward hooks the reducer stands on, and the world's
 * collectives and gradient reducer, in whatever world this runs in: alone
 * (ctest test_dist: a world of one, every collective the identity) or
 * under `mpirun -np 2` (ctest dist_mpi2: real sums, broadcasts, buckets
 * started while backward runs). `test_dist --die` is the faults test's
 * program (tests/dist/faults.sh): the last rank kills itself while the
 * others wait in an allreduce, which must fail naming it; with --hang it
 * stops (SIGSTOP) instead, and the others must name it when its
 * heartbeats stop. */
#include "harness.h"
#include "core/status_impl.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

/* ---- backward hooks ------------------------------------------------------- */
typedef struct seen {
    const tg_tensor *order[8];
    int n, done;
} seen;

static tg_status record(void *user, tg_tensor *leaf)
{
    seen *s = user;
    if (s->n < 8)
        s->order[s->n] = leaf;
    s->n++;
    return TG_OK;
}

static tg_status record_done(void *user)
{
    ((seen *)user)->done++;
    return TG_OK;
}

static tg_status refuse(void *user, tg_tensor *leaf)
{
    (void)user, (void)leaf;
    return tg__error(TG_ERR_ARG, "refused by the test's hook");
}

static void test_backward_hooks(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){1, -2, 3});
    tg_tensor *w1 = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){0.5, 1, 2});
    tg_tensor *w2 = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){2, 3, 4});
    CHECK_OK(tg_set_requires_grad(w1, true));
    CHECK_OK(tg_set_requires_grad(w2, true));
    seen s = {0};
    tg_set_backward_hooks(&(tg_backward_hooks){record, record_done, &s});
    /* w1 is used twice (its gradient is final only after both uses), w2
     * once, near the loss: w2 is final first */
    tg_tensor *h = tg_add(tg_relu(tg_mul(w1, x)), w1);
    CHECK_OK(tg_backward(tg_sum(tg_mul(w2, h), 0, NULL, false), NULL, false));
    CHECK(s.n == 2 && s.done == 1);
    CHECK(s.order[0] == w2 && s.order[1] == w1);
    CHECK_TENSOR(tg_grad(w1), ((double[]){2 * 1 + 2, 3 * 0 + 3, 4 * 3 + 4}), 1e-6);
    /* tg_autograd_grad fills no grad: no hooks */
    tg_tensor *g = NULL;
    tg_tensor *l = tg_sum(tg_mul(w2, w2), 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &l, NULL, 1, &w2, &g, false, false));
    tg_release(g); /* the caller owns what grad returns */
    CHECK(s.n == 2 && s.done == 1);
    /* an error from a hook ends backward with it */
    tg_set_backward_hooks(&(tg_backward_hooks){refuse, NULL, NULL});
    CHECK_FAILS(tg_backward(tg_sum(tg_mul(w2, w1), 0, NULL, false), NULL, false), TG_ERR_ARG,
                "refused by the test's hook");
    tg_set_backward_hooks(NULL);
    CHECK_OK(tg_backward(tg_sum(tg_mul(w2, w1), 0, NULL, false), NULL, false));
    CHECK(s.n == 2);
}

/* ---- the world ------------------------------------------------------------- */
static void test_world(void)
{
    if (!tg_dist_built()) {
        CHECK_FAILS(tg_dist_init(), TG_ERR_UNSUPPORTED, "built without MPI");
        return;
    }
    CHECK_OK(tg_dist_init());
    CHECK_OK(tg_dist_init()); /* idempotent */
    CHECK(tg_dist_is_initialized());
    int rank = tg_dist_rank(), size = tg_dist_world_size();
    CHECK(size >= 1 && rank >= 0 && rank < size);
    tg_tensor *t = tg_full(TG_FLOAT32, 1, (int64_t[]){5}, rank + 1);
    CHECK_OK(tg_dist_allreduce(t, TG_REDUCE_SUM));
    double sum = size * (size + 1) / 2.0;
    CHECK_TENSOR(t, ((double[]){sum, sum, sum, sum, sum}), 0);
    tg_tensor *m = tg_full(TG_FLOAT64, 2, (int64_t[]){2, 2}, rank + 1);
    CHECK_OK(tg_dist_allreduce(m, TG_REDUCE_MEAN));
    CHECK_TENSOR(m, ((double[]){sum / size, sum / size, sum / size, sum / size}), 1e-12);
    tg_tensor *i = tg_full(TG_INT64, 1, (int64_t[]){2}, rank);
    CHECK_OK(tg_dist_allreduce(i, TG_REDUCE_MAX));
    CHECK_TENSOR(i, ((double[]){size - 1, size - 1}), 0);
    tg_tensor *b = tg_full(TG_FLOAT32, 1, (int64_t[]){3}, 10 * rank + 7);
    CHECK_OK(tg_dist_broadcast(b, 0));
    CHECK_TENSOR(b, ((double[]){7, 7, 7}), 0);
    CHECK_OK(tg_dist_barrier());
    /* what is refused */
    CHECK_FAILS(tg_dist_allreduce(tg_transpose(tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3}), 0, 1),
                                  TG_REDUCE_SUM), TG_ERR_ARG, "contiguous");
    CHECK_FAILS(tg_dist_allreduce(tg_zeros(TG_BOOL, 1, (int64_t[]){2}), TG_REDUCE_SUM),
                TG_ERR_DTYPE, "bool");
    CHECK_FAILS(tg_dist_allreduce(i, TG_REDUCE_MEAN), TG_ERR_DTYPE, "MEAN needs a float");
    CHECK_FAILS(tg_dist_broadcast(b, size), TG_ERR_ARG, "not a rank");
    CHECK_FAILS(tg_dist_set_timeout(0), TG_ERR_ARG, "seconds");
    /* point to point: rank 0 to the last rank */
    tg_tensor *msg = tg_full(TG_FLOAT32, 1, (int64_t[]){3}, rank == 0 ? 5 : -1);
    if (size > 1 && rank == 0)
        CHECK_OK(tg_dist_send(msg, size - 1, 9));
    if (size > 1 && rank == size - 1) {
        CHECK_OK(tg_dist_recv(msg, 0, 9));
        CHECK_TENSOR(msg, ((double[]){5, 5, 5}), 0);
    }
    CHECK_FAILS(tg_dist_send(msg, rank, 9), TG_ERR_ARG, "not another rank");
    CHECK_FAILS(tg_dist_recv(msg, size, 9), TG_ERR_ARG, "not another rank");
    CHECK_FAILS(tg_dist_send(msg, (rank + 1) % size, 40000), TG_ERR_ARG,
                size > 1 ? "tag 40000" : "not another rank");
}

/* ---- the reducer: a linear model on data that differs per rank ------------ */
static tg_tensor *local_loss(tg_tensor *w, tg_tensor *bias, int rank)
{
    tg_tensor *x = tg_full(TG_FLOAT32, 2, (int64_t[]){4, 3}, 0.25 * (rank + 1));
    tg_tensor *y = tg_add(tg_matmul(x, w), bias);
    return tg_sum(tg_mul(y, y), 0, NULL, false);
}

static void test_reducer(void)
{
    if (!tg_dist_built())
        return;
    int rank = tg_dist_rank(), size = tg_dist_world_size();
    tg_tensor *w = tg_arange(TG_FLOAT32, 0, 6, 1), *bias = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    w = tg_contiguous(tg_reshape(w, 2, (int64_t[]){3, 2}));
    CHECK_OK(tg_set_requires_grad(w, true));
    CHECK_OK(tg_set_requires_grad(bias, true));
    /* the expected mean: every rank's local gradient, averaged by hand */
    CHECK_OK(tg_backward(tg_sum(local_loss(w, bias, rank), 0, NULL, false), NULL, false));
    tg_tensor *gw = tg_clone(tg_grad(w)), *gb = tg_clone(tg_grad(bias));
    CHECK_OK(tg_dist_allreduce(gw, TG_REDUCE_MEAN));
    CHECK_OK(tg_dist_allreduce(gb, TG_REDUCE_MEAN));
    tg_zero_grad(w);
    tg_zero_grad(bias);
    /* 8-byte buckets: one per parameter, bias's (the last) first */
    tg_dist_reducer *r = tg_dist_reducer_new(2, (tg_tensor *[]){w, bias}, 8, TG_REDUCE_MEAN);
    CHECK(r != NULL);
    int early = -1;
    CHECK(tg_dist_reducer_buckets(r, &early) == 2);
    CHECK_OK(tg_dist_reducer_arm(r));
    CHECK_OK(tg_backward(tg_sum(local_loss(w, bias, rank), 0, NULL, false), NULL, false));
    CHECK(tg_dist_reducer_buckets(r, &early) == 2);
    /* both buckets start inside backward, each as soon as its parameter's
     * gradient is final (bias's before matmul's rule has run) */
    CHECK(early == (size > 1 ? 2 : 0));
    CHECK(tt_rel_diff(tg_grad(w), gw, 1) == 0 && tt_rel_diff(tg_grad(bias), gb, 1) == 0);
    /* disarmed after one backward: the next one is local */
    tg_zero_grad(w);
    tg_zero_grad(bias);
    CHECK_OK(tg_backward(tg_sum(local_loss(w, bias, rank), 0, NULL, false), NULL, false));
    CHECK(size == 1 || tt_rel_diff(tg_grad(w), gw, 1) > 0);
    /* a rank with nothing to backward contributes zeros (finish) */
    tg_zero_grad(w);
    tg_zero_grad(bias);
    CHECK_OK(tg_dist_reducer_arm(r));
    if (rank == 0)
        CHECK_OK(tg_dist_reducer_finish(r));
    else
        CHECK_OK(tg_backward(tg_sum(local_loss(w, bias, rank), 0, NULL, false), NULL, false));
    CHECK(size == 1 || tg_grad(w) != NULL);
    CHECK_ERROR(tg_dist_reducer_new(2, (tg_tensor *[]){w, w}, 8, TG_REDUCE_MEAN), TG_ERR_ARG,
                "repeats");
    tg_dist_reducer_free(r);
}

/* rank size-1 dies while the others wait in an allreduce: they must fail
 * with an error naming it (or be ended by mpirun after saying so) */
static int die(bool hang)
{
    if (tg_dist_init() != TG_OK) {
        fprintf(stderr, "test_dist: %s\n", tg_last_error());
        return 2;
    }
    int rank = tg_dist_rank(), size = tg_dist_world_size();
    if (tg_dist_barrier() != TG_OK)
        return 2;
    if (rank == size - 1) {
        usleep(300000);
        raise(hang ? SIGSTOP : SIGKILL);
    }
    tg_tensor *t = tg_zeros(TG_FLOAT32, 1, (int64_t[]){1000});
    for (;;)
        if (tg_dist_allreduce(t, TG_REDUCE_SUM) != TG_OK) {
            fprintf(stderr, "test_dist: rank %d: %s\n", rank, tg_last_error());
            tg_dist_finalize();
            return 3;
        }
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--die") || !strcmp(argv[1], "--hang")))
        return die(!strcmp(argv[1], "--hang"));
    RUN(test_backward_hooks);
    RUN(test_world);
    RUN(test_reducer);
    if (tg_dist_is_initialized())
        CHECK_OK(tg_dist_finalize());
    return tt_finish();
}
