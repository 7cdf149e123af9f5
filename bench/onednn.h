/* oneDNN (libdnnl, v2 C API) convolutions for bench/conv.c, on plain
 * NCHW / OIHW float32 buffers: the primitive chooses its own layouts
 * (format "any"), and reorders from and to the plain buffers are timed
 * apart, since a framework with NCHW tensors (PyTorch) pays them.
 * Only built when CMake finds libdnnl (TG_HAVE_DNNL). */
#ifndef TG_BENCH_ONEDNN_H
#define TG_BENCH_ONEDNN_H

#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <string.h>

void omp_set_num_threads(int n);

typedef enum dn_dir { DN_FWD, DN_BWD_DATA, DN_BWD_WEIGHTS } dn_dir;

/* one operand: the plain user buffer and, when the primitive wants
 * another layout, its own memory and a reorder in the needed direction */
typedef struct dn_arg {
    int arg;                       /* DNNL_ARG_* */
    bool output;
    dnnl_memory_t user, mem;       /* mem == user when no reorder */
    dnnl_primitive_t reorder;      /* user -> mem (input) or mem -> user */
} dn_arg;

typedef struct dn_conv {
    dnnl_engine_t eng;
    dnnl_stream_t st;
    dnnl_primitive_t prim;
    dn_arg args[4];
    int nargs;
    char impl[128];
} dn_conv;

#define DN_CHECK(x)                                                          \
    do {                                                                     \
        dnnl_status_t s_ = (x);                                              \
        if (s_ != dnnl_success) {                                            \
            fprintf(stderr, "oneDNN: %s failed (%d)\n", #x, (int)s_);        \
            return false;                                                    \
        }                                                                    \
    } while (0)

static bool dn_arg_init(dn_conv *c, dnnl_primitive_desc_t pd, dnnl_query_t q, int qi,
                        int arg, bool output, const dnnl_dims_t dims, dnnl_format_tag_t tag,
                        int ndims, void *buf)
{
    dn_arg *a = &c->args[c->nargs++];
    dnnl_memory_desc_t user_md;
    DN_CHECK(dnnl_memory_desc_init_by_tag(&user_md, ndims, dims, dnnl_f32, tag));
    const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, q, qi);
    a->arg = arg;
    a->output = output;
    a->reorder = NULL;
    DN_CHECK(dnnl_memory_create(&a->user, &user_md, c->eng, buf));
    if (dnnl_memory_desc_equal(&user_md, want)) {
        a->mem = a->user;
        return true;
    }
    DN_CHECK(dnnl_memory_create(&a->mem, want, c->eng, DNNL_MEMORY_ALLOCATE));
    dnnl_primitive_desc_t rpd;
    if (output)
        DN_CHECK(dnnl_reorder_primitive_desc_create(&rpd, want, c->eng, &user_md, c->eng, NULL));
    else
        DN_CHECK(dnnl_reorder_primitive_desc_create(&rpd, &user_md, c->eng, want, c->eng, NULL));
    DN_CHECK(dnnl_primitive_create(&a->reorder, rpd));
    dnnl_primitive_desc_destroy(rpd);
    return true;
}

/* x [n c h w], w [o c/g kh kw] (groups 1), y [n o oh ow]; pad both sides
 * ph, pw; stride 1, no dilation (LeNet's layers). fwd: y = conv(x, w) + b;
 * bwd data: x <- dy (in y), w; bwd weights: w <- x, dy (no bias). */
static bool dn_conv_init(dn_conv *c, dn_dir dir, const int64_t *xd, const int64_t *wd,
                         const int64_t *yd, int64_t ph, int64_t pw, float *x, float *w,
                         float *b, float *y)
{
    memset(c, 0, sizeof *c);
    DN_CHECK(dnnl_engine_create(&c->eng, dnnl_cpu, 0));
    DN_CHECK(dnnl_stream_create(&c->st, c->eng, dnnl_stream_default_flags));
    dnnl_dims_t dx = {xd[0], xd[1], xd[2], xd[3]}, dw = {wd[0], wd[1], wd[2], wd[3]};
    dnnl_dims_t dy = {yd[0], yd[1], yd[2], yd[3]}, db = {wd[0]};
    dnnl_dims_t strides = {1, 1}, dil = {0, 0}, pad = {ph, pw};
    dnnl_memory_desc_t mx, mw, my, mb;
    DN_CHECK(dnnl_memory_desc_init_by_tag(&mx, 4, dx, dnnl_f32, dnnl_format_tag_any));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&mw, 4, dw, dnnl_f32, dnnl_format_tag_any));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&my, 4, dy, dnnl_f32, dnnl_format_tag_any));
    DN_CHECK(dnnl_memory_desc_init_by_tag(&mb, 1, db, dnnl_f32, dnnl_x));
    dnnl_convolution_desc_t fd, cd;
    DN_CHECK(dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_training,
                                                        dnnl_convolution_direct, &mx, &mw, &mb,
                                                        &my, strides, dil, pad, pad));
    dnnl_primitive_desc_t fpd, pd;
    DN_CHECK(dnnl_primitive_desc_create(&fpd, &fd, NULL, c->eng, NULL));
    if (dir == DN_FWD) {
        pd = fpd;
    } else {
        if (dir == DN_BWD_DATA)
            DN_CHECK(dnnl_dilated_convolution_backward_data_desc_init(
                &cd, dnnl_convolution_direct, &mx, &mw, &my, strides, dil, pad, pad));
        else
            DN_CHECK(dnnl_dilated_convolution_backward_weights_desc_init(
                &cd, dnnl_convolution_direct, &mx, &mw, NULL, &my, strides, dil, pad, pad));
        DN_CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, c->eng, fpd));
    }
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(c->impl, sizeof c->impl, "%s", impl ? impl : "?");
    bool ok;
    if (dir == DN_FWD)
        ok = dn_arg_init(c, pd, dnnl_query_src_md, 0, DNNL_ARG_SRC, false, dx, dnnl_nchw, 4, x) &&
             dn_arg_init(c, pd, dnnl_query_weights_md, 0, DNNL_ARG_WEIGHTS, false, dw, dnnl_oihw, 4, w) &&
             dn_arg_init(c, pd, dnnl_query_weights_md, 1, DNNL_ARG_BIAS, false, db, dnnl_x, 1, b) &&
             dn_arg_init(c, pd, dnnl_query_dst_md, 0, DNNL_ARG_DST, true, dy, dnnl_nchw, 4, y);
    else if (dir == DN_BWD_DATA)
        ok = dn_arg_init(c, pd, dnnl_query_diff_dst_md, 0, DNNL_ARG_DIFF_DST, false, dy, dnnl_nchw, 4, y) &&
             dn_arg_init(c, pd, dnnl_query_weights_md, 0, DNNL_ARG_WEIGHTS, false, dw, dnnl_oihw, 4, w) &&
             dn_arg_init(c, pd, dnnl_query_diff_src_md, 0, DNNL_ARG_DIFF_SRC, true, dx, dnnl_nchw, 4, x);
    else
        ok = dn_arg_init(c, pd, dnnl_query_src_md, 0, DNNL_ARG_SRC, false, dx, dnnl_nchw, 4, x) &&
             dn_arg_init(c, pd, dnnl_query_diff_dst_md, 0, DNNL_ARG_DIFF_DST, false, dy, dnnl_nchw, 4, y) &&
             dn_arg_init(c, pd, dnnl_query_diff_weights_md, 0, DNNL_ARG_DIFF_WEIGHTS, true, dw, dnnl_oihw, 4, w);
    if (!ok)
        return false;
    DN_CHECK(dnnl_primitive_create(&c->prim, pd));
    if (pd != fpd)
        dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_desc_destroy(fpd);
    return true;
}

/* runs the primitive; with_reorders: also the reorders of the plain
 * buffers (inputs before, outputs after) */
static void dn_conv_run(dn_conv *c, bool with_reorders)
{
    dnnl_exec_arg_t ea[4] = {{0, NULL}};
    for (int i = 0; i < c->nargs; i++) {
        dn_arg *a = &c->args[i];
        if (with_reorders && a->reorder && !a->output) {
            dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, a->user}, {DNNL_ARG_TO, a->mem}};
            dnnl_primitive_execute(a->reorder, c->st, 2, r);
        }
        ea[i] = (dnnl_exec_arg_t){a->arg, a->mem};
    }
    dnnl_primitive_execute(c->prim, c->st, c->nargs, ea);
    for (int i = 0; with_reorders && i < c->nargs; i++) {
        dn_arg *a = &c->args[i];
        if (a->reorder && a->output) {
            dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, a->mem}, {DNNL_ARG_TO, a->user}};
            dnnl_primitive_execute(a->reorder, c->st, 2, r);
        }
    }
    dnnl_stream_wait(c->st);
}

static void dn_conv_free(dn_conv *c)
{
    for (int i = 0; i < c->nargs; i++) {
        dn_arg *a = &c->args[i];
        if (a->reorder) {
            dnnl_primitive_destroy(a->reorder);
            dnnl_memory_destroy(a->mem);
        }
        dnnl_memory_destroy(a->user);
    }
    if (c->prim)
        dnnl_primitive_destroy(c->prim);
    dnnl_stream_destroy(c->st);
    dnnl_engine_destroy(c->eng);
}

#endif
