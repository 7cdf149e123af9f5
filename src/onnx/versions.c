/* ONNX op versions: which version of an op is in effect at a model's
 * opset, the oldest tensorgraph imports, and the table of the facts that
 * changed between versions in one way many ops share: a value that an
 * older version takes as an attribute and a newer one as an input
 * (Slice-1's starts/ends/axes, Clip-6's min/max, Pad-2's pads/value,
 * TopK-1's k, Upsample-7's scales, Dropout-7/10's ratio). The importer
 * turns such an attribute into a known constant input before the op's
 * mapping runs, so each mapping is written once, for the input form.
 * Other version differences (defaults, Softmax-1's 2-D coercion,
 * BatchNormalization-7's spatial, Resize-10's coordinates, reductions'
 * axes attribute) are read by the mapping from onnx_ictx.version. */
#include "onnx/import.h"

#include <string.h>

enum lift_kind {
    LIFT_INTS,   /* INTS attribute -> 1-D int64 */
    LIFT_INT,    /* INT attribute -> 1-D int64 of one element (TopK's K) */
    LIFT_FLOATS, /* FLOATS attribute -> 1-D float32 */
    LIFT_FLOAT,  /* FLOAT attribute -> 0-d scalar of input 0's float type */
};

typedef struct attr_input {
    const char *op_type;
    int8_t until;    /* versions before this one take the attribute */
    int8_t input;    /* the input it became */
    int8_t kind;     /* enum lift_kind */
    bool required;   /* the attribute has no default */
    const char *attr;
} attr_input;

static const attr_input attr_inputs[] = {
    {"Slice", 10, 1, LIFT_INTS, true, "starts"},
    {"Slice", 10, 2, LIFT_INTS, true, "ends"},
    {"Slice", 10, 3, LIFT_INTS, false, "axes"},
    {"Clip", 11, 1, LIFT_FLOAT, false, "min"},
    {"Clip", 11, 2, LIFT_FLOAT, false, "max"},
    {"Pad", 11, 1, LIFT_INTS, true, "pads"},
    {"Pad", 11, 2, LIFT_FLOAT, false, "value"},
    {"TopK", 10, 1, LIFT_INT, true, "k"},
    {"Upsample", 9, 1, LIFT_FLOATS, true, "scales"},
    {"Dropout", 12, 1, LIFT_FLOAT, false, "ratio"},
    {NULL, 0, 0, 0, false, NULL},
};

/* the versions of the ops that map one to one onto an op definition
 * (mapping.c's direct entries), which names only the newest: the older
 * ones listed here compute the same (IsNaN-13 added bfloat16) */
static const struct {
    const char *op_type;
    int8_t versions[8];
} direct_versions[] = {
    {"IsNaN", {9, 13}},
    {NULL, {0}},
};

void onnx_direct_versions(const char *op_type, int newest, int8_t versions[8])
{
    memset(versions, 0, 8);
    versions[0] = (int8_t)newest;
    for (int i = 0; direct_versions[i].op_type; i++)
        if (!strcmp(direct_versions[i].op_type, op_type))
            memcpy(versions, direct_versions[i].versions, 8);
}

int onnx_op_version(const onnx_op_entry *e, int64_t opset)
{
    int v = 0;
    for (int i = 0; i < 8 && e->versions[i]; i++)
        if (e->versions[i] <= opset)
            v = e->versions[i];
    return v;
}

int onnx_op_min_version(const onnx_op_entry *e) { return onnx_op_version(e, ONNX_MIN_OPSET); }

/* the first input index an older version takes as an attribute (the node
 * may have only the inputs before it), or -1 when `version` has none */
static int first_lifted(const char *op_type, int version)
{
    int first = -1;
    for (const attr_input *a = attr_inputs; a->op_type; a++)
        if (!strcmp(a->op_type, op_type) && version < a->until &&
            (first < 0 || a->input < first))
            first = a->input;
    return first;
}

tg_status onnx_check_version_inputs(const onnx_node *n, int version, int n_inputs,
                                    int *effective)
{
    int first = first_lifted(n->op_type, version);
    *effective = n_inputs;
    if (first < 0)
        return TG_OK;
    if (n_inputs > first)
        return tg__error(TG_ERR_IO, "onnx: node '%s' (%s-%d) has %d inputs; version %d takes "
                         "only %d (later inputs are attributes in it)", onnx_node_label(n),
                         n->op_type, version, n_inputs, version, first);
    for (const attr_input *a = attr_inputs; a->op_type; a++)
        if (!strcmp(a->op_type, n->op_type) && version < a->until &&
            (a->required || onnx_attr_in(n, a->attr)) && a->input + 1 > *effective)
            *effective = a->input + 1;
    return TG_OK;
}

const onnx_attribute *onnx_attr_in(const onnx_node *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i].name && !strcmp(n->attribute[i].name, name))
            return &n->attribute[i];
    return NULL;
}

/* the attribute of rule a as a tensor (scope-owned), NULL with the error set */
static tg_tensor *lift_one(onnx_ictx *c, const attr_input *a)
{
    int64_t one = 1, n;
    const int64_t *iv;
    const float *fv;
    int k;
    double f;
    switch (a->kind) {
    case LIFT_INTS:
        if (oa_ints(c, a->attr, &iv, &k) != TG_OK)
            return NULL;
        n = k;
        return tg_from_data(TG_INT64, 1, &n, iv);
    case LIFT_INT:
        if (oa_int(c, a->attr, 0, &n) != TG_OK)
            return NULL;
        return tg_from_data(TG_INT64, 1, &one, &n);
    case LIFT_FLOATS:
        if (oa_floats(c, a->attr, &fv, &k) != TG_OK)
            return NULL;
        n = k;
        return tg_from_data(TG_FLOAT32, 1, &n, fv);
    default: {
        if (oa_float(c, a->attr, 0, &f) != TG_OK)
            return NULL;
        tg_dtype dt = c->in[0] ? tg_dtype_of(c->in[0]) : TG_FLOAT32;
        return tg_scalar(tg_dtype_is_float(dt) ? dt : TG_FLOAT32, f);
    }
    }
}

tg_status onnx_lift_attributes(onnx_ictx *c)
{
    for (const attr_input *a = attr_inputs; a->op_type; a++) {
        if (strcmp(a->op_type, c->node->op_type) || c->version >= a->until)
            continue;
        if (!onnx_attr(c, a->attr)) {
            if (a->required)
                return onnx_err(c, TG_ERR_IO, "attribute '%s' is required in version %d",
                                a->attr, c->version);
            continue;
        }
        tg_tensor *t = lift_one(c, a);
        if (!t)
            return tg_last_status();
        for (int i = c->n_in; i < a->input; i++) /* inputs between: omitted */
            c->in[i] = c->val[i] = NULL;
        if (a->input >= c->n_in)
            c->n_in = a->input + 1;
        c->in[a->input] = c->val[a->input] = t;
        c->known[a->input] = true;
        c->in_type[a->input] = 0;
    }
    return TG_OK;
}
