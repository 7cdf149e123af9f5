/* Saving and restoring a generator's state (tg_generator_get_state /
 * set_state, PyTorch's Generator.get_state / set_state): a restored state
 * replays the same draws, eager tensors included; bad arguments are
 * errors that leave the generator as it was. (Tensors belong to the scope
 * each test runs in.) */
#include "harness.h"

#include <string.h>

static void test_restore_replays_draws(void)
{
    tg_generator *g = tg_generator_new(11);
    uint64_t saved[4], again[4];
    CHECK_OK(tg_generator_get_state(g, saved));
    uint64_t a = tg_generator_next(g);
    tg_tensor *ta = tg_rand_uniform(g, TG_FLOAT64, 1, (const int64_t[]){5}, 0, 1);
    CHECK_OK(tg_generator_set_state(g, saved));
    CHECK(tg_generator_next(g) == a);
    tg_tensor *tb = tg_rand_uniform(g, TG_FLOAT64, 1, (const int64_t[]){5}, 0, 1);
    CHECK(ta && tb && memcmp(tg_data(ta), tg_data(tb), 5 * sizeof(double)) == 0);
    CHECK_OK(tg_generator_get_state(g, again));
    CHECK(memcmp(saved, again, sizeof saved) != 0); /* it moved on */
    tg_generator *h = tg_generator_new(99); /* another generator takes the state */
    CHECK_OK(tg_generator_set_state(h, saved));
    CHECK(tg_generator_next(h) == a);
    tg_generator_free(g);
    tg_generator_free(h);
}

static void test_bad_arguments(void)
{
    tg_generator *g = tg_generator_new(3);
    uint64_t before[4], after[4], zero[4] = {0, 0, 0, 0};
    CHECK_OK(tg_generator_get_state(g, before));
    CHECK_FAILS(tg_generator_set_state(g, zero), TG_ERR_ARG, "all-zero");
    CHECK_OK(tg_generator_get_state(g, after));
    CHECK(memcmp(before, after, sizeof before) == 0);
    CHECK_FAILS(tg_generator_get_state(NULL, before), TG_ERR_ARG, "the generator is NULL");
    CHECK_FAILS(tg_generator_get_state(g, NULL), TG_ERR_ARG, "state is NULL");
    CHECK_FAILS(tg_generator_set_state(NULL, before), TG_ERR_ARG, "the generator is NULL");
    CHECK_FAILS(tg_generator_set_state(g, NULL), TG_ERR_ARG, "state is NULL");
    tg_generator_free(g);
}

int main(void)
{
    RUN(test_restore_replays_draws);
    RUN(test_bad_arguments);
    return tt_finish();
}
