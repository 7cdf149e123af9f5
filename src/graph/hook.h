/* Graph mode's entry point from the dispatcher (src/ops/dispatch.c): when
 * a graph scope is open or an input is symbolic, an op application
 * becomes a node instead of running. */
#ifndef TG_GRAPH_HOOK_H
#define TG_GRAPH_HOOK_H

#include "ops/op.h"

/* is graph mode on for this application (cheap: eager mode's fast path)? */
bool tg__graph_intercepts(int n_in, tg_tensor *const *in);
/* appends c's op (already inferred: c->out_meta is set) as a node and
 * writes symbolic outputs to c->out (not yet published) */
tg_status tg__graph_append(tg_op_ctx *c);

#endif
