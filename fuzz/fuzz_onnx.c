/* libFuzzer target for the ONNX reader and importer: see onnx_exercise.h
 * for what the format layer does with one input (parse, serialize round
 * trip, tensor conversion); then the importer loads the model and, when
 * that succeeds, builds it as a graph and runs it eagerly on zero inputs
 * of the declared shapes. Any failure must be a clean error with a
 * message. fuzz/run.sh builds and runs it. */
#include "onnx_exercise.h"

#include "tg/onnx.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* small zero inputs for the model's graph inputs; false when one would be
 * large or its type is unusable */
static bool make_inputs(const tg_onnx_model *m, const char **names, tg_tensor **ins)
{
    int n = tg_onnx_num_inputs(m);
    if (n > 16)
        return false;
    for (int i = 0; i < n; i++) {
        tg_onnx_value_info v;
        if (tg_onnx_input_info(m, i, &v) != TG_OK)
            return false;
        int64_t shape[TG_MAX_DIMS], numel = 1;
        int nd = v.ndim < 0 ? 1 : v.ndim;
        for (int d = 0; d < nd; d++) {
            shape[d] = v.ndim < 0 || v.shape[d] < 0 ? 2 : v.shape[d];
            if (shape[d] > 4096) /* before the product, which could overflow */
                return false;
            numel *= shape[d] ? shape[d] : 1;
            if (numel > 4096)
                return false;
        }
        names[i] = v.name;
        ins[i] = tg_zeros(v.dtype, nd, shape);
        if (!ins[i])
            return false;
    }
    return true;
}

static const char *import_exercise(const uint8_t *data, size_t size)
{
    tg_onnx_model *m = tg_onnx_load_bytes(data, size);
    if (!m)
        return tg_last_error()[0] ? NULL : "import failed without a message";
    const char *problem = NULL, *names[16];
    tg_tensor *ins[16];
    tg_scope_begin();
    if (make_inputs(m, names, ins)) {
        int n = tg_onnx_num_inputs(m);
        /* graph mode first: shapes are checked before anything is allocated */
        for (int mode = TG_ONNX_GRAPH; mode >= TG_ONNX_EAGER && !problem; mode--) {
            tg_state_dict *outs = NULL;
            tg_clear_error();
            if (tg_onnx_run(m, (tg_onnx_mode)mode, n, names, ins, &outs, NULL) != TG_OK) {
                if (!tg_last_error()[0])
                    problem = "a run failed without a message";
                if (tg_last_status() == TG_ERR_INTERNAL)
                    problem = "a run failed with TG_ERR_INTERNAL";
                break; /* eager would fail the same way (or allocate) */
            }
            tg_state_dict_free(outs);
        }
    }
    tg_scope_end();
    tg_onnx_free(m);
    tg_clear_error();
    return problem;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *problem = onnx_exercise(data, size);
    if (!problem)
        problem = import_exercise(data, size);
    if (problem) {
        fprintf(stderr, "onnx fuzz: %s\n", problem);
        __builtin_trap();
    }
    return 0;
}
