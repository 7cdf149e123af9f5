/* What the ONNX fuzz target does with one input, shared with
 * tests/test_onnx_format.c (which runs it on truncated and bit-flipped
 * fixtures and on every saved crash input): parse; on success serialize,
 * parse the result again and check that serializing is then stable;
 * convert every tensor found (initializers, attribute tensors, subgraphs)
 * to tg_tensor. Returns NULL when all is well, else what broke. */
#ifndef TG_ONNX_EXERCISE_H
#define TG_ONNX_EXERCISE_H

#include "onnx/proto.h"

#include <stdlib.h>
#include <string.h>

static void onnx_exercise_tensor(const onnx_tensor *tp)
{
    tg_scope_begin(); /* owns the tensor, whether or not a scope is open */
    tg_tensor *t = onnx_tensor_to_tg(tp);
    if (t) {
        onnx_tensor back;
        if (onnx_tensor_from_tg(t, tp->name, true, &back) == TG_OK)
            onnx_tensor_clear(&back);
    }
    tg_scope_end();
    tg_clear_error();
}

static void onnx_exercise_graph(const onnx_graph *g)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        onnx_exercise_tensor(&g->initializer[i]);
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t j = 0; j < g->node[i].n_attribute; j++) {
            const onnx_attribute *a = &g->node[i].attribute[j];
            if (a->t)
                onnx_exercise_tensor(a->t);
            if (a->g)
                onnx_exercise_graph(a->g);
            for (size_t k = 0; k < a->n_tensors; k++)
                onnx_exercise_tensor(&a->tensors[k]);
            for (size_t k = 0; k < a->n_graphs; k++)
                onnx_exercise_graph(&a->graphs[k]);
        }
}

static const char *onnx_exercise(const uint8_t *data, size_t len)
{
    onnx_model *m = NULL, *m2 = NULL;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    const char *problem = NULL;
    tg_status s = onnx_model_parse(data, len, &m);
    if (s != TG_OK) {
        if (s != TG_ERR_IO && s != TG_ERR_NOMEM)
            problem = "parse failed with a status other than TG_ERR_IO";
        else if (!tg_last_error()[0] || m)
            problem = "parse failed without a message or left a model";
        tg_clear_error();
        return problem;
    }
    if (m->graph)
        onnx_exercise_graph(m->graph);
    if (onnx_model_serialize(m, &b1, &n1) != TG_OK)
        problem = "serializing a parsed model failed";
    else if (onnx_model_parse(b1, n1, &m2) != TG_OK)
        problem = "parsing a serialized model failed";
    else if (onnx_model_serialize(m2, &b2, &n2) != TG_OK)
        problem = "serializing a re-parsed model failed";
    else if (n1 != n2 || (n1 && memcmp(b1, b2, n1) != 0))
        problem = "serialize(parse(serialize(m))) differs from serialize(m)";
    free(b1);
    free(b2);
    onnx_model_free(m);
    onnx_model_free(m2);
    tg_clear_error();
    return problem;
}

#endif
