/* tg_graph_optim against tg_optim_step: every algorithm, its options,
 * float32 and float64, a fixed and a fed learning rate. Two copies of a
 * small model (a 0-d parameter among them, and one the loss does not use)
 * train from the same start, one eagerly and one by a graph; after each
 * step the losses, the parameters and the whole optimizer state (buffers
 * and step counts, as tg_optim_state_dict gives them) must be bitwise
 * equal. Then: one optimizer stepped by turns eagerly and by its graph,
 * a graph resumed from a checkpoint, and the errors. */
#include "harness.h"

#include <string.h>

#define NP 4 /* w [4, 3], b [4], s (0-d), unused [2] */

typedef enum { SGD, ADAM, ADAMW, ADADELTA, RMSPROP } algo;

typedef struct ocase {
    const char *name;
    algo a;
    union {
        tg_sgd_opts sgd;
        tg_adam_opts adam;
        tg_adadelta_opts adadelta;
        tg_rmsprop_opts rmsprop;
    } o;
    bool fed_lr; /* a float64 placeholder, a schedule fed at every step */
} ocase;

static tg_optimizer *make_opt(const ocase *c, tg_tensor **p)
{
    switch (c->a) {
    case SGD: return tg_optim_sgd(NP, p, &c->o.sgd);
    case ADAM: return tg_optim_adam(NP, p, &c->o.adam);
    case ADAMW: return tg_optim_adamw(NP, p, &c->o.adam);
    case ADADELTA: return tg_optim_adadelta(NP, p, &c->o.adadelta);
    default: return tg_optim_rmsprop(NP, p, &c->o.rmsprop);
    }
}

static void make_params(tg_dtype dt, tg_tensor **p)
{
    tg_tensor *init[NP] = {tt_rand(2, (int64_t[]){4, 3}, -1, 1), tt_rand(1, (int64_t[]){4}, -1, 1),
                           tg_scalar(TG_FLOAT64, 0.75), tt_rand(1, (int64_t[]){2}, -1, 1)};
    for (int i = 0; i < NP; i++) {
        p[i] = tg_cast(tg_detach(init[i]), dt);
        tg_set_requires_grad(p[i], true);
    }
}

static void clone_params(tg_tensor **from, tg_tensor **to)
{
    for (int i = 0; i < NP; i++) {
        to[i] = tg_clone(tg_detach(from[i]));
        tg_set_requires_grad(to[i], true);
    }
}

/* sum(tanh(x w^T + b) * s); p[3] is not used */
static tg_tensor *loss_of(tg_tensor **p, tg_tensor *x)
{
    return tg_sum(tg_mul(tg_tanh(tg_linear(x, p[0], p[1])), p[2]), 0, NULL, false);
}

static tg_tensor *batch(tg_dtype dt, int k)
{
    tg_tensor *r = tg_sin(tg_add_scalar(tg_reshape(tg_arange(TG_FLOAT64, 0, 15, 1), 2,
                                                   (int64_t[]){5, 3}), 0.7 * k));
    return tg_cast(r, dt);
}

typedef struct gstep {
    tg_graph *g;
    tg_session *s;
    tg_tensor *x, *lr, *loss, *upd[NP];
} gstep;

/* the graph of one step over opt's parameters p (variables by reference) */
static const char *const names[NP] = {"w", "b", "s", "unused"};

static void gstep_build(gstep *G, tg_optimizer *opt, tg_tensor **p, tg_dtype dt, bool fed_lr)
{
    G->g = tg_graph_new("step");
    for (int i = 0; i < NP; i++)
        CHECK(tg_variable_ref(G->g, names[i], p[i]) != NULL);
    G->x = tg_placeholder(G->g, "x", dt, 2, (int64_t[]){5, 3});
    G->lr = fed_lr ? tg_placeholder(G->g, "lr", TG_FLOAT64, 0, NULL) : NULL;
    tg_graph_begin(G->g);
    G->loss = loss_of(p, G->x);
    tg_graph_end();
    CHECK_OK(tg_graph_optim(opt, G->loss, G->lr, G->upd));
    CHECK_OK(tg_graph_verify(G->g));
    G->s = tg_session_new(G->g);
}

static double gstep_run(gstep *G, tg_tensor *xv, double lr)
{
    tg_tensor *feeds[2] = {G->x, G->lr}, *vals[2] = {xv, tg_scalar(TG_FLOAT64, lr)}, *l = NULL;
    CHECK_OK(tg_session_run(G->s, G->lr ? 2 : 1, feeds, vals, 1, &G->loss, &l, NP, G->upd));
    return l ? tg_item(l) : NAN;
}

static void gstep_free(gstep *G)
{
    tg_session_free(G->s);
    tg_graph_free(G->g);
}

static double eager_step(tg_optimizer *opt, tg_tensor **p, tg_tensor *xv, double lr)
{
    tg_tensor *l = loss_of(p, xv);
    tg_optim_zero_grad(opt);
    CHECK_OK(tg_backward(l, NULL, false));
    CHECK_OK(tg_optim_set_lr(opt, lr));
    CHECK_OK(tg_optim_step(opt));
    return tg_item(l);
}

/* parameters and optimizer states bitwise equal (state dicts: every
 * buffer, every step count, the same names) */
static bool same_state(tg_optimizer *a, tg_optimizer *b)
{
    tg_state_dict *da = tg_state_dict_new(), *db = tg_state_dict_new();
    CHECK_OK(tg_optim_state_dict(a, da));
    CHECK_OK(tg_optim_state_dict(b, db));
    bool ok = tg_state_dict_size(da) == tg_state_dict_size(db);
    for (int i = 0; i < NP; i++)
        ok = ok && tt_same(tg_optim_param(a, i), tg_optim_param(b, i));
    tg_scope_begin();
    for (int i = 0; ok && i < tg_state_dict_size(da); i++) {
        const char *name = tg_state_dict_name(da, i);
        ok = tg_state_dict_has(db, name) &&
             tt_same(tg_state_dict_tensor(da, i), tg_state_dict_get(db, name));
        if (!ok)
            printf("  state '%s' differs\n", name);
    }
    tg_scope_end();
    tg_state_dict_free(da);
    tg_state_dict_free(db);
    return ok;
}

static void run_case(const ocase *c, tg_dtype dt)
{
    tg_scope_begin();
    tg_tensor *pe[NP], *pg[NP];
    make_params(dt, pe);
    clone_params(pe, pg);
    tg_optimizer *oe = make_opt(c, pe), *og = make_opt(c, pg);
    gstep G;
    gstep_build(&G, og, pg, dt, c->fed_lr);
    double lr0 = tg_optim_get_lr(oe);
    bool ok = true;
    for (int k = 0; k < 5 && ok; k++) {
        tg_scope_begin();
        double lr = c->fed_lr ? lr0 / (1 + k) : lr0;
        tg_tensor *xv = batch(dt, k);
        double le = eager_step(oe, pe, xv, lr), lg = gstep_run(&G, xv, lr);
        ok = le == lg && same_state(oe, og);
        if (!ok)
            tt_fail(__FILE__, __LINE__, "%s (%s): step %d differs (losses %.17g, %.17g)",
                    c->name, tg_dtype_name(dt), k + 1, le, lg);
        tg_scope_end();
    }
    /* the unused parameter was never stepped */
    CHECK(tg_optim_param_steps(og, 3) == 0 && tg_optim_param_steps(og, 0) == 5);
    gstep_free(&G);
    tg_optim_free(oe);
    tg_optim_free(og);
    tg_scope_end();
}

static void test_against_eager(void)
{
    const ocase cases[] = {
        {"sgd", SGD, .o.sgd = {.lr = 0.1}},
        {"sgd momentum nesterov wd", SGD,
         .o.sgd = {.lr = 0.1, .momentum = 0.9, .nesterov = true, .weight_decay = 0.01}},
        {"sgd dampening maximize", SGD,
         .o.sgd = {.lr = 0.05, .momentum = 0.8, .dampening = 0.3, .maximize = true}},
        {"sgd fed lr", SGD, .o.sgd = {.lr = 0.1, .momentum = 0.9}, .fed_lr = true},
        {"adam", ADAM, .o.adam = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8}},
        {"adam amsgrad wd", ADAM, .o.adam = {.lr = 0.01, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6,
                                             .weight_decay = 0.1, .amsgrad = true}},
        {"adam beta1 0.6 (the other lerp)", ADAM,
         .o.adam = {.lr = 0.01, .beta1 = 0.4, .beta2 = 0.9, .eps = 1e-8}},
        {"adam fed lr", ADAM, .o.adam = {.lr = 0.02, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8},
         .fed_lr = true},
        {"adamw", ADAMW, .o.adam = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8,
                                    .weight_decay = 0.05}},
        {"adamw amsgrad maximize fed lr", ADAMW,
         .o.adam = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.05,
                    .amsgrad = true, .maximize = true},
         .fed_lr = true},
        {"adadelta", ADADELTA, .o.adadelta = {.lr = 1.0, .rho = 0.9, .eps = 1e-6}},
        {"adadelta wd maximize", ADADELTA,
         .o.adadelta = {.lr = 0.5, .rho = 0.95, .eps = 1e-6, .weight_decay = 0.01,
                        .maximize = true}},
        {"rmsprop", RMSPROP, .o.rmsprop = {.lr = 0.01, .alpha = 0.99, .eps = 1e-8}},
        {"rmsprop centered momentum wd", RMSPROP,
         .o.rmsprop = {.lr = 0.01, .alpha = 0.3, .eps = 1e-8, .momentum = 0.9,
                       .weight_decay = 0.01, .centered = true}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i], TG_FLOAT32);
        run_case(&cases[i], TG_FLOAT64);
    }
}

/* one optimizer, one state: eager steps and graph steps by turns equal
 * eager steps only */
static void test_mixed_steps(void)
{
    tg_scope_begin();
    tg_tensor *pa[NP], *pb[NP];
    make_params(TG_FLOAT32, pa);
    clone_params(pa, pb);
    tg_adam_opts o = tg_adam_defaults();
    o.lr = 0.01;
    tg_optimizer *oa = tg_optim_adam(NP, pa, &o), *ob = tg_optim_adam(NP, pb, &o);
    gstep G;
    gstep_build(&G, ob, pb, TG_FLOAT32, false);
    for (int k = 0; k < 6; k++) {
        tg_scope_begin();
        tg_tensor *xv = batch(TG_FLOAT32, k);
        double la = eager_step(oa, pa, xv, o.lr);
        double lb = k % 2 ? eager_step(ob, pb, xv, o.lr) : gstep_run(&G, xv, o.lr);
        CHECK(la == lb);
        CHECK(same_state(oa, ob));
        tg_scope_end();
    }
    gstep_free(&G);
    tg_optim_free(oa);
    tg_optim_free(ob);
    tg_scope_end();
}

/* a checkpoint loaded into an optimizer a graph was built over: the graph
 * goes on from it (the buffers are loaded in place) as eager steps do */
static void test_resume_into_graph(void)
{
    tg_scope_begin();
    tg_tensor *pa[NP], *pb[NP];
    make_params(TG_FLOAT64, pa);
    clone_params(pa, pb);
    tg_sgd_opts o = {.lr = 0.1, .momentum = 0.9, .dampening = 0.2};
    tg_optimizer *oa = tg_optim_sgd(NP, pa, &o), *ob = tg_optim_sgd(NP, pb, &o);
    gstep G;
    gstep_build(&G, ob, pb, TG_FLOAT64, false);
    for (int k = 0; k < 2; k++)
        eager_step(oa, pa, batch(TG_FLOAT64, k), o.lr);
    tg_state_dict *sd = tg_state_dict_new();
    CHECK_OK(tg_optim_state_dict(oa, sd));
    CHECK_OK(tg_optim_load_state_dict(ob, sd));
    tg_state_dict_free(sd);
    for (int i = 0; i < NP; i++)
        CHECK_OK(tg_copy_(tg_detach(pb[i]), pa[i]));
    CHECK(tg_optim_param_steps(ob, 0) == 2);
    for (int k = 2; k < 5; k++) {
        tg_tensor *xv = batch(TG_FLOAT64, k);
        CHECK(eager_step(oa, pa, xv, o.lr) == gstep_run(&G, xv, o.lr));
        CHECK(same_state(oa, ob));
    }
    gstep_free(&G);
    tg_optim_free(oa);
    tg_optim_free(ob);
    tg_scope_end();
}

static void test_errors(void)
{
    tg_scope_begin();
    tg_tensor *p[NP];
    make_params(TG_FLOAT64, p);
    tg_optimizer *opt = tg_optim_adam(NP, p, NULL);
    tg_graph *g = tg_graph_new("errs");
    tg_tensor *u[NP];
    for (int i = 0; i < NP - 1; i++)
        tg_variable_ref(g, names[i], p[i]);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){5, 3});
    tg_graph_begin(g);
    tg_tensor *loss = loss_of(p, x), *vec = tg_mul_scalar(x, 2);
    tg_graph_end();
    CHECK_FAILS(tg_graph_optim(NULL, loss, NULL, u), TG_ERR_ARG, "the optimizer is NULL");
    CHECK_FAILS(tg_graph_optim(opt, batch(TG_FLOAT64, 0), NULL, u), TG_ERR_ARG,
                "expected a symbolic loss");
    /* p[3] is not in the graph */
    CHECK_FAILS(tg_graph_optim(opt, loss, NULL, u), TG_ERR_ARG, "a parameter");
    tg_variable_ref(g, names[3], p[3]);
    CHECK_FAILS(tg_graph_optim(opt, loss, vec, u), TG_ERR_ARG, "lr must be a 0-d");
    CHECK_FAILS(tg_graph_optim(opt, vec, NULL, u), TG_ERR_AUTOGRAD, "one-element output");
    CHECK_OK(tg_graph_optim(opt, loss, NULL, u));
    /* the state variables carry the optimizer's names; a parameter the
     * loss does not use gets none, as eager steps make none */
    CHECK(tg_graph_find(g, "w/exp_avg_sq") && tg_graph_find(g, "s/exp_avg"));
    CHECK(!tg_graph_find(g, "unused/exp_avg"));
    CHECK(tg_graph_find(g, "adam/step") != NULL);
    tg_clear_error();
    tg_graph_free(g);
    tg_optim_free(opt);
    tg_scope_end();
}

/* tg_graph_optim_apply: the update from gradients built apart (here the
 * graph's own, with the unused parameter given none and absent from the
 * graph) steps exactly as eager steps do; its errors */
static void test_apply(void)
{
    tg_scope_begin();
    tg_tensor *pe[NP], *pg[NP];
    make_params(TG_FLOAT32, pe);
    clone_params(pe, pg);
    tg_optimizer *oe = tg_optim_adam(NP, pe, NULL), *og = tg_optim_adam(NP, pg, NULL);
    tg_graph *g = tg_graph_new("apply");
    for (int i = 0; i < NP - 1; i++)
        CHECK(tg_variable_ref(g, names[i], pg[i]) != NULL);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){5, 3});
    tg_graph_begin(g);
    tg_tensor *loss = loss_of(pg, x), *d[NP] = {NULL}, *u[NP];
    tg_graph_end();
    CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, NP - 1, pg, d));
    CHECK_FAILS(tg_graph_optim_apply(NULL, d, NULL, u), TG_ERR_ARG, "optimizer or the gradients");
    CHECK_FAILS(tg_graph_optim_apply(og, NULL, NULL, u), TG_ERR_ARG, "optimizer or the gradients");
    tg_tensor *wrong[NP] = {d[1], d[0], d[2], NULL};
    CHECK_FAILS(tg_graph_optim_apply(og, wrong, NULL, u), TG_ERR_SHAPE, "dtype and shape");
    tg_graph *other = tg_graph_new("other");
    tg_tensor *stray[NP] = {d[0], tg_placeholder(other, "b", TG_FLOAT32, 1, (int64_t[]){4}),
                            NULL, NULL};
    CHECK_FAILS(tg_graph_optim_apply(og, stray, NULL, u), TG_ERR_ARG, "not a value of the graph");
    tg_tensor *none[NP] = {NULL};
    CHECK_FAILS(tg_graph_optim_apply(og, none, NULL, u), TG_ERR_ARG, "no gradient is given");
    CHECK_OK(tg_graph_optim_apply(og, d, NULL, u));
    CHECK(u[3] == NULL && u[0] && u[1] && u[2]);
    tg_session *s = tg_session_new(g);
    for (int k = 0; k < 3; k++) {
        tg_scope_begin();
        tg_tensor *xv = batch(TG_FLOAT32, k), *l = NULL;
        double le = eager_step(oe, pe, xv, tg_optim_get_lr(oe));
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &loss, &l, NP - 1, u));
        CHECK(l && le == tg_item(l));
        CHECK(same_state(oe, og));
        tg_scope_end();
    }
    CHECK(tg_optim_param_steps(og, 3) == 0 && tg_optim_param_steps(og, 0) == 3);
    tg_session_free(s);
    tg_graph_free(other);
    tg_graph_free(g);
    tg_optim_free(oe);
    tg_optim_free(og);
    tg_clear_error();
    tg_scope_end();
}

int main(void)
{
    RUN(test_apply);
    RUN(test_against_eager);
    RUN(test_mixed_steps);
    RUN(test_resume_into_graph);
    RUN(test_errors);
    return tt_finish();
}
