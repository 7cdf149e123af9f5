/* Packed weights kept between calls (kernels/cpu/pack_cache.c, used by the
 * pointwise convolution and the GEMM's B for frozen weights,
 * core/tensor_impl.h): the
 * cache's own rules (a buffer is ready only once packed, a failed packing
 * is dropped, the least recently used entry goes first), and conv2d over
 * frozen weights giving the bits of the same product over a copy that is
 * not frozen, on every instruction set and on 1 and 2 threads, before and
 * after the weights change in place (their version moves, so the cache
 * must not answer with the old packing). */
#include "harness.h"
#include "core/tensor_impl.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/pack_cache.h"

#include <stdlib.h>
#include <string.h>

static void test_cache_rules(void)
{
    tg__pack_cache_clear();
    tg__pack_key k = {.serial = 7, .version = 1, .layout = {1, 2, 3, 4, 5, 6}};
    tg__pack_entry *e1, *e2;
    bool ready;
    char *b1 = tg__pack_cache_get(&k, 1000, &ready, &e1);
    CHECK(b1 && e1 && !ready);
    memset(b1, 3, 1000);
    tg__pack_cache_release(e1, true);
    char *b2 = tg__pack_cache_get(&k, 1000, &ready, &e2);
    CHECK(b2 == b1 && ready && b2[999] == 3);
    tg__pack_cache_release(e2, false); /* a user of a ready entry: it stays */
    CHECK(tg__pack_cache_get(&k, 1000, &ready, &e2) == b1 && ready);
    tg__pack_cache_release(e2, false);
    /* another version is another key; a failed packing is dropped */
    k.version = 2;
    char *b3 = tg__pack_cache_get(&k, 1000, &ready, &e1);
    CHECK(b3 && b3 != b1 && !ready);
    tg__pack_cache_release(e1, false);
    CHECK(tg__pack_cache_get(&k, 1000, &ready, &e1) && !ready);
    tg__pack_cache_release(e1, true);
    /* too large for the cache: NULL, the caller packs elsewhere */
    k.version = 3;
    CHECK(!tg__pack_cache_get(&k, (size_t)1 << 40, &ready, &e1) && !e1);
    /* the least recently used entry goes when the total would pass the
     * bound (128 MB): 30 MB entries, untouched pages */
    tg__pack_cache_clear();
    size_t big = (size_t)30 << 20;
    for (uint64_t s = 1; s <= 5; s++) {
        tg__pack_key kb = {.serial = 100 + s};
        CHECK(tg__pack_cache_get(&kb, big, &ready, &e1) && !ready);
        tg__pack_cache_release(e1, true);
    }
    CHECK(tg__pack_cache_bytes() <= (size_t)128 << 20);
    tg__pack_key first = {.serial = 101}, last = {.serial = 105};
    CHECK(tg__pack_cache_get(&last, big, &ready, &e1) && ready);
    tg__pack_cache_release(e1, true);
    CHECK(tg__pack_cache_get(&first, big, &ready, &e2) && !ready); /* evicted */
    tg__pack_cache_release(e2, true);
    tg__pack_cache_clear();
    CHECK(tg__pack_cache_bytes() == 0);
}

static tg_tensor *filled(int64_t n, const int64_t *shape, int ndim, double scale, int seed)
{
    tg_tensor *t = tg_zeros(TG_FLOAT32, ndim, shape);
    float *d = tg_data(t);
    for (int64_t i = 0; i < n; i++)
        d[i] = (float)(scale * (double)(((i + seed) * 37) % 29 - 14) / 14.0);
    return t;
}

static bool same_bits(tg_tensor *a, tg_tensor *b)
{
    return a && b && tg_numel(a) == tg_numel(b) &&
           memcmp(tg_data(a), tg_data(b), (size_t)tg_numel(a) * sizeof(float)) == 0;
}

/* one pointwise layer: x [2, 24, 9, 11], w [40, 24, 1, 1], bias */
static void check_frozen_conv(void)
{
    int64_t xs[4] = {2, 24, 9, 11}, ws[4] = {40, 24, 1, 1}, bs[1] = {40};
    tg_tensor *x = filled(2 * 24 * 99, xs, 4, 1.0, 1);
    tg_tensor *wf = filled(40 * 24, ws, 4, 0.5, 2), *wp = tg_clone(wf);
    tg_tensor *b = filled(40, bs, 1, 0.1, 3), *dw = filled(40 * 24, ws, 4, 0.25, 4);
    tg__storage_freeze(wf);
    tg_tensor *want = tg_conv2d(x, wp, b, NULL);
    tg_tensor *got1 = tg_conv2d(x, wf, b, NULL), *got2 = tg_conv2d(x, wf, b, NULL);
    CHECK(same_bits(want, got1) && same_bits(want, got2));
    CHECK(tg__pack_cache_bytes() > 0);
    /* both change in place: the frozen one's version moves */
    uint64_t v = wf->storage->version;
    CHECK_OK(tg_add_(wf, dw, 1.0));
    CHECK_OK(tg_add_(wp, dw, 1.0));
    CHECK(wf->storage->version != v);
    tg_tensor *want2 = tg_conv2d(x, wp, b, NULL), *got3 = tg_conv2d(x, wf, b, NULL);
    CHECK(same_bits(want2, got3) && !same_bits(want, got3));
}

/* the weight B of matmul and gemm (B^T, alpha): the GEMM's B kept packed.
 * Shapes with two slabs of k (kc 256), several panels of columns, above
 * the GEMM's threading threshold, with C taller than wide (the threads
 * share B) and wider than tall (each packs its part of B when not kept) */
static void check_frozen_matmul(void)
{
    int64_t xs[3] = {3, 50, 300}, ws[2] = {300, 70}, x2s[2] = {20, 300}, w2s[2] = {600, 300};
    int64_t bs[1] = {600};
    tg_tensor *x = filled(3 * 50 * 300, xs, 3, 1.0, 5), *x2 = filled(20 * 300, x2s, 2, 1.0, 6);
    tg_tensor *wf = filled(300 * 70, ws, 2, 0.5, 7), *wp = tg_clone(wf);
    tg_tensor *w2f = filled(600 * 300, w2s, 2, 0.5, 8), *w2p = tg_clone(w2f);
    tg_tensor *b = filled(600, bs, 1, 0.1, 9);
    tg_tensor *dw = filled(300 * 70, ws, 2, 0.25, 10), *dw2 = filled(600 * 300, w2s, 2, 0.25, 11);
    tg__pack_cache_clear();
    tg_tensor *want = tg_matmul(x, wp), *want2 = tg_gemm(x2, w2p, b, 0.75, 1.0, false, true);
    CHECK(tg__pack_cache_bytes() == 0); /* weights not frozen: never kept */
    tg__storage_freeze(wf);
    tg__storage_freeze(w2f);
    for (int rep = 0; rep < 2; rep++) { /* packed into the cache, then from it */
        tg_tensor *got = tg_matmul(x, wf), *got2 = tg_gemm(x2, w2f, b, 0.75, 1.0, false, true);
        CHECK(same_bits(want, got) && same_bits(want2, got2));
    }
    CHECK(tg__pack_cache_bytes() >= (size_t)(300 * 70 + 600 * 300) * sizeof(float));
    /* in-place writes move the versions: the old packing is not used */
    CHECK_OK(tg_add_(wf, dw, 1.0));
    CHECK_OK(tg_add_(wp, dw, 1.0));
    CHECK_OK(tg_add_(w2f, dw2, 1.0));
    CHECK_OK(tg_add_(w2p, dw2, 1.0));
    tg_tensor *want3 = tg_matmul(x, wp), *got3 = tg_matmul(x, wf);
    tg_tensor *want4 = tg_gemm(x2, w2p, b, 0.75, 1.0, false, true);
    tg_tensor *got4 = tg_gemm(x2, w2f, b, 0.75, 1.0, false, true);
    CHECK(same_bits(want3, got3) && !same_bits(want, got3));
    CHECK(same_bits(want4, got4) && !same_bits(want2, got4));
}

static void test_frozen_weights(void)
{
    /* the built-in GEMM on both sides: with the frozen weights conv_pw.c
     * never takes CBLAS, whose bits may differ */
    tg__gemm_set_mode(TG_GEMM_BUILTIN);
    tg__isa top = tg__cpu_detected();
    for (int isa = TG_ISA_GENERIC; isa <= (int)top; isa++)
        for (int threads = 1; threads <= 2; threads++) {
            tg__cpu_force((tg__isa)isa);
            tg_set_num_threads(threads);
            check_frozen_conv();
            check_frozen_matmul();
        }
    tg__cpu_force(top);
    tg_set_num_threads(1);
    tg__gemm_set_mode(TG_GEMM_AUTO);
    tg__pack_cache_clear();
}

int main(void)
{
    RUN(test_cache_rules);
    RUN(test_frozen_weights);
    return tt_finish();
}
