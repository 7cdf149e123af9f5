/* tg run MODEL.onnx: runs an ONNX model on inputs from a safetensors file
 * (keyed by graph input names) eagerly or as a static graph, writes the
 * outputs (keyed by graph output names) and, with --grad, the gradients of
 * the sum of all floating-point outputs with respect to every
 * floating-point input and initializer (keyed by their ONNX names). */
#include "args.h"
#include "commands.h"
#include "paths.h"
#include "tg/tg.h"

#include <stdio.h>
#include <string.h>

#define RUN_USAGE                                                                   \
    "usage: tg run MODEL.onnx [--input IN.safetensors] --output OUT.safetensors\n"  \
    "              [--grad GRAD.safetensors] [--mode eager|graph]\n"                 \
    "Runs an ONNX model (opsets 7-17; see docs/ONNX.md for the ops). Inputs are\n" \
    "keyed by the graph's input names, outputs by its output names. --grad also\n"  \
    "writes d(sum of all floating-point outputs) / d(every floating-point input\n"  \
    "and initializer), keyed by their ONNX names. --mode graph (default) builds a\n" \
    "static graph and runs it in a session; eager runs op by op with autograd."

int tg_cmd_run(int argc, char **argv)
{
    const char *in_path = NULL, *out_path = NULL, *grad_path = NULL, *mode = "graph";
    const char *pos[1];
    int n_pos = 0;
    const opt opts[] = {
        {"input", OPT_STRING, &in_path, "safetensors file with the inputs"},
        {"output", OPT_STRING, &out_path, "safetensors file for the outputs (required)"},
        {"grad", OPT_STRING, &grad_path, "safetensors file for the gradients"},
        {"mode", OPT_STRING, &mode, "eager or graph (default graph)"},
    };
    args_result r = args_parse(RUN_USAGE, argc, argv, 1, opts, 4, pos, 1, &n_pos);
    if (r != ARGS_OK)
        return r == ARGS_HELP ? 0 : 1;
    if (n_pos != 1 || !out_path) {
        fprintf(stderr, "tg run: %s (see tg run --help)\n",
                n_pos != 1 ? "expected one MODEL.onnx" : "--output is required");
        return 1;
    }
    if (strcmp(mode, "eager") && strcmp(mode, "graph")) {
        fprintf(stderr, "tg run: --mode must be eager or graph, not '%s'\n", mode);
        return 1;
    }
    const path_role files[] = {{"model", pos[0], false}, {"--input", in_path, false},
                               {"--output", out_path, true}, {"--grad", grad_path, true}};
    if (!path_check_output("--output", out_path) || !path_check_output("--grad", grad_path) ||
        !path_check_distinct(4, files))
        return 1;
    tg_onnx_model *m = tg_onnx_load(pos[0]);
    if (!m) {
        fprintf(stderr, "tg run: %s\n", tg_last_error());
        return 1;
    }
    tg_state_dict *in = in_path ? tg_safetensors_load(in_path) : tg_state_dict_new();
    int status = 1;
    if (!in) {
        fprintf(stderr, "tg run: %s\n", tg_last_error());
        tg_onnx_free(m);
        return 1;
    }
    int n = tg_state_dict_size(in);
    const char *names[256];
    tg_tensor *tensors[256];
    tg_state_dict *outs = NULL, *grads = NULL;
    tg_scope_begin();
    if (n > 256) {
        fprintf(stderr, "tg run: %s has %d tensors (at most 256 inputs)\n", in_path, n);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        names[i] = tg_state_dict_name(in, i);
        tensors[i] = tg_state_dict_tensor(in, i);
    }
    if (tg_onnx_run(m, strcmp(mode, "eager") ? TG_ONNX_GRAPH : TG_ONNX_EAGER, n, names,
                    tensors, &outs, grad_path ? &grads : NULL) != TG_OK) {
        fprintf(stderr, "tg run: %s\n", tg_last_error());
        goto done;
    }
    if (tg_safetensors_save_dict(out_path, outs) != TG_OK ||
        (grad_path && tg_safetensors_save_dict(grad_path, grads) != TG_OK)) {
        fprintf(stderr, "tg run: %s\n", tg_last_error());
        goto done;
    }
    status = 0;
done:
    tg_scope_end();
    tg_state_dict_free(outs);
    tg_state_dict_free(grads);
    tg_state_dict_free(in);
    tg_onnx_free(m);
    return status;
}
