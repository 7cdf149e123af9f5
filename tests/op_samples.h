/* The per-op sample table (PyTorch's OpInfo idea): for every registered op
 * a few sample calls (input shapes, broadcasting and strided cases,
 * attribute values), which tests/test_op_samples.c runs through one
 * generic suite (gradcheck, forward vs reverse mode, graph vs eager, float32
 * graph vs eager, ONNX round trip), and the list of ops that are exempt,
 * each with its reason. tests/test_registry.c fails when a differentiable
 * op has neither, so a new op cannot skip the suite. The table lives in
 * tests/op_samples.c. */
#ifndef TG_TEST_OP_SAMPLES_H
#define TG_TEST_OP_SAMPLES_H

#include "ops/op.h"

/* how an input is made */
typedef enum os_kind {
    OS_DIFF,  /* float64 uniform in [lo, hi), requires grad */
    OS_CONST, /* float64 uniform in [lo, hi), no grad (targets, weights held fixed) */
    OS_INDEX, /* int64 uniform integers in [lo, hi) (labels, indices) */
    OS_BOOL   /* bool, true where uniform [0, 1) < hi */
} os_kind;

typedef struct os_input {
    os_kind kind;
    int ndim;
    int64_t shape[5];
    double lo, hi;
} os_input;

enum {
    OS_STRIDED = 1u << 0, /* also run every check on non-contiguous inputs */
    OS_NO_ONNX = 1u << 1, /* the op maps to ONNX, but not with this sample (why: the
                           * sample's comment) */
    OS_NO_F32 = 1u << 2,  /* no float32 graph-vs-eager check (why: the comment) */
};

#define OS_MAX_IN 7
#define OS_MAX_ATTRS 6

typedef struct os_sample {
    const char *op;   /* the registered name */
    const char *what; /* the case, for messages */
    int n_in;
    os_input in[OS_MAX_IN];
    int n_attrs;
    tg_attr attrs[OS_MAX_ATTRS];
    unsigned flags;
} os_sample;

typedef struct os_exempt {
    const char *op;
    const char *reason;
} os_exempt;

/* both lists end with an entry whose op is NULL */
extern const os_sample os_samples[];
extern const os_exempt os_exempt_ops[];

/* the first sample of op, or NULL; the reason op is exempt, or NULL */
const os_sample *os_find_sample(const char *op);
const char *os_exempt_reason(const char *op);

#endif
