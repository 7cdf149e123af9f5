/* The parallel executor: a ready queue over the thread pool (a task group,
 * core/threadpool.h) with a dependency counter per step. A step becomes a
 * task when its last predecessor finishes, so independent operators run
 * at the same time; each kernel runs on one thread (parallel_for calls
 * from a task run serially). A value's tensor is released when its last
 * reader finishes; the memory plan, built for this executor, never hands
 * a node memory that a node it does not depend on may still touch. */
#include "core/threadpool.h"
#include "runtime/runtime_impl.h"
#include "tg/autograd.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct pexec {
    tg_exec *x;
    atomic_int *deps;  /* per step: predecessors not yet done */
    atomic_int *reads; /* per value: reads not yet done */
    atomic_llong n_ops;
    atomic_int failed;
    pthread_mutex_t err_mu;
    tg_status err;
    char msg[1024];
} pexec;

static void fail(pexec *e, tg_status s)
{
    pthread_mutex_lock(&e->err_mu);
    if (e->err == TG_OK) { /* the first failure is the one reported */
        e->err = s;
        snprintf(e->msg, sizeof e->msg, "%s", tg_last_error());
    }
    pthread_mutex_unlock(&e->err_mu);
    atomic_store(&e->failed, 1);
}

static void drop(pexec *e, int v)
{
    const tg_plan *p = e->x->p;
    if (!p->fetched[v]) {
        tg_release(e->x->vals[v]);
        e->x->vals[v] = NULL;
    }
}

static void run_task(tg_tasks *q, void *ctx, int64_t task, int worker)
{
    pexec *e = ctx;
    tg_exec *x = e->x;
    const tg_plan *p = x->p;
    int k = (int)task;
    if (atomic_load(&e->failed))
        return; /* after a failure nothing new starts */
    const tg_gnode *n = &x->g->nodes[p->steps[k]];
    bool op;
    int64_t t0 = x->spans ? tg__now_ns() : 0;
    tg_no_grad_begin(); /* per thread: nothing records, assigns may write leaves */
    tg_status s = tg__exec_step(x, k, &op);
    tg_no_grad_end();
    if (x->spans)
        x->spans[k] = (tg_trace_span){op ? p->steps[k] : -1, worker, t0, tg__now_ns()};
    if (op)
        atomic_fetch_add(&e->n_ops, 1);
    if (s != TG_OK) {
        fail(e, s);
        return;
    }
    for (int i = 0; i < n->n_in; i++)
        if (atomic_fetch_sub(&e->reads[n->in[i]], 1) == 1)
            drop(e, n->in[i]);
    for (int o = 0; o < n->n_out; o++)
        if (atomic_load(&e->reads[n->out[o]]) == 0)
            drop(e, n->out[o]); /* nobody reads it */
    for (int i = p->succ_start[k]; i < p->succ_start[k + 1]; i++)
        if (atomic_fetch_sub(&e->deps[p->succ[i]], 1) == 1)
            tg_tasks_push(q, p->succ[i]);
}

tg_status tg__plan_execute_parallel(tg_exec *x)
{
    const tg_plan *p = x->p;
    tg_status s = tg__memplan_prepare(x->p);
    if (s != TG_OK)
        return s;
    pexec e = {.x = x, .deps = malloc(((size_t)p->n_steps + 1) * sizeof(atomic_int)),
               .reads = malloc(((size_t)p->n_values + 1) * sizeof(atomic_int))};
    int64_t *ready = malloc(((size_t)p->n_steps + 1) * sizeof *ready);
    if (!e.deps || !e.reads || !ready) {
        free(e.deps);
        free(e.reads);
        free(ready);
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    }
    pthread_mutex_init(&e.err_mu, NULL);
    atomic_init(&e.n_ops, 0);
    atomic_init(&e.failed, 0);
    int n_ready = 0;
    for (int k = 0; k < p->n_steps; k++) {
        atomic_init(&e.deps[k], p->n_preds[k]);
        if (p->n_preds[k] == 0)
            ready[n_ready++] = k;
    }
    for (int v = 0; v < p->n_values; v++)
        atomic_init(&e.reads[v], p->mem.n_reads[v]);
    int old = tg__graph_suspend(); /* this thread's graph scopes; workers have none */
    if (tg_tasks_run(n_ready, ready, run_task, &e) != 0 && e.err == TG_OK)
        e.err = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory queueing nodes");
    else if (e.err != TG_OK) /* raised on a worker: report it on this thread */
        tg__error(e.err, "%s", e.msg);
    tg__graph_resume(old);
    x->n_ops = atomic_load(&e.n_ops);
    pthread_mutex_destroy(&e.err_mu);
    free(e.deps);
    free(e.reads);
    free(ready);
    return e.err;
}
