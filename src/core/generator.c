/* Seedable random generators (xoshiro256**, seeded through splitmix64) and
 * the random tensor constructors. No global state: every draw names its
 * generator, so runs are reproducible.
 * The state lives in a tensor (int64 [4]) so that a graph can hold it as a
 * variable by reference: a random op node (graph/random.c) then advances
 * the same state eager draws advance, and a graph run and eager code give
 * the same numbers for the same seed and sequence of draws. The tensor is
 * reference counted: a graph keeps it alive after tg_generator_free. */
#include "core/tensor_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tg_generator {
    uint64_t *s;      /* the 4 words of state, in state's storage */
    tg_tensor *state; /* int64 [4] */
};

tg_tensor *tg__generator_state(tg_generator *g) { return g ? g->state : NULL; }

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void tg_generator_seed(tg_generator *g, uint64_t seed)
{
    if (!g)
        return;
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&seed);
}

tg_status tg_generator_get_state(const tg_generator *g, uint64_t *state)
{
    if (!g || !state)
        return tg__error(TG_ERR_ARG, "tg_generator_get_state: %s is NULL",
                         g ? "state" : "the generator");
    memcpy(state, g->s, 4 * sizeof *state);
    return TG_OK;
}

tg_status tg_generator_set_state(tg_generator *g, const uint64_t *state)
{
    if (!g || !state)
        return tg__error(TG_ERR_ARG, "tg_generator_set_state: %s is NULL",
                         g ? "state" : "the generator");
    if (!(state[0] | state[1] | state[2] | state[3]))
        return tg__error(TG_ERR_ARG, "tg_generator_set_state: an all-zero state is not a "
                         "state of xoshiro256** (it would give only zeros)");
    memcpy(g->s, state, 4 * sizeof *state); /* in place: graphs hold this storage */
    return TG_OK;
}

tg_generator *tg_generator_new(uint64_t seed)
{
    tg_generator *g = malloc(sizeof *g);
    if (!g)
        return tg__error_null(TG_ERR_NOMEM, "out of memory");
    int64_t four = 4;
    if (!(g->state = tg__alloc(TG_INT64, 1, &four))) {
        free(g);
        return NULL;
    }
    g->s = (uint64_t *)tg__base(g->state);
    tg_generator_seed(g, seed);
    return g;
}

void tg_generator_free(tg_generator *g)
{
    if (g)
        tg_release(g->state);
    free(g);
}

/* xoshiro256** on a state of 4 words */
static uint64_t next_of(uint64_t *s)
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static double uniform_of(uint64_t *s) { return (double)(next_of(s) >> 11) * 0x1.0p-53; }

void tg__bernoulli_fill(uint64_t *state, uint8_t *d, int64_t n, double p)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = uniform_of(state) < p;
}

uint64_t tg_generator_next(tg_generator *g)
{
    if (!g) {
        tg__error(TG_ERR_ARG, "tg_generator_next: generator is NULL");
        return 0;
    }
    return next_of(g->s);
}

double tg_generator_uniform(tg_generator *g)
{
    return (double)(tg_generator_next(g) >> 11) * 0x1.0p-53;
}

static tg_tensor *random_tensor(const char *op, tg_generator *g, tg_dtype dt,
                                int ndim, const int64_t *shape, bool float_only)
{
    if (!g)
        return tg__error_null(TG_ERR_ARG, "%s: generator is NULL", op);
    if (!tg_dtype_is_valid((int)dt) || (float_only && !tg_dtype_is_float(dt)))
        return tg__error_null(TG_ERR_DTYPE,
                              "%s: expected float32 or float64, got %s", op,
                              tg_dtype_name(dt));
    if (!tg__check_shape(op, ndim, shape))
        return NULL;
    return tg__alloc(dt, ndim, shape);
}

void tg__uniform_fill(uint64_t *state, tg_dtype dt, void *data, int64_t n, double lo,
                      double hi)
{
    /* lo + (hi - lo) * u can round up to hi (always possible in float32):
     * such draws take the largest value below hi, keeping [lo, hi) */
    if (dt == TG_FLOAT32) {
        float *d = data;
        float top = nextafterf((float)hi, -INFINITY);
        for (int64_t i = 0; i < n; i++) {
            float v = (float)(lo + (hi - lo) * uniform_of(state));
            d[i] = (double)v >= hi && hi > lo ? fmaxf(top, (float)lo) : v;
        }
    } else {
        double *d = data;
        double top = nextafter(hi, -INFINITY);
        for (int64_t i = 0; i < n; i++) {
            double v = lo + (hi - lo) * uniform_of(state);
            d[i] = v >= hi && hi > lo ? fmax(top, lo) : v;
        }
    }
}

void tg__normal_fill(uint64_t *state, tg_dtype dt, void *data, int64_t n, double mean,
                     double std)
{
    size_t es = tg_dtype_size(dt);
    char *d = data;
    for (int64_t i = 0; i < n; i += 2) { /* Box-Muller, two at a time */
        double u1 = 1.0 - uniform_of(state); /* (0, 1]: log is finite */
        double u2 = uniform_of(state);
        double r = sqrt(-2.0 * log(u1));
        tg__store(dt, d + i * (int64_t)es, mean + std * r * cos(2 * M_PI * u2));
        if (i + 1 < n)
            tg__store(dt, d + (i + 1) * (int64_t)es, mean + std * r * sin(2 * M_PI * u2));
    }
}

tg_tensor *tg_rand_uniform(tg_generator *g, tg_dtype dt, int ndim,
                           const int64_t *shape, double lo, double hi)
{
    tg_tensor *t = random_tensor("tg_rand_uniform", g, dt, ndim, shape, true);
    if (!t)
        return NULL;
    tg__uniform_fill(g->s, dt, tg__base(t), t->numel, lo, hi);
    return tg__publish(t);
}

tg_tensor *tg_rand_normal(tg_generator *g, tg_dtype dt, int ndim,
                          const int64_t *shape, double mean, double std)
{
    tg_tensor *t = random_tensor("tg_rand_normal", g, dt, ndim, shape, true);
    if (!t)
        return NULL;
    tg__normal_fill(g->s, dt, tg__base(t), t->numel, mean, std);
    return tg__publish(t);
}

tg_tensor *tg_rand_bernoulli(tg_generator *g, int ndim, const int64_t *shape,
                             double p)
{
    if (!(p >= 0 && p <= 1))
        return tg__error_null(TG_ERR_ARG,
                              "tg_rand_bernoulli: p must be in [0, 1], got %g", p);
    tg_tensor *t = random_tensor("tg_rand_bernoulli", g, TG_BOOL, ndim, shape, false);
    if (!t)
        return NULL;
    tg__bernoulli_fill(g->s, (uint8_t *)tg__base(t), t->numel, p);
    return tg__publish(t);
}

tg_tensor *tg_randperm(tg_generator *g, int64_t n)
{
    tg_tensor *t = random_tensor("tg_randperm", g, TG_INT64, 1, &n, false);
    if (!t)
        return NULL;
    int64_t *d = (int64_t *)tg__base(t);
    for (int64_t i = 0; i < n; i++)
        d[i] = i;
    for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)(tg_generator_next(g) % (uint64_t)(i + 1));
        int64_t tmp = d[i];
        d[i] = d[j];
        d[j] = tmp;
    }
    return tg__publish(t);
}
