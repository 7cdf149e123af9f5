/* A pointwise convolution, its activation, the depthwise convolution
 * after it and that one's activation as one node (level 2, inference).
 * For
 *     e = act1(conv2d(x, w1, b1))      1x1, stride 1, no padding, one group
 *     y = act2(conv2d(e, w2, b2))      groups = channels (depthwise)
 * with act1 relu, clamp or hardswish and act2 one of those or none, w1
 * frozen (an imported model's weights), on planes where the fused kernel
 * is faster at the instruction set in use (tg__conv_pwdw_pays: AVX-512
 * above 8x8, AVX2 above 20x20), when nothing else reads the
 * convolutions' outputs nor e (a training step's backward reads them:
 * there is nothing to fuse there), the ops become
 *     y = conv2d_pw_dw(x, w1, b1, w2, b2)
 * whose kernel computes e a block of channels and a strip of rows at a
 * time into the depthwise kernel's channel-lane layout, in cache (ops/
 * conv_pwdw.c, kernels/cpu/conv_pwdw.c): MobileNets' expanded
 * activations, their largest tensors, are never written nor transposed.
 * Results are bitwise the four ops'. It runs before fuse_epilogue, which
 * would otherwise take each activation into its convolution's node. */
#include "kernels/cpu/conv_pwdw.h"
#include "ops/conv.h"
#include "ops/unary.h"
#include "passes/passes.h"

#include <stdlib.h>

extern const tg_op_def tg_op_conv2d, tg_op_conv2d_pw_dw;


typedef struct matcher {
    const tg_graph *g;
    const tg_op_def *relu, *clamp, *hardswish;
    tg_uses u;
    tg_state st;
} matcher;

/* node n as an activation the convolution kernels apply as they store */
static bool act_of(const matcher *M, const tg_gnode *n, tg__conv_act *a)
{
    if (n->kind != TG_GNODE_OP || n->n_in != 1 || n->n_out != 1)
        return false;
    if (n->op == M->relu)
        *a = (tg__conv_act){TG_CONV_ACT_RELU, 0, 0};
    else if (n->op == M->hardswish)
        *a = (tg__conv_act){TG_CONV_ACT_HARDSWISH, 0, 0};
    else if (n->op == M->clamp && n->attr)
        *a = (tg__conv_act){TG_CONV_ACT_CLAMP, ((const unary_attrs *)n->attr)->a,
                            ((const unary_attrs *)n->attr)->b};
    else
        return false;
    return true;
}

/* a conv2d node's decoded attributes */
static const conv_params *params(const tg_gnode *n) { return n->attr; }

static const tg_meta *meta(const tg_graph *g, int v) { return &g->values[v].meta; }

/* value v is a constant's or variable's whose storage is frozen (an
 * imported model's weights): the unfused pointwise layer takes the
 * built-in GEMM for them, whose bits the fused kernel has (others may
 * take OpenBLAS, chosen by timing) */
static bool frozen(const tg_graph *g, int v)
{
    const tg_gnode *n = &g->nodes[g->values[v].node];
    return (n->kind == TG_GNODE_CONSTANT || n->kind == TG_GNODE_VARIABLE) && n->tensor &&
           n->tensor->storage && n->tensor->storage->frozen;
}

/* a float 2-D convolution node with a bias, rewritable */
static bool conv_node(const matcher *M, int id)
{
    const tg_gnode *n = &M->g->nodes[id];
    return tg__is_op(n, &tg_op_conv2d) && n->n_in == 3 && n->attr &&
           tg__pass_rewritable(M->g, M->u.ctrl_in, id) && !M->u.target[id] &&
           meta(M->g, n->in[1])->ndim == 4 && meta(M->g, n->out[0])->ndim == 4;
}

/* the chain whose last node is `last`: the depthwise convolution *dw (and
 * its activation last, or last itself), the pointwise one *pw and its
 * activation *a1n */
static bool match(const matcher *M, int last, int *dw, int *a1n, int *pw,
                  tg__conv_act *a1, tg__conv_act *a2)
{
    const tg_graph *g = M->g;
    const tg_gnode *L = &g->nodes[last];
    *dw = last;
    *a2 = (tg__conv_act){TG_CONV_ACT_NONE, 0, 0};
    if (act_of(M, L, a2)) { /* y = act2(dw) */
        if (!tg__pass_rewritable(g, M->u.ctrl_in, last) || M->u.target[last] ||
            !tg__uses_private(&M->u, g, L->in[0]))
            return false;
        *dw = g->values[L->in[0]].node;
    }
    if (!conv_node(M, *dw))
        return false;
    const tg_gnode *D = &g->nodes[*dw];
    const tg_meta *dwx = meta(g, D->in[0]), *dww = meta(g, D->in[1]);
    int64_t e = dwx->ndim == 4 ? dwx->shape[1] : -1;
    if (e < 2 || params(D)->groups != e || dww->shape[0] != e || dww->shape[1] != 1 ||
        !tg__conv_pwdw_pays(dwx->shape[2] * dwx->shape[3]) ||
        !tg__uses_private(&M->u, g, D->in[0]))
        return false;
    *a1n = g->values[D->in[0]].node;
    const tg_gnode *A = &g->nodes[*a1n];
    if (!act_of(M, A, a1) || !tg__pass_rewritable(g, M->u.ctrl_in, *a1n) ||
        M->u.target[*a1n] || !tg__uses_private(&M->u, g, A->in[0]))
        return false;
    *pw = g->values[A->in[0]].node;
    if (!conv_node(M, *pw))
        return false;
    const tg_gnode *P = &g->nodes[*pw];
    const tg_meta *pww = meta(g, P->in[1]), *y = meta(g, P->out[0]);
    const conv_params *p = params(P);
    for (int i = 0; i < 2; i++)
        if (p->stride[i] != 1 || p->padding[i] != 0 || p->dilation[i] != 1)
            return false;
    if (p->groups != 1 || pww->shape[2] != 1 || pww->shape[3] != 1 || !frozen(g, P->in[1]))
        return false;
    /* one dtype throughout; the convolutions' reads move to the last node */
    for (int i = 0; i < 3; i++)
        if (meta(g, P->in[i])->dtype != y->dtype || meta(g, D->in[i])->dtype != y->dtype)
            return false;
    return tg__state_same_versions(&M->st, P, *pw, last) &&
           tg__state_same_versions(&M->st, D, *dw, last);
}

/* the chains the pass found: per last node, its depthwise and pointwise
 * convolutions and their activations */
typedef struct chains {
    int (*conv)[2];         /* dw, pw */
    tg__conv_act (*act)[2]; /* act1, act2 */
} chains;

/* the fused node in the place of the chain ending at `last`, its output
 * forwarded; its dst id or -1 */
static int emit(tg_rw *rw, int last, void *ctx)
{
    const chains *C = ctx;
    const tg_graph *g = rw->src;
    const tg_gnode *P = &g->nodes[C->conv[last][1]], *D = &g->nodes[C->conv[last][0]];
    const tg__conv_act *a1 = &C->act[last][0], *a2 = &C->act[last][1];
    const conv_params *p = params(D);
    tg_attr attrs[] = {TG_AINTS("stride", p->stride, 2), TG_AINTS("padding", p->padding, 2),
                       TG_AINTS("dilation", p->dilation, 2), TG_AI("act1", a1->kind),
                       TG_AF("lo1", a1->lo), TG_AF("hi1", a1->hi), TG_AI("act2", a2->kind),
                       TG_AF("lo2", a2->lo), TG_AF("hi2", a2->hi)};
    int in[5] = {rw->vmap[P->in[0]], rw->vmap[P->in[1]], rw->vmap[P->in[2]],
                 rw->vmap[D->in[1]], rw->vmap[D->in[2]]};
    int m = tg__rw_op(rw, &tg_op_conv2d_pw_dw, g->nodes[last].name, attrs,
                      (int)(sizeof attrs / sizeof *attrs), 5, in);
    if (m >= 0)
        tg__rw_forward(rw, g->nodes[last].out[0], rw->dst->nodes[m].out[0]);
    return m;
}

tg_status tg__pass_fuse_pw_dw(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    matcher M = {.g = g, .relu = tg_op_find("relu"), .clamp = tg_op_find("clamp"),
                 .hardswish = tg_op_find("hardswish")};
    int n_fused = 0;
    /* per node: TG_RW_KEEP, TG_RW_FOLDED into a later node, else the last
     * node of a chain */
    int *plan = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
    chains C = {malloc(sizeof *C.conv * (size_t)(g->n_nodes + 1)),
                malloc(sizeof *C.act * (size_t)(g->n_nodes + 1))};
    tg_status s = plan && C.conv && C.act
                      ? tg__uses_init(&M.u, c)
                      : tg__error(TG_ERR_NOMEM, "fuse_pw_dw: out of memory");
    bool have_uses = s == TG_OK;
    if (s == TG_OK)
        s = tg__state_init(&M.st, g);
    bool have_state = have_uses && s == TG_OK;
    for (int id = 0; s == TG_OK && id < g->n_nodes; id++)
        plan[id] = TG_RW_KEEP;
    /* from the end: a depthwise convolution is its activation's chain's,
     * not the last node of one of its own */
    for (int id = g->n_nodes - 1, dw, a1n, pw; s == TG_OK && id >= 0; id--)
        if (plan[id] == TG_RW_KEEP &&
            match(&M, id, &dw, &a1n, &pw, &C.act[id][0], &C.act[id][1]) &&
            plan[dw] == TG_RW_KEEP && plan[a1n] == TG_RW_KEEP && plan[pw] == TG_RW_KEEP) {
            plan[id] = id;
            plan[dw] = dw == id ? id : TG_RW_FOLDED;
            plan[a1n] = plan[pw] = TG_RW_FOLDED;
            C.conv[id][0] = dw;
            C.conv[id][1] = pw;
            n_fused++;
        }
    s = tg__rw_replace_chains(c, s, plan, n_fused, emit, &C);
    if (have_uses)
        tg__uses_free(&M.u);
    if (have_state)
        tg__state_free(&M.st);
    free(plan);
    free(C.conv);
    free(C.act);
    return s;
}
