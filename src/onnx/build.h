/* What the build walk (build.c) and the binding of a model's inputs and
 * initializers (build_inputs.c) share. Internal to src/onnx. */
#ifndef TG_ONNX_BUILD_H
#define TG_ONNX_BUILD_H

#include "onnx/import.h"

typedef struct build_state {
    const tg_onnx_model *m;
    const tg_onnx_opts *opts;
    tg_graph *g;
    onnx_values vs;    /* by value id, two spare slots after the model's */
    tg_tensor **given; /* per model input, or NULL */
    bool body;         /* a subgraph: inputs are bound as given, no placeholders */
    int64_t *dims;     /* per model input: resolved shape */
    tg_generator *gen; /* the random ops': opts->generator, the enclosing
                        * build's (a body), or own_gen */
    tg_generator *own_gen; /* made for this build (seeded 0), freed with it */
} build_state;

/* appends t (retained) to a net's inputs or outputs as `name`, or as
 * name[index] for index >= 0 */
tg_status onnx_net_add(tg_tensor ***arr, char ***names, int *n, int *cap, const char *name,
                       int index, tg_tensor *t);
/* graph node names allow letters, digits and _ . / -: others become _ */
void onnx_graph_name(const char *src, char *dst, size_t cap);
/* after node mn's mapping ran (graph mode, not folded): its outputs' marked
 * dims, carried from its inputs' or set by the mapping (build_dims.c) */
void onnx_carry_dims(build_state *b, const mnode *mn, onnx_ictx *c);
/* the shape of model input i: concrete, or in graph mode -1 for symbolic
 * dims that nothing fixes */
tg_status onnx_resolve_input(build_state *b, int i, int64_t *shape, int *ndim);
/* the given inputs matched to the model's (net's inputs set when net) */
tg_status onnx_bind_inputs(build_state *b, tg_onnx_net *net, int n, const char *const *names,
                           tg_tensor *const *inputs);
/* the initializers as constants, variables or the tensors given for them */
tg_status onnx_bind_initializers(build_state *b, tg_onnx_net *net);

#endif
