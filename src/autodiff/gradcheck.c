/* gradcheck: the analytic Jacobian from backward, row by row (one-hot
 * output gradients), against central finite differences, entry by entry. */
#include "autodiff/node.h"

#include <math.h>
#include <stdlib.h>

typedef struct check {
    tg_gradcheck_fn fn;
    void *user;
    int n;
    tg_tensor *const *inputs;
    double eps, atol, rtol;
} check;

/* f(inputs) flattened to doubles; NULL on failure. Grad mode stays as it
 * is: f may itself differentiate (grad of grad); its tape is freed with
 * the scope. */
static double *evaluate(const check *c, int64_t *n_out)
{
    tg_scope_begin();
    tg_tensor *y = c->fn(c->n, c->inputs, c->user);
    double *v = NULL;
    if (y && (v = malloc((size_t)(y->numel ? y->numel : 1) * sizeof *v))) {
        tg_copy_to(y, TG_FLOAT64, v);
        *n_out = y->numel;
    }
    tg_scope_end();
    return v;
}

/* numeric column: d f / d input[k] element e, by central differences */
static double *numeric_column(const check *c, tg_tensor *x, int64_t e,
                              int64_t n_out)
{
    char *p = tg__elem_ptr(x, e);
    double orig = tg__load(x->dtype, p);
    int64_t n1 = 0, n2 = 0;
    tg__store(x->dtype, p, orig + c->eps);
    double *plus = evaluate(c, &n1);
    tg__store(x->dtype, p, orig - c->eps);
    double *minus = evaluate(c, &n2);
    tg__store(x->dtype, p, orig);
    if (!plus || !minus || n1 != n_out || n2 != n_out) {
        free(plus);
        free(minus);
        return NULL;
    }
    for (int64_t j = 0; j < n_out; j++)
        plus[j] = (plus[j] - minus[j]) / (2 * c->eps);
    free(minus);
    return plus;
}

/* analytic Jacobian: jac[k][j * numel_k + e] for output j, input k */
static tg_status analytic(const check *c, double **jac, int64_t *n_out)
{
    tg_scope_begin();
    tg_tensor *y = c->fn(c->n, c->inputs, c->user);
    tg_status s = y ? TG_OK : tg_last_status();
    if (s == TG_OK && !y->requires_grad)
        s = tg__error(TG_ERR_AUTOGRAD, "gradcheck: the output does not require grad");
    if (s == TG_OK)
        *n_out = y->numel;
    tg_tensor **res = calloc((size_t)c->n, sizeof *res);
    tg_tensor **wrt = calloc((size_t)c->n, sizeof *wrt);
    int *which = calloc((size_t)c->n, sizeof *which);
    int n_wrt = 0;
    for (int k = 0; k < c->n; k++)
        if (c->inputs[k]->requires_grad) {
            which[n_wrt] = k;
            wrt[n_wrt++] = c->inputs[k];
        }
    if (s == TG_OK && n_wrt == 0)
        s = tg__error(TG_ERR_ARG, "gradcheck: no input requires grad");
    tg_tensor *seed = s == TG_OK ? tg_zeros(y->dtype, y->ndim, y->shape) : NULL;
    for (int64_t j = 0; s == TG_OK && j < *n_out; j++) {
        tg__store(seed->dtype, tg__elem_ptr(seed, j), 1.0);
        if (j > 0)
            tg__store(seed->dtype, tg__elem_ptr(seed, j - 1), 0.0);
        seed->storage->version++;
        s = tg_autograd_grad(1, &y, &seed, n_wrt, wrt, res, true, false);
        for (int w = 0; s == TG_OK && w < n_wrt; w++) {
            int k = which[w];
            tg_tensor *x = c->inputs[k];
            for (int64_t e = 0; e < x->numel; e++)
                jac[k][j * x->numel + e] =
                    res[w] ? tg__load(res[w]->dtype, tg__elem_ptr(res[w], e)) : 0.0;
            tg_release(res[w]);
            res[w] = NULL;
        }
    }
    free(res);
    free(wrt);
    free(which);
    tg_scope_end();
    return s;
}

static tg_status compare(const check *c, double **jac, int64_t n_out)
{
    for (int k = 0; k < c->n; k++) {
        tg_tensor *x = c->inputs[k];
        if (!x->requires_grad)
            continue;
        for (int64_t e = 0; e < x->numel; e++) {
            double *num = numeric_column(c, x, e, n_out);
            if (!num)
                return tg__error_is_set() ? tg_last_status()
                                          : tg__error(TG_ERR_NOMEM, "gradcheck: out of memory");
            for (int64_t j = 0; j < n_out; j++) {
                double a = jac[k][j * x->numel + e], nu = num[j];
                if (!(fabs(a - nu) <= c->atol + c->rtol * fabs(nu))) {
                    free(num);
                    return tg__error(TG_ERR_AUTOGRAD,
                                     "gradcheck: Jacobian mismatch for output %lld "
                                     "with respect to input %d element %lld: "
                                     "analytic %.10g, numerical %.10g",
                                     (long long)j, k, (long long)e, a, nu);
                }
            }
            free(num);
        }
    }
    return TG_OK;
}

tg_status tg_gradcheck(tg_gradcheck_fn fn, void *user, int n,
                       tg_tensor *const *inputs, const tg_gradcheck_opts *opts)
{
    if (!fn || n < 1 || !inputs)
        return tg__error(TG_ERR_ARG, "gradcheck: need a function and inputs");
    check c = {fn, user, n, inputs, 1e-6, 1e-5, 1e-3};
    if (opts && opts->eps > 0) c.eps = opts->eps;
    if (opts && opts->atol > 0) c.atol = opts->atol;
    if (opts && opts->rtol > 0) c.rtol = opts->rtol;
    for (int k = 0; k < n; k++)
        if (!inputs[k])
            return tg__error(TG_ERR_ARG, "gradcheck: input %d is NULL", k);
    int floor = tg__scope_suspend();
    int64_t n_out = 0;
    tg_status s = TG_OK;
    double **jac = calloc((size_t)n, sizeof *jac);
    /* the output size is needed first: evaluate once */
    double *y0 = evaluate(&c, &n_out);
    if (!y0)
        s = tg__error_is_set() ? tg_last_status()
                               : tg__error(TG_ERR_ARG, "gradcheck: function failed");
    free(y0);
    for (int k = 0; s == TG_OK && k < n; k++)
        if (!(jac[k] = calloc((size_t)(n_out * inputs[k]->numel + 1), sizeof **jac)))
            s = tg__error(TG_ERR_NOMEM, "gradcheck: out of memory");
    if (s == TG_OK)
        s = analytic(&c, jac, &n_out);
    if (s == TG_OK)
        s = compare(&c, jac, n_out);
    for (int k = 0; k < n; k++)
        free(jac[k]);
    free(jac);
    tg__scope_resume(floor);
    return s;
}
