/* Send and Recv: the two ends of an edge that crosses devices in a
 * partitioned graph (runtime/partition.c makes them). Send hands a copy
 * of its input to the rendezvous under the key (tensor_name, src, dst,
 * step); Recv takes it and writes it into its own output (its device's
 * memory). Without an input, Send sends a control token (a bool scalar):
 * the edge then only says that a node has run. Send's own output, a bool
 * scalar, is what a session names to run it. Both run only inside a
 * partitioned run (runtime/device_exec.c sets the rendezvous); they have
 * side effects, so passes never merge or drop them. */
#include "runtime/rendezvous.h"
#include "ops/elementwise.h"
#include "ops/op.h"
#include "tg/device.h"

#include <stdio.h>

typedef struct send_attrs {
    const char *tensor_name, *src, *dst;
} send_attrs;
typedef struct recv_attrs {
    const char *tensor_name, *src, *dst;
    int64_t dtype;
    tg_ints shape;
} recv_attrs;

#define STRING_SPEC(S, F)                                                       \
    {.name = #F, .type = TG_ATTR_STRING, .field = TG_FIELD_STRING,             \
     .offset = TG__SPEC_OFF(S, F, TG__IS(S, F, const char *)), TG_REQUIRED}
static const tg_attr_spec send_specs[] = {STRING_SPEC(send_attrs, tensor_name),
                                          STRING_SPEC(send_attrs, src),
                                          STRING_SPEC(send_attrs, dst), {0}};
static const tg_attr_spec recv_specs[] = {
    STRING_SPEC(recv_attrs, tensor_name), STRING_SPEC(recv_attrs, src),
    STRING_SPEC(recv_attrs, dst),
    TG_SPEC_INT(recv_attrs, dtype, TG_FLOAT32, TG_RANGE(0, TG_NUM_DTYPES - 1)),
    TG_SPEC_INTS(recv_attrs, shape), {0}};
static const tg_arg_spec send_in[] = {{"x", TG_DTS_ANY | TG_ARG_OPTIONAL}, {0}};
static const tg_arg_spec none[] = {{0}};
/* a Send's output says it ran (sessions name nodes to run by a value) */
static const tg_arg_spec send_out[] = {{"sent", TG_DTS_BOOL}, {0}};
static const tg_arg_spec recv_out[] = {{"y", TG_DTS_ANY}, {0}};

/* the key of a transfer from the attributes and the running step */
static tg_status make_key(const char *op, const char *name, const char *src,
                          const char *dst, tg_rv_key *k, tg_rendezvous **rv)
{
    const tg_rv_context *c = tg__rv_context();
    *rv = NULL;
    if (!c)
        return tg__error(TG_ERR_UNSUPPORTED, "%s '%s': runs only inside a partitioned "
                         "run (a session over several devices)", op, name);
    k->name = name;
    k->step = c->step;
    *rv = c->rv;
    if (tg_device_parse(src, &k->src) != TG_OK || tg_device_parse(dst, &k->dst) != TG_OK)
        return tg_last_status();
    return TG_OK;
}

static tg_status send_infer(tg_op_ctx *c)
{
    const send_attrs *a = c->attr;
    tg_device d;
    if (c->n_in > 1)
        return tg__error(TG_ERR_ARG, "send: one input at most, got %d", c->n_in);
    if (tg_device_parse(a->src, &d) != TG_OK || tg_device_parse(a->dst, &d) != TG_OK)
        return tg_last_status();
    return tg_infer_set(c, 0, TG_BOOL, 0, NULL);
}


static tg_status send_kernel(tg_op_ctx *c)
{
    const send_attrs *a = c->attr;
    tg_rv_key k;
    tg_rendezvous *rv;
    if (make_key("send", a->tensor_name, a->src, a->dst, &k, &rv) != TG_OK)
        return tg_last_status();
    /* a copy: the sender's memory plan reuses the input's buffer later */
    tg_tensor *t = c->n_in ? tg__alloc(c->in[0]->dtype, c->in[0]->ndim, c->in[0]->shape)
                           : tg__alloc(TG_BOOL, 0, NULL);
    if (!t)
        return tg_last_status();
    if (c->n_in)
        tg__convert_into(t, c->in[0]);
    else
        *(uint8_t *)tg__base(t) = 1;
    *(uint8_t *)tg__base(c->out[0]) = 1;
    return tg__rv_send(rv, &k, t);
}

static tg_status recv_infer(tg_op_ctx *c)
{
    const recv_attrs *a = c->attr;
    tg_device d;
    if (tg_device_parse(a->src, &d) != TG_OK || tg_device_parse(a->dst, &d) != TG_OK)
        return tg_last_status();
    if (a->shape.n > TG_MAX_DIMS)
        return tg__error(TG_ERR_ARG, "recv: %d dims (at most %d)", a->shape.n, TG_MAX_DIMS);
    return tg_infer_set(c, 0, (tg_dtype)a->dtype, a->shape.n, a->shape.v);
}

/* waits (on this device's thread) until the value arrives or the step is
 * aborted; the device executor runs a Recv only once it has arrived */
static tg_status recv_kernel(tg_op_ctx *c)
{
    const recv_attrs *a = c->attr;
    tg_rv_key k;
    tg_rendezvous *rv;
    if (make_key("recv", a->tensor_name, a->src, a->dst, &k, &rv) != TG_OK)
        return tg_last_status();
    tg_rv_context *ctx = tg__rv_context_mut();
    tg_tensor *t = ctx->arrived;
    ctx->arrived = NULL;
    while (!t && tg__rv_try_recv(rv, &k, &t) == TG_OK && !t)
        tg__rv_wait(rv, 100000000);
    if (!t)
        return tg_last_status();
    tg_tensor *y = c->out[0];
    tg_status st = TG_OK;
    if (t->dtype != y->dtype || !tg__shape_eq(t->ndim, t->shape, y->ndim, y->shape))
        st = tg__error(TG_ERR_SHAPE, "recv '%s' from %s: got %s with %d dims, expected "
                       "%s with %d dims", a->tensor_name, a->src, tg_dtype_name(t->dtype),
                       t->ndim, tg_dtype_name(y->dtype), y->ndim);
    else
        tg__convert_into(y, t);
    tg_release(t);
    return st;
}

tg_status tg__recv_try(const void *attr, tg_tensor **out)
{
    const recv_attrs *a = attr;
    tg_rv_key k;
    tg_rendezvous *rv;
    *out = NULL;
    if (make_key("recv", a->tensor_name, a->src, a->dst, &k, &rv) != TG_OK)
        return tg_last_status();
    return tg__rv_try_recv(rv, &k, out);
}

const tg_op_def tg_op_send = {
    .name = "send", .n_in = -1, .n_out = 1, .inputs = send_in, .outputs = send_out,
    .attrs = {send_specs, sizeof(send_attrs)}, .flags = TG_OP_SIDE_EFFECTS,
    .nondiff = true, .infer = send_infer, .kernel = {[TG_CPU] = send_kernel}};
const tg_op_def tg_op_recv = {
    .name = "recv", .n_in = 0, .n_out = 1, .inputs = none, .outputs = recv_out,
    .attrs = {recv_specs, sizeof(recv_attrs)}, .flags = TG_OP_SIDE_EFFECTS,
    .nondiff = true, .infer = recv_infer, .kernel = {[TG_CPU] = recv_kernel}};

const tg_op_def *const tg_ops_sendrecv[] = {&tg_op_send, &tg_op_recv, NULL};
