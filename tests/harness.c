/* The test harness (see harness.h). */
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tt_failures, tt_checks;
const char *tt_current = "";
static int tests_passed, tests_failed;
static tg_generator *gen;

void tt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    tt_failures++;
    fprintf(stderr, "FAIL %s (%s:%d): ", tt_current, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void tt_run(const char *name, void (*fn)(void))
{
    int before = tt_failures;
    tt_current = name;
    tg_clear_error();
    tg_scope_begin();
    fn();
    tg_scope_end();
    if (tg_scope_depth() != 0)
        tt_fail(__FILE__, __LINE__, "scope depth %d after test", tg_scope_depth());
    if (tt_failures == before)
        tests_passed++;
    else
        tests_failed++;
    printf("%s %s\n", tt_failures == before ? "ok  " : "FAIL", name);
}

int tt_finish(void)
{
    tg_generator_free(gen);
    gen = NULL;
    printf("%d passed, %d failed\n", tests_passed, tests_failed);
    return tests_failed ? 1 : 0;
}

void tt_expect_error(int succeeded, tg_status st, const char *needle,
                     const char *expr, const char *file, int line)
{
    if (succeeded)
        tt_fail(file, line, "%s succeeded, expected %s", expr, tg_status_name(st));
    else if (tg_last_status() != st)
        tt_fail(file, line, "%s failed with %s (%s), expected %s", expr,
                tg_status_name(tg_last_status()), tg_last_error(), tg_status_name(st));
    else if (needle && !strstr(tg_last_error(), needle))
        tt_fail(file, line, "%s: message \"%s\" lacks \"%s\"", expr,
                tg_last_error(), needle);
    tg_clear_error();
}

tg_tensor *tt_tensor(tg_dtype dt, int ndim, const int64_t *shape,
                     const double *values)
{
    tg_tensor *t = tg_empty(dt, ndim, shape);
    if (!t)
        return NULL;
    char *p = tg_data(t);
    size_t es = tg_dtype_size(dt);
    for (int64_t i = 0; i < tg_numel(t); i++) {
        double v = values[i];
        switch (dt) {
        case TG_FLOAT32: *(float *)(p + i * es) = (float)v; break;
        case TG_FLOAT64: *(double *)(p + i * es) = v; break;
        case TG_INT32: *(int32_t *)(p + i * es) = (int32_t)v; break;
        case TG_INT64: *(int64_t *)(p + i * es) = (int64_t)v; break;
        case TG_UINT8: *(uint8_t *)(p + i * es) = (uint8_t)v; break;
        case TG_BOOL: *(uint8_t *)(p + i * es) = v != 0; break;
        default: break;
        }
    }
    return t;
}

void tt_check_tensor(const tg_tensor *t, const double *expected, double tol,
                     const char *what, const char *file, int line)
{
    tt_checks++;
    if (!t) {
        tt_fail(file, line, "%s is NULL: %s", what, tg_last_error());
        return;
    }
    int64_t n = tg_numel(t);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    for (int64_t i = 0; i < n; i++) {
        bool same = (isnan(v[i]) && isnan(expected[i])) ||
                    (isinf(v[i]) && v[i] == expected[i]) ||
                    fabs(v[i] - expected[i]) <= tol;
        if (!same) {
            tt_fail(file, line, "%s[%lld] = %.10g, expected %.10g", what,
                    (long long)i, v[i], expected[i]);
            break;
        }
    }
    free(v);
}

void tt_check_shape(const tg_tensor *t, const int64_t *shape, int ndim,
                    const char *what, const char *file, int line)
{
    tt_checks++;
    char a[160], b[160];
    if (!t) {
        tt_fail(file, line, "%s is NULL: %s", what, tg_last_error());
        return;
    }
    bool same = tg_ndim(t) == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = tg_shape(t)[i] == shape[i];
    if (!same)
        tt_fail(file, line, "%s has shape %s, expected %s", what,
                tg_shape_str(tg_ndim(t), tg_shape(t), a, sizeof a),
                tg_shape_str(ndim, shape, b, sizeof b));
}

double tt_rel_diff(const tg_tensor *a, const tg_tensor *b, double floor)
{
    if (!a || !b || tg_numel(a) != tg_numel(b))
        return INFINITY;
    int64_t n = tg_numel(a);
    double *x = malloc((size_t)(n ? n : 1) * sizeof *x), *y = malloc((size_t)(n ? n : 1) * sizeof *y);
    double worst = 0;
    if (tg_copy_to(a, TG_FLOAT64, x) != TG_OK || tg_copy_to(b, TG_FLOAT64, y) != TG_OK)
        worst = INFINITY;
    for (int64_t i = 0; i < n && worst < INFINITY; i++) {
        double d = fabs(x[i] - y[i]) / fmax(floor, fabs(y[i]));
        if (!(d <= worst))
            worst = isnan(d) ? INFINITY : d;
    }
    free(x);
    free(y);
    return worst;
}

void tt_set_opt_level(tg_session *s, int level)
{
    tg_session_options o = tg_session_default_options();
    o.opt_level = level;
    CHECK_OK(tg_session_set_options(s, &o));
}

int tt_pass_count(tg_session *s, tg_tensor *x, int n_fetch, tg_tensor **f, const char *pass,
                  const char *what)
{
    tg_pass_record rec[32];
    int n = 0;
    tt_set_opt_level(s, 2);
    tg_graph_free(tg_session_optimized_graph(s, x ? 1 : 0, &x, NULL, n_fetch, f, 0, NULL, 32,
                                             rec, &n));
    return tt_record_count(rec, n, pass, what);
}

int tt_record_count(const tg_pass_record *rec, int n, const char *pass, const char *what)
{
    if (getenv("TT_DEBUG"))
        for (int i = 0; i < n; i++) {
            fprintf(stderr, "%s %d->%d", rec[i].pass, rec[i].nodes_before, rec[i].nodes_after);
            for (int k = 0; k < rec[i].n_counts; k++)
                fprintf(stderr, " %s=%d", rec[i].counts[k].what, rec[i].counts[k].n);
            fprintf(stderr, "\n");
        }
    int total = -1;
    for (int i = 0; i < n; i++) {
        if (strcmp(rec[i].pass, pass))
            continue;
        total = total < 0 ? 0 : total;
        for (int k = 0; k < rec[i].n_counts; k++)
            if (!strcmp(rec[i].counts[k].what, what))
                total += rec[i].counts[k].n;
    }
    return total;
}

void tt_check_levels_equal(const char *file, int line, tg_session *s, tg_tensor *x,
                           tg_tensor *xv, int n, tg_tensor **f)
{
    tg_tensor *r0[8], *r2[8];
    if (n > 8) {
        tt_fail(file, line, "tt_check_levels_equal: %d fetches (at most 8)", n);
        return;
    }
    tt_set_opt_level(s, 0);
    tg_status s0 = tg_session_run(s, x ? 1 : 0, &x, &xv, n, f, r0, 0, NULL);
    tt_set_opt_level(s, 2);
    tg_status s2 = tg_session_run(s, x ? 1 : 0, &x, &xv, n, f, r2, 0, NULL);
    if (s0 != TG_OK || s2 != TG_OK) {
        tt_fail(file, line, "a run failed: %s", tg_last_error());
        return;
    }
    for (int i = 0; i < n; i++)
        if (!tt_same(r0[i], r2[i]))
            tt_fail(file, line, "fetch %d differs from level 0", i);
}

bool tt_same(const tg_tensor *a, const tg_tensor *b)
{
    if (!a || !b || tg_numel(a) != tg_numel(b) || tg_dtype_of(a) != tg_dtype_of(b) ||
        tg_ndim(a) != tg_ndim(b))
        return false;
    size_t bytes = (size_t)(tg_numel(a) ? tg_numel(a) : 1) * sizeof(double);
    double *x = malloc(bytes), *y = malloc(bytes);
    bool ok = x && y && tg_copy_to(a, TG_FLOAT64, x) == TG_OK &&
              tg_copy_to(b, TG_FLOAT64, y) == TG_OK &&
              memcmp(x, y, (size_t)tg_numel(a) * sizeof *x) == 0;
    free(x);
    free(y);
    return ok;
}

tg_tensor *tt_rand(int ndim, const int64_t *shape, double lo, double hi)
{
    if (!gen)
        gen = tg_generator_new(1234);
    tg_tensor *t = tg_rand_uniform(gen, TG_FLOAT64, ndim, shape, lo, hi);
    tg_set_requires_grad(t, true);
    return t;
}

tg_tensor *tt_strided(tg_tensor *x)
{
    /* a buffer twice as long in the last dim; take every other element */
    int nd = tg_ndim(x);
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        shape[i] = tg_shape(x)[i];
    tg_no_grad_begin();
    tg_tensor *v;
    if (nd == 0) {
        v = tg_clone(x);
    } else {
        shape[nd - 1] *= 2;
        tg_tensor *big = tg_zeros(tg_dtype_of(x), nd, shape);
        v = tg_slice(big, nd - 1, 0, shape[nd - 1], 2);
        tg_copy_(v, x);
    }
    tg_no_grad_end();
    v = tg_detach(v); /* a leaf view */
    tg_set_requires_grad(v, tg_requires_grad(x));
    return v;
}

void tt_gradcheck(tg_gradcheck_fn fn, void *user, int n, tg_tensor **inputs,
                  const char *what, const char *file, int line)
{
    tt_checks++;
    if (tg_gradcheck(fn, user, n, inputs, NULL) != TG_OK) {
        tt_fail(file, line, "gradcheck %s (contiguous): %s", what, tg_last_error());
        return;
    }
    tg_tensor *strided[16];
    for (int i = 0; i < n && i < 16; i++)
        strided[i] = tg_requires_grad(inputs[i]) ? tt_strided(inputs[i]) : inputs[i];
    if (tg_gradcheck(fn, user, n, strided, NULL) != TG_OK)
        tt_fail(file, line, "gradcheck %s (strided): %s", what, tg_last_error());
}

tg_tensor *tt_grad_of_fn(int n, tg_tensor *const *in, void *user)
{
    tt_grad_of *g = user;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *y = g->f(n, in, g->user), *res = NULL, *out = NULL;
    if (y && tg_autograd_grad(1, &y, &g->r, 1, &in[g->k], &res, true, true) == TG_OK)
        out = tg_mul_scalar(res, 1.0);
    tg_release(res);
    tg_set_grad_enabled(was);
    return out;
}

tg_tensor *tt_rand_dtype(tg_dtype dt, int ndim, const int64_t *shape, double lo,
                         double hi)
{
    return tg_detach(tg_cast(tt_rand(ndim, shape, lo, hi), dt));
}

double *tt_values(tg_tensor *t)
{
    double *v = malloc((size_t)(tg_numel(t) ? tg_numel(t) : 1) * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    return v;
}
