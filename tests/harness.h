/* A small test harness: checks that report file:line and keep going,
 * helpers to build tensors, and gradcheck wrappers that try contiguous
 * and strided inputs. Each test program ends with tt_finish(), which
 * prints "N passed, N failed" and returns the exit status. */
#ifndef TG_TEST_HARNESS_H
#define TG_TEST_HARNESS_H

#include "tg/tg.h"

#include <math.h>
#include <stdio.h>

extern int tt_failures, tt_checks;
extern const char *tt_current;

void tt_fail(const char *file, int line, const char *fmt, ...);
int tt_finish(void);
void tt_run(const char *name, void (*fn)(void));
#define RUN(fn) tt_run(#fn, fn)

#define CHECK(cond)                                                   \
    do {                                                              \
        tt_checks++;                                                  \
        if (!(cond))                                                  \
            tt_fail(__FILE__, __LINE__, "CHECK(%s) failed; last error: %s", \
                    #cond, tg_last_error());                          \
    } while (0)

#define CHECK_OK(expr)                                                \
    do {                                                              \
        tt_checks++;                                                  \
        tg_status tt_s = (expr);                                      \
        if (tt_s != TG_OK)                                            \
            tt_fail(__FILE__, __LINE__, "%s returned %s: %s", #expr,  \
                    tg_status_name(tt_s), tg_last_error());           \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                         \
    do {                                                              \
        tt_checks++;                                                  \
        double tt_a = (a), tt_b = (b);                                \
        if (!(fabs(tt_a - tt_b) <= (tol)))                            \
            tt_fail(__FILE__, __LINE__, "%s = %.10g, expected %.10g (tol %g)", \
                    #a, tt_a, tt_b, (double)(tol));                   \
    } while (0)

/* expects expr to fail (NULL or non-OK) with status st and a message
 * containing `needle` */
#define CHECK_ERROR(expr, st, needle)                                 \
    do {                                                              \
        tt_checks++;                                                  \
        tg_clear_error();                                             \
        tt_expect_error((expr) ? 1 : 0, st, needle, #expr, __FILE__, __LINE__); \
    } while (0)
#define CHECK_FAILS(expr, st, needle)                                 \
    do {                                                              \
        tt_checks++;                                                  \
        tg_clear_error();                                             \
        tt_expect_error((expr) != TG_OK ? 0 : 1, st, needle, #expr, __FILE__, __LINE__); \
    } while (0)
void tt_expect_error(int succeeded, tg_status st, const char *needle,
                     const char *expr, const char *file, int line);

/* tensor from doubles, converted to dtype */
tg_tensor *tt_tensor(tg_dtype dt, int ndim, const int64_t *shape,
                     const double *values);
/* checks every element of t against expected (C order) */
#define CHECK_TENSOR(t, expected, tol) \
    tt_check_tensor(t, expected, tol, #t, __FILE__, __LINE__)
void tt_check_tensor(const tg_tensor *t, const double *expected, double tol,
                     const char *what, const char *file, int line);
#define CHECK_SHAPE(t, ...) \
    tt_check_shape(t, (const int64_t[]){__VA_ARGS__}, \
                   (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                   #t, __FILE__, __LINE__)
void tt_check_shape(const tg_tensor *t, const int64_t *shape, int ndim,
                    const char *what, const char *file, int line);

/* max_i |a_i - b_i| / max(floor, |b_i|): relative error where b is not
 * small; INFINITY for NULL, a size mismatch or NaN */
double tt_rel_diff(const tg_tensor *a, const tg_tensor *b, double floor);

/* same dtype, element count and values (compared as float64, bitwise);
 * false for NULL */
bool tt_same(const tg_tensor *a, const tg_tensor *b);

/* session s's optimization level set (the other options as defaults) */
void tt_set_opt_level(tg_session *s, int level);
/* the count `what` of pass `pass` among n records, summed over its runs
 * (-1: the pass did not run; a count of 0 is not recorded: 0 then) */
int tt_record_count(const tg_pass_record *rec, int n, const char *pass, const char *what);
/* fetches f (n <= 8 of them) from x (NULL: no feed) fed xv at levels 0
 * and 2: bitwise equal, reported at the caller's line */
#define CHECK_LEVELS_EQUAL(s, x, xv, n, f) tt_check_levels_equal(__FILE__, __LINE__, s, x, xv, n, f)
void tt_check_levels_equal(const char *file, int line, tg_session *s, tg_tensor *x,
                           tg_tensor *xv, int n, tg_tensor **f);
/* the count `what` pass `pass` reports (summed over its runs) when s, at
 * level 2, optimizes the graph fetching f from feed x (NULL: none); -1
 * when the pass did not run. A count of 0 is not recorded: 0 then. */
int tt_pass_count(tg_session *s, tg_tensor *x, int n_fetch, tg_tensor **f, const char *pass,
                  const char *what);

/* random float64 leaf in [lo, hi) requiring grad (deterministic seed) */
tg_tensor *tt_rand(int ndim, const int64_t *shape, double lo, double hi);
/* the same values cast to dtype dt, not requiring grad */
tg_tensor *tt_rand_dtype(tg_dtype dt, int ndim, const int64_t *shape, double lo,
                         double hi);
/* t's values as doubles in C order (malloc'd; the caller frees them) */
double *tt_values(tg_tensor *t);
/* the same values laid out non-contiguously (a strided view of a larger
 * buffer), as a leaf requiring grad */
tg_tensor *tt_strided(tg_tensor *x);

/* gradcheck fn on inputs, then on strided copies of the inputs that
 * require grad; reports failures at the caller's line */
#define CHECK_GRADCHECK(fn, user, n, inputs) \
    tt_gradcheck(fn, user, n, inputs, #fn, __FILE__, __LINE__)
void tt_gradcheck(tg_gradcheck_fn fn, void *user, int n, tg_tensor **inputs,
                  const char *what, const char *file, int line);

/* grad of grad: tt_grad_of_fn, with user a tt_grad_of, is the gradient
 * d/d in[k] of sum(f(in) * r), built with create_graph so that gradcheck
 * differentiates the gradient rules again (r: a fixed upstream gradient
 * shaped like f's output, not requiring grad) */
typedef struct tt_grad_of {
    tg_gradcheck_fn f;
    void *user;
    tg_tensor *r;
    int k;
} tt_grad_of;
tg_tensor *tt_grad_of_fn(int n, tg_tensor *const *in, void *user);

#endif
