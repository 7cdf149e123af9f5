/* The device executor: runs one partition of a partitioned run on its
 * device's thread. Steps run one at a time in dataflow order, lowest step
 * first among the ready ones (creation order when nothing waits), so the
 * kernels may use the thread pool inside. A Recv whose value has not
 * arrived is parked, not run: the thread runs every other ready step,
 * and waits on the rendezvous only when nothing else can run, so no
 * thread ever blocks on a Recv while it could make progress, and an
 * abort (another partition failed) wakes it. The plan is compiled for
 * any order its dependencies allow (the parallel executor's memory plan),
 * and values are released after their last reader, as there. */
#include "runtime/rendezvous.h"
#include "runtime/runtime_impl.h"
#include "tg/autograd.h"
#include "tg/device.h"

#include <stdio.h>
#include <stdlib.h>

extern const tg_op_def tg_op_recv;

typedef struct dexec {
    tg_exec *x;
    int *deps, *reads;
    int *heap, n_heap;
    int *parked, n_parked;
    tg_tensor **arrived; /* per step: a Recv's value taken early */
} dexec;

static void heap_push(dexec *e, int k)
{
    int i = e->n_heap++;
    for (; i > 0 && e->heap[(i - 1) / 2] > k; i = (i - 1) / 2)
        e->heap[i] = e->heap[(i - 1) / 2];
    e->heap[i] = k;
}

static int heap_pop(dexec *e)
{
    int top = e->heap[0], last = e->heap[--e->n_heap], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= e->n_heap)
            break;
        if (c + 1 < e->n_heap && e->heap[c + 1] < e->heap[c])
            c++;
        if (e->heap[c] >= last)
            break;
        e->heap[i] = e->heap[c];
        i = c;
    }
    if (e->n_heap)
        e->heap[i] = last;
    return top;
}

static const tg_gnode *step_node(const dexec *e, int k)
{
    return &e->x->g->nodes[e->x->p->steps[k]];
}

static bool is_recv(const tg_gnode *n) { return n->kind == TG_GNODE_OP && n->op == &tg_op_recv; }

/* releases inputs read for the last time, makes successors ready */
static void complete(dexec *e, int k)
{
    const tg_plan *p = e->x->p;
    const tg_gnode *n = step_node(e, k);
    for (int i = 0; i < n->n_in; i++)
        if (--e->reads[n->in[i]] == 0 && !p->fetched[n->in[i]]) {
            tg_release(e->x->vals[n->in[i]]);
            e->x->vals[n->in[i]] = NULL;
        }
    for (int o = 0; o < n->n_out; o++)
        if (e->reads[n->out[o]] == 0 && !p->fetched[n->out[o]]) {
            tg_release(e->x->vals[n->out[o]]);
            e->x->vals[n->out[o]] = NULL;
        }
    for (int i = p->succ_start[k]; i < p->succ_start[k + 1]; i++)
        if (--e->deps[p->succ[i]] == 0)
            heap_push(e, p->succ[i]);
}

/* moves parked Recvs whose values arrived back to the ready heap */
static tg_status unpark(dexec *e, int *moved)
{
    *moved = 0;
    for (int i = 0; i < e->n_parked; i++) {
        int k = e->parked[i];
        if (tg__recv_try(step_node(e, k)->attr, &e->arrived[k]) != TG_OK)
            return tg_last_status();
        if (e->arrived[k]) {
            heap_push(e, k);
            e->parked[i--] = e->parked[--e->n_parked];
            (*moved)++;
        }
    }
    return TG_OK;
}

static tg_status run_step(dexec *e, int k)
{
    tg_exec *x = e->x;
    tg_rv_context *ctx = tg__rv_context_mut();
    ctx->arrived = e->arrived[k];
    e->arrived[k] = NULL;
    bool op;
    int64_t t0 = x->spans ? tg__now_ns() : 0;
    tg_status s = tg__exec_step(x, k, &op);
    tg_release(ctx->arrived); /* not taken when the step failed early */
    ctx->arrived = NULL;
    if (x->spans)
        x->spans[k] = (tg_trace_span){op ? x->p->steps[k] : -1, ctx->tid, t0, tg__now_ns()};
    x->n_ops += op;
    return s;
}

static tg_status loop(dexec *e, tg_rendezvous *rv)
{
    const tg_plan *p = e->x->p;
    int done = 0;
    char msg[1024];
    while (done < p->n_steps) {
        tg_status s = tg__rv_aborted(rv, msg, sizeof msg);
        if (s != TG_OK)
            return tg__error(s, "%s", msg);
        if (e->n_heap == 0) {
            int moved;
            if (unpark(e, &moved) != TG_OK)
                return tg_last_status();
            if (!moved && e->n_parked)
                tg__rv_wait(rv, 50000000);
            else if (!moved)
                return tg__error(TG_ERR_INTERNAL, "device executor: no step can run "
                                 "(%d of %d done) and none waits for a value", done,
                                 p->n_steps);
            continue;
        }
        int k = heap_pop(e);
        if (is_recv(step_node(e, k)) && !e->arrived[k]) {
            if (tg__recv_try(step_node(e, k)->attr, &e->arrived[k]) != TG_OK)
                return tg_last_status();
            if (!e->arrived[k]) {
                e->parked[e->n_parked++] = k;
                continue;
            }
        }
        if (run_step(e, k) != TG_OK)
            return tg_last_status();
        complete(e, k);
        done++;
    }
    return TG_OK;
}

tg_status tg__plan_execute_device(tg_exec *x)
{
    const tg_plan *p = x->p;
    const tg_rv_context *ctx = tg__rv_context();
    if (!ctx)
        return tg__error(TG_ERR_INTERNAL, "device executor: no rendezvous on this thread");
    tg_status s = tg__memplan_prepare(x->p);
    if (s != TG_OK)
        return s;
    size_t ns = (size_t)p->n_steps + 1;
    dexec e = {.x = x, .deps = malloc(ns * sizeof(int)),
               .reads = malloc(((size_t)p->n_values + 1) * sizeof(int)),
               .heap = malloc(ns * sizeof(int)), .parked = malloc(ns * sizeof(int)),
               .arrived = calloc(ns, sizeof(tg_tensor *))};
    if (!e.deps || !e.reads || !e.heap || !e.parked || !e.arrived) {
        s = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    } else {
        for (int k = 0; k < p->n_steps; k++)
            if ((e.deps[k] = p->n_preds[k]) == 0)
                heap_push(&e, k);
        for (int v = 0; v < p->n_values; v++)
            e.reads[v] = p->mem.n_reads[v];
        int old = tg__graph_suspend();
        tg_no_grad_begin();
        x->n_ops = 0;
        s = loop(&e, ctx->rv);
        tg_no_grad_end();
        tg__graph_resume(old);
    }
    for (int k = 0; e.arrived && k < p->n_steps; k++)
        tg_release(e.arrived[k]);
    free(e.deps);
    free(e.reads);
    free(e.heap);
    free(e.parked);
    free(e.arrived);
    return s;
}
