/* Fused elementwise programs (level-2 graph passes make them; see
 * docs/PASSES.md). A program is a short list of elementwise op
 * applications over the fused node's inputs (%i) and earlier results ($k),
 * kept as text in the node's `program` attribute so that dumps and DOT
 * show it and nothing but the registry is needed to run it:
 *
 *     mul(%0, %1); add($0, %2); relu($1)
 *
 * Sub-op attributes go in brackets (`div[true_div=1](%0, %1)`; ints, floats
 * printed exactly, int lists). The interpreter (fused_exec.c) runs every
 * instruction with the op's own kernel over cache-sized blocks of the
 * output, so intermediates never reach memory and each element gets the
 * same operations, in the same dtype, as unfused. No code is generated. */
#ifndef TG_FUSED_H
#define TG_FUSED_H

#include "ops/op.h"

/* at most this many instructions and operands per instruction */
#define TG_FUSED_MAX_INSTRS 64
#define TG_FUSED_MAX_ARGS 8
/* results of one fused node (the group size of fused updates) */
#define TG_FUSED_MAX_RESULTS 8
/* elements per block: a few blocks of 32 KB stay in L1/L2 */
#define TG_FUSED_BLOCK 8192

/* both fused ops' attributes: the program, and for fused_update the
 * instruction whose result is written over each variable (inputs 0..) */
typedef struct tg_fused_attrs {
    const char *program;
    tg_ints results;
} tg_fused_attrs;

typedef struct tg_fused_instr {
    const tg_op_def *op;
    int n_args;
    int args[TG_FUSED_MAX_ARGS]; /* >= 0: input index; < 0: result -1 - k */
    tg_attr *attrs;               /* malloc'd list (names and ints owned) */
    int n_attrs;
    void *attr; /* the decoded struct (malloc'd), NULL without attributes */
    int slot;   /* the interpreter's scratch buffer for the result */
} tg_fused_instr;

typedef struct tg_fused_prog {
    int n;
    tg_fused_instr ins[TG_FUSED_MAX_INSTRS];
    int n_slots;
    int cache_entry; /* 1 + its index in the parse cache (fused_cache.c); 0: not kept */
} tg_fused_prog;

/* parses text for `who` (the op name, for messages); n_in: inputs the
 * node has (every %i must be below). keep: instructions whose results
 * must live to the end of a block (the results written out), may be
 * NULL. producer: the first instruction may be any pure one-output op
 * with a kernel (fused_epilogue's product). On failure an error names
 * who and the position. */
tg_status tg__fused_parse(const char *who, const char *text, int n_in, const int64_t *keep,
                          int n_keep, bool producer, tg_fused_prog *p);
/* tg__fused_parse through a process-wide cache of parsed programs
 * (fused_cache.c): *out is either a cached program (shared, read-only) or
 * local, parsed there, which the caller then frees (tg__fused_free). */
tg_status tg__fused_parse_cached(const char *who, const char *text, int n_in,
                                 const int64_t *keep, int n_keep, bool producer,
                                 tg_fused_prog *local, const tg_fused_prog **out);
/* the interpreter's scratch slots (parse assigns them; again after a
 * program is edited) */
void tg__fused_slots(tg_fused_prog *p, const int64_t *keep, int n_keep);
void tg__fused_free(tg_fused_prog *p);

/* can op be an instruction: pure, elementwise, one output, a CPU kernel,
 * at most TG_FUSED_MAX_ARGS inputs, only int/float/ints attributes */
bool tg__fused_op_ok(const tg_op_def *op, const tg_attr *attrs, int n_attrs);
/* appends "op[attrs](args)" to buf (len bytes, at *pos); args as in
 * tg_fused_instr. false when it does not fit. */
bool tg__fused_format(char *buf, size_t len, size_t *pos, const tg_op_def *op,
                      const tg_attr *attrs, int n_attrs, int n_args, const int *args);

/* output metadata of every instruction, from the inputs' (infer of each
 * sub-op in turn); out has p->n entries */
tg_status tg__fused_infer(const char *who, const tg_fused_prog *p, int n_in,
                          tg_tensor *const *in, tg_meta *out);

/* every instruction's result dtype for inputs `in` (the kernels' need:
 * shapes were checked by infer before any kernel runs). For a cached
 * program the answer is remembered per input dtypes (and which inputs are
 * 0-d), so that inference runs once, not at every call; else, and on a
 * different signature, it is tg__fused_infer's. */
tg_status tg__fused_dtypes(const char *who, const tg_fused_prog *p, int n_in,
                           tg_tensor *const *in, tg_dtype *dt);

/* runs p over the iteration shape of dst[0] (every dst has that shape):
 * result of instruction res[k] goes to dst[k]. Inputs broadcast to that
 * shape. When `staged`, results are written after the whole block is
 * computed (dst may be inputs: updates in place); else the last
 * instruction writes dst[0] directly. */
/* conv2d's kernel with relu applied to its outputs as they are written
 * (ops/conv.c): what fused_epilogue runs for the program conv2d(...);
 * relu($0), the same bits without a second pass over the output */
tg_status tg__conv2d_relu_kernel(tg_op_ctx *c);
/* the same with clamp(lo, hi) ($0 clamped as the clamp op clamps it): the
 * pointwise and depthwise paths apply it as they write, the others in a
 * pass over the output (kernels/cpu/conv.h, tg__conv2d_forward_act) */
tg_status tg__conv2d_clamp_kernel(tg_op_ctx *c, double lo, double hi);
/* the same with hardswish ($0 as the hardswish op computes it): applied as
 * the outputs are written by the pointwise, depthwise and few-channel
 * paths, in a pass after the others */
tg_status tg__conv2d_hardswish_kernel(tg_op_ctx *c);
/* conv2d's kernel with res added to its outputs (after the bias), then
 * relu when relu is true: the bits of the program conv2d(...); add($0,
 * res) [; relu($1)], added and activated as they are written where the
 * dense path (kernels/cpu/conv_dense.h) or the pointwise one (conv_pw.h)
 * takes the layer, else in a pass after the product (kernels/cpu/conv.h,
 * tg__conv2d_forward_residual). Only for 2-D convolutions and a res of
 * the output's dtype and shape; false otherwise (nothing done), else true
 * with the status in *st */
bool tg__conv2d_residual_kernel(tg_op_ctx *c, const tg_tensor *res, bool relu,
                                tg_status *st);

/* the flat path (fused_flat.c): programs of float32 add, sub, mul, div and
 * where over contiguous operands of the output's size or single elements,
 * chunk by chunk in cache, the same bits; false, doing nothing, for any
 * other program or operands */
bool tg__fused_run_flat(const tg_fused_prog *p, const tg_dtype *dt, int n_in,
                        tg_tensor *const *in, int n_res, const int64_t *res,
                        tg_tensor *const *dst);
/* dt: every instruction's result dtype (tg__fused_dtypes) */
tg_status tg__fused_run(const char *who, const tg_fused_prog *p, const tg_dtype *dt,
                        int n_in, tg_tensor *const *in, int n_res, const int64_t *res,
                        tg_tensor *const *dst, bool staged);

#endif
