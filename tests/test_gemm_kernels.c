/* The GEMM kernels below the ops: the built-in kernel of every
 * instruction set this CPU has (generic, AVX2, AVX-512), serial and split
 * over the pool both ways, and CBLAS, against a float64 loop over a grid
 * of shapes (block and tile edges), transposes, alpha/beta and padded
 * leading dimensions, float32 and float64; NaN in C with beta = 0; the
 * choice between built-in and BLAS (TG_GEMM modes, the rule per
 * instruction set) and the reports. */
#include "harness.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm.h"
#include "core/threadpool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* how a product is run: 0 built-in serial, 1 built-in on 2 threads,
 * 2 CBLAS serial, 3 CBLAS on 2 threads, 4 the library's entry point;
 * 5 and 6 the skinny path (gemm_skinny.c) on 1 and 2 threads (only for
 * the shapes test_skinny gives it) */
#define N_WAYS 5
static const char *way_name[] = {"built-in", "built-in x2", "blas", "blas x2",
                                  "entry", "skinny", "skinny x2"};

static tg_status run_way(int way, tg__gemm_call *g)
{
    if (way >= 5)
        return tg__gemm_skinny(g, way == 6 ? 2 : 1);
    if (way == 4)
        return g->f64 ? tg__gemm_f64(g->ta, g->tb, g->m, g->n, g->k, g->alpha,
                                     g->a, g->lda, g->b, g->ldb, g->beta, g->c, g->ldc)
                      : tg__gemm_f32(g->ta, g->tb, g->m, g->n, g->k, (float)g->alpha,
                                     g->a, g->lda, g->b, g->ldb, (float)g->beta, g->c,
                                     g->ldc);
    return tg__gemm_exec(g, way >= 2, way % 2 ? 2 : 1);
}

/* one product against a float64 loop; the padding of C must stay as it
 * was, and beta = 0 must ignore the NaNs C starts with */
static void check_one_into(int way, bool f64, bool ta, bool tb, int64_t m, int64_t n,
                           int64_t k, double alpha, double beta, int64_t pad,
                           void *result)
{
    int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    int64_t ra = ta ? k : m, rb = tb ? n : k;
    size_t z = f64 ? sizeof(double) : sizeof(float);
    double *ad = malloc((size_t)(ra * lda + 1) * sizeof *ad);
    double *bd = malloc((size_t)(rb * ldb + 1) * sizeof *bd);
    double *e = malloc((size_t)(m * ldc + 1) * sizeof *e);
    char *a = malloc((size_t)(ra * lda + 1) * z), *b = malloc((size_t)(rb * ldb + 1) * z);
    char *c = malloc((size_t)(m * ldc + 1) * z);
    for (int64_t i = 0; i < ra * lda; i++)
        ad[i] = (double)((i * 37) % 19) / 8.0 - 1.125;
    for (int64_t i = 0; i < rb * ldb; i++)
        bd[i] = (double)((i * 53) % 23) / 16.0 - 0.75;
    for (int64_t i = 0; i < m * ldc; i++)
        e[i] = beta == 0 && i % ldc < n ? NAN : (double)((i * 11) % 5) - 2.0;
#define STORE(arr, i, v) \
    (f64 ? (void)(((double *)(arr))[i] = (v)) : (void)(((float *)(arr))[i] = (float)(v)))
    for (int64_t i = 0; i < ra * lda; i++)
        STORE(a, i, ad[i]);
    for (int64_t i = 0; i < rb * ldb; i++)
        STORE(b, i, bd[i]);
    for (int64_t i = 0; i < m * ldc; i++)
        STORE(c, i, e[i]);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++)
                s += (ta ? ad[p * lda + i] : ad[i * lda + p]) *
                     (tb ? bd[j * ldb + p] : bd[p * ldb + j]);
            e[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * e[i * ldc + j]);
        }
    tg__gemm_call g = {.ta = ta, .tb = tb, .f64 = f64, .m = m, .n = n, .k = k,
                       .lda = lda, .ldb = ldb, .ldc = ldc, .alpha = alpha,
                       .beta = beta, .a = a, .b = b, .c = c};
    CHECK_OK(run_way(way, &g));
    double worst = 0;
    for (int64_t i = 0; i < m * ldc; i++) {
        double v = f64 ? ((double *)c)[i] : ((float *)c)[i];
        double d = fabs(v - e[i]);
        worst = d > worst || d != d ? d : worst;
    }
    double tol = (f64 ? 1e-12 : 2e-5) * (double)(k + 1) * 4;
    if (!(worst <= tol))
        tt_fail(__FILE__, __LINE__, "%s %s %s %c%c %lldx%lldx%lld alpha %g beta %g "
                "pad %lld: worst error %g (tol %g)", tg__isa_name(tg__cpu_isa()),
                way_name[way], f64 ? "f64" : "f32", ta ? 'T' : 'N', tb ? 'T' : 'N',
                (long long)m, (long long)n, (long long)k, alpha, beta,
                (long long)pad, worst, tol);
    tt_checks++;
    if (result)
        memcpy(result, c, (size_t)(m * ldc) * z);
    free(ad);
    free(bd);
    free(e);
    free(a);
    free(b);
    free(c);
}

static void check_one(int way, bool f64, bool ta, bool tb, int64_t m, int64_t n,
                      int64_t k, double alpha, double beta, int64_t pad)
{
    check_one_into(way, f64, ta, tb, m, n, k, alpha, beta, pad, NULL);
}

/* edges of every tile (6, 14 rows; 4..32 columns), of the 8 x 8
 * transposes in packing, of the cache blocks (KC 256, MC), both splits
 * over threads (rows when m >= n, else columns), and A read in place (n
 * up to 512, 256 with A transposed; alpha 1; B as is too for m up to
 * 256) or packed (n beyond, or alpha not 1) */
static const int64_t sizes[][3] = {
    {1, 1, 1},    {5, 7, 3},     {6, 16, 8},    {14, 32, 9},   {15, 33, 17},
    {13, 31, 16}, {29, 47, 260}, {100, 20, 270}, {3, 200, 40},  {64, 10, 84},
    {64, 120, 400}, {230, 70, 33}, {0, 4, 4},   {4, 4, 0},     {130, 120, 70},
    {20, 300, 150}, {31, 513, 21}, {45, 600, 270},
};

static void grid_for_isa(void)
{
    for (int way = 0; way < N_WAYS; way++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int t = 0; t < 4; t++)
                for (int f64 = 0; f64 < 2; f64++)
                    check_one(way, f64, t & 1, t & 2, sizes[s][0], sizes[s][1],
                              sizes[s][2], t == 3 ? -0.5 : 1.0,
                              t == 0 ? 0.0 : t == 1 ? 1.0 : 2.5, (int64_t)(s % 3));
}

static void test_every_isa(void)
{
    /* the entry point with the built-in kernel at every level */
    tg__gemm_set_mode(TG_GEMM_BUILTIN);
    tg__isa top = tg__cpu_detected();
    for (int isa = TG_ISA_GENERIC; isa <= (int)top; isa++) {
        tg__cpu_force((tg__isa)isa);
        CHECK(tg__cpu_isa() == (tg__isa)isa);
        grid_for_isa();
    }
    tg__cpu_force(top);
    tg__gemm_set_mode(TG_GEMM_AUTO);
}

/* the skinny path: 1 to 8 rows (B transposed; 1 to 4 with B as is), k
 * with and without a tail of the 16 partial sums, n over several thread
 * units of 16 columns and kernel calls of 128 and not a multiple of them
 * (a last group of 1-3 rows of B; rows of op(A) in pairs with AVX-512 and
 * an odd one left), both transposes of A and B, against the float64 loop
 * at every instruction set, on 1 and 2 threads; the same bits on 1 and 2
 * threads, and with AVX2 and AVX-512 (the partial sums do not depend on
 * the vector width; the baseline build has no fused multiply-add); the
 * entry point takes it for these shapes. ResNet-18's classifier (512 ->
 * 1000) at batch 1 and 8 is among them. */
static const int64_t skinny_sizes[][3] = {
    {1, 300, 257}, {2, 517, 130}, {3, 129, 600}, {4, 260, 256},
    {5, 1000, 70}, {6, 70, 1000}, {7, 333, 199}, {8, 129, 600},
    {1, 1000, 512}, {8, 1000, 512}, {3, 1003, 97}, {2, 4099, 20},
};

static void check_skinny(int64_t m, int64_t n, int64_t k, int t, bool f64, int64_t pad)
{
    tg__isa top = tg__cpu_detected();
    size_t bytes = (size_t)(m * (n + pad)) * (f64 ? 8 : 4);
    char *one = malloc(bytes), *two = malloc(bytes), *avx2 = malloc(bytes);
    double alpha = t == 3 ? -0.5 : 1.0, beta = t == 0 ? 0.0 : t == 1 ? 1.0 : 2.5;
    for (int isa = TG_ISA_GENERIC; isa <= (int)top; isa++) {
        tg__cpu_force((tg__isa)isa);
        check_one_into(5, f64, t & 1, t & 2, m, n, k, alpha, beta, pad, one);
        check_one_into(6, f64, t & 1, t & 2, m, n, k, alpha, beta, pad, two);
        CHECK(memcmp(one, two, bytes) == 0);
        if (isa == TG_ISA_AVX2)
            memcpy(avx2, one, bytes);
        if (isa == TG_ISA_AVX512)
            CHECK(memcmp(one, avx2, bytes) == 0);
    }
    tg__cpu_force(top);
    check_one(4, f64, t & 1, t & 2, m, n, k, alpha, beta, pad);
    free(one);
    free(two);
    free(avx2);
}

static void test_skinny(void)
{
    for (size_t s = 0; s < sizeof skinny_sizes / sizeof skinny_sizes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (int f64 = 0; f64 < 2; f64++) {
                int64_t m = skinny_sizes[s][0];
                tg__gemm_call g = {.m = m, .n = skinny_sizes[s][1], .tb = t & 2,
                                   .k = skinny_sizes[s][2], .alpha = 1, .f64 = f64};
                if (m > 4 && !(t & 2)) {
                    CHECK(!tg__gemm_skinny_fits(&g));
                    continue;
                }
                CHECK(tg__gemm_skinny_fits(&g));
                check_skinny(m, g.n, g.k, t, f64, (int64_t)(s % 3));
            }
    /* what it does not take: more rows, a small B, k under a group */
    tg__gemm_call g = {.m = 9, .n = 1000, .k = 1000, .alpha = 1, .tb = true};
    CHECK(!tg__gemm_skinny_fits(&g));
    g.m = 1, g.n = 100, g.k = 100;
    CHECK(!tg__gemm_skinny_fits(&g));
    g.n = 100000, g.k = 8;
    CHECK(!tg__gemm_skinny_fits(&g));
}

/* the skinny path's threads go by B's bytes (512 KB and more: all of the
 * pool's), never inside a pool region; a split at any number of units
 * gives the bits of the serial product */
static void skinny_threads_inside(void *ctx, int64_t begin, int64_t end)
{
    (void)begin, (void)end;
    tg__gemm_call *g = ctx;
    CHECK(tg__gemm_skinny_threads(g) == 1);
}

static void test_skinny_threads(void)
{
    int saved = tg_get_num_threads();
    CHECK_OK(tg_set_num_threads(2));
    tg__gemm_call g = {.m = 1, .n = 1000, .k = 512, .alpha = 1, .tb = true};
    CHECK(tg__gemm_skinny_threads(&g) == 2); /* 2 MB */
    g.n = 100, g.k = 1000; /* 400 KB */
    CHECK(tg__gemm_skinny_threads(&g) == 1);
    g.f64 = true; /* 800 KB */
    CHECK(tg__gemm_skinny_threads(&g) == 2);
    g.n = 64, g.k = 1024; /* exactly 512 KB */
    CHECK(tg__gemm_skinny_threads(&g) == 2);
    g.k = 1023;
    CHECK(tg__gemm_skinny_threads(&g) == 1);
    g.n = 1000, g.k = 512;
    tg_parallel_for(2, 1, skinny_threads_inside, &g);
    CHECK_OK(tg_set_num_threads(1));
    CHECK(tg__gemm_skinny_threads(&g) == 1);
    /* the same bits on 1, 2 and 3 threads (units of 16 columns split 63
     * ways unevenly), B transposed, with the classifier's shape */
    enum { M = 3, N = 1000, K = 512 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K);
    float *c[3];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 37) % 23 - 11) / 7.0f;
    for (int i = 0; i < N * K; i++)
        b[i] = (float)((i * 29) % 19 - 9) / 5.0f;
    for (int t = 0; t < 3; t++) {
        c[t] = malloc(sizeof(float) * M * N);
        CHECK_OK(tg_set_num_threads(t + 1));
        tg__gemm_call h = {.tb = true, .m = M, .n = N, .k = K, .lda = K, .ldb = K,
                           .ldc = N, .alpha = 1, .a = a, .b = b, .c = c[t]};
        CHECK_OK(tg__gemm_skinny(&h, t + 1));
    }
    CHECK(memcmp(c[0], c[1], sizeof(float) * M * N) == 0);
    CHECK(memcmp(c[0], c[2], sizeof(float) * M * N) == 0);
    for (int t = 0; t < 3; t++)
        free(c[t]);
    free(a);
    free(b);
    CHECK_OK(tg_set_num_threads(saved));
}

/* A and B of the bit-comparison tests: small exact fractions */
static void fill_operands(float *a, int na, float *b, int nb)
{
    for (int i = 0; i < na; i++)
        a[i] = (float)((i * 37) % 23 - 11) / 7.0f;
    for (int i = 0; i < nb; i++)
        b[i] = (float)((i * 29) % 19 - 9) / 5.0f;
}

/* a last panel of fewer rows than the tile's runs a tile of its own
 * height (gemm.c's run_macro): its rows must have the bits the same rows
 * get inside a product of whole panels (42 rows: whole panels of 6 and 14),
 * with beta 0 (C's NaNs ignored) and 1, B as is and transposed, at every
 * instruction set */
static void test_partial_panel_bits(void)
{
    enum { M = 42, N = 70, K = 300 };
    float a[M * K], b[K * N], big[M * N], small[M * N];
    fill_operands(a, M * K, b, K * N);
    tg__isa top = tg__cpu_detected();
    for (int isa = TG_ISA_GENERIC; isa <= (int)top; isa++) {
        tg__cpu_force((tg__isa)isa);
        for (int t = 0; t < 4; t++) {
            bool tb = t & 1;
            float beta = t & 2 ? 1.0f : 0.0f;
            for (int i = 0; i < M * N; i++)
                big[i] = beta == 0 ? NAN : (float)(i % 7);
            CHECK(tg__gemm_builtin_f32(false, tb, M, N, K, 1.0f, a, K, b, tb ? K : N, beta,
                                       big, N) == TG_OK);
            for (int64_t m = 1; m < 16; m++) {
                for (int i = 0; i < M * N; i++)
                    small[i] = beta == 0 ? NAN : (float)(i % 7);
                CHECK(tg__gemm_builtin_f32(false, tb, m, N, K, 1.0f, a, K, b, tb ? K : N,
                                           beta, small, N) == TG_OK);
                CHECK(memcmp(small, big, sizeof(float) * (size_t)(m * N)) == 0);
            }
        }
    }
    tg__cpu_force(top);
}

/* A read in place (products of up to 512 columns, 256 with A transposed;
 * B too when not transposed, up to 256 rows, a last partial panel of B
 * packed) and A packed (more) run the same multiply-adds in the same
 * order: columns of a product of 600 columns have the bits of the same
 * columns computed as products of 200, A as is and transposed (42 rows:
 * whole panels and a packed last one; 270 = two blocks of k), B as is and
 * transposed, beta 0 and 1, at every instruction set, serial and on two
 * threads */
static void test_a_in_place_bits(void)
{
    enum { M = 42, N = 600, K = 270, H = 200 };
    static float a[M * K], b[K * N], wide[M * N], half[M * H];
    fill_operands(a, M * K, b, K * N);
    tg__isa top = tg__cpu_detected();
    for (int isa = TG_ISA_GENERIC; isa <= (int)top; isa++) {
        tg__cpu_force((tg__isa)isa);
        for (int t = 0; t < 16; t++) {
            bool ta = t & 1, tb = t & 2;
            float beta = t & 4 ? 1.0f : 0.0f;
            int threads = t & 8 ? 2 : 1;
            int64_t lda = ta ? M : K, ldb = tb ? K : N;
            for (int i = 0; i < M * N; i++)
                wide[i] = beta == 0 ? NAN : (float)(i % 7);
            tg__gemm_call g = {.ta = ta, .tb = tb, .m = M, .n = N, .k = K, .lda = lda,
                               .ldb = ldb, .ldc = N, .alpha = 1, .beta = beta, .a = a,
                               .b = b, .c = wide};
            CHECK_OK(tg__gemm_exec(&g, false, threads));
            for (int h = 0; h < N / H; h++) {
                for (int i = 0; i < M * H; i++)
                    half[i] = beta == 0 ? NAN : (float)((i / H * N + h * H + i % H) % 7);
                g.n = H, g.c = half, g.ldc = H;
                g.b = b + (tb ? h * H * ldb : h * H);
                CHECK_OK(tg__gemm_exec(&g, false, threads));
                for (int i = 0; i < M; i++)
                    CHECK(memcmp(half + i * H, wide + i * N + h * H, sizeof(float) * H) == 0);
            }
        }
    }
    tg__cpu_force(top);
}

static void test_modes_and_reports(void)
{
    tg__gemm_set_mode(TG_GEMM_BUILTIN);
    CHECK(!tg__gemm_use_blas());
    CHECK(strcmp(tg_gemm_choice(TG_FLOAT32, false, false, 8, 8, 8), "built-in") == 0);
    tg__gemm_set_mode(TG_GEMM_BLAS);
    bool have_blas = strcmp(tg__gemm_backend(), "none") != 0;
    CHECK(tg__gemm_use_blas() == have_blas);
    check_one(4, false, false, true, 37, 45, 29, 2.0, 0.0, 1);
    tg__gemm_set_mode(TG_GEMM_AUTO);
    /* the rule: built-in where it has vector kernels, the BLAS below them
     * (when built with one), whatever the shape */
    tg__isa top = tg__cpu_isa();
    for (int level = TG_ISA_GENERIC; level <= (int)top; level++) {
        tg__cpu_force((tg__isa)level);
        bool blas = have_blas && level == TG_ISA_GENERIC;
        CHECK(strcmp(tg_gemm_choice(TG_FLOAT32, false, true, 33, 17, 40),
                     blas ? "blas" : "built-in") == 0);
        CHECK(tg__gemm_use_blas() == blas);
    }
    tg__cpu_force(top);
    CHECK(strcmp(tg_gemm_choice(TG_INT32, false, false, 4, 4, 4), "built-in") == 0);
    const char *isa = tg_kernels_isa();
    CHECK(strcmp(isa, "generic") == 0 || strcmp(isa, "avx2") == 0 ||
          strcmp(isa, "avx512") == 0);
    CHECK(tg_kernels_blas()[0] != '\0');
    CHECK(strcmp(tg__isa_name(TG_ISA_AVX2), "avx2") == 0);
}

int main(void)
{
    RUN(test_every_isa);
    RUN(test_skinny);
    RUN(test_skinny_threads);
    RUN(test_partial_panel_bits);
    RUN(test_a_in_place_bits);
    RUN(test_modes_and_reports);
    return tt_finish();
}
