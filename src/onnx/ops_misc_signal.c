/* ONNX's window functions (opset 17): HannWindow, HammingWindow,
 * BlackmanWindow, computed at import from the window's size (its value
 * decides the output's length, so it must be known: a constant, a given
 * input with opts.specialize, or any input of an eager build), as
 * generalized cosine windows sum_k a_k cos(2 pi k n / N) with N the size
 * (periodic) or the size - 1 (symmetric), in double and then rounded to
 * output_datatype, as torch's hann/hamming/blackman_window. */
#include "onnx/ops_misc.h"

#include <math.h>

#define TWO_PI 6.283185307179586476925286766559

/* the output_datatype attribute (default FLOAT) and the dtype that holds it */
static tg_status out_datatype(onnx_ictx *c, int64_t *out_type, tg_dtype *dt)
{
    tg_status s = oa_int(c, "output_datatype", ONNX_FLOAT, out_type);
    if (s != TG_OK)
        return s;
    if (*out_type < 0 || *out_type > INT32_MAX ||
        onnx_storage_dtype((int32_t)*out_type, dt) != TG_OK)
        return onnx_err(c, TG_ERR_IO, "output_datatype %lld is not a numeric type "
                        "tensorgraph holds", (long long)*out_type);
    return TG_OK;
}

static tg_status cosine_window(onnx_ictx *c, const double *a, int terms)
{
    tg_tensor *t = misc_value_req(c, 0, "size", "it is the output's length");
    int64_t periodic, out_type;
    tg_dtype dt;
    tg_status s = t ? oa_int(c, "periodic", 1, &periodic) : tg_last_status();
    if (s == TG_OK)
        s = out_datatype(c, &out_type, &dt);
    if (s != TG_OK)
        return s;
    tg_dtype st = tg_dtype_of(t);
    if (tg_numel(t) != 1 || (st != TG_INT64 && st != TG_INT32))
        return onnx_err(c, TG_ERR_IO, "size should be one int32 or int64 value");
    int64_t n;
    if ((s = tg_copy_to(t, TG_INT64, &n)) != TG_OK)
        return s;
    if (n < 0 || n > ONNX_IMPORT_MAX_ELEMENTS)
        return onnx_err(c, TG_ERR_IO, "size %lld should be in [0, 2^28]", (long long)n);
    double *w = onnx_tmp_alloc(c, (size_t)n * sizeof *w);
    if (!w)
        return tg_last_status();
    double period = periodic ? (double)n : (double)(n - 1);
    for (int64_t i = 0; i < n; i++) {
        double v = 0;
        for (int k = 0; k < terms; k++)
            v += a[k] * cos(TWO_PI * k * (double)i / period);
        /* a symmetric window of one sample: 1, as torch's */
        w[i] = period > 0 ? v : 1.0;
    }
    int tok = onnx_eager_begin();
    tg_tensor *y = onnx_as(tg_from_data(TG_FLOAT64, 1, &n, w), dt);
    if (y && (out_type == ONNX_FLOAT16 || out_type == ONNX_BFLOAT16))
        y = onnx_round_to_half(y, out_type == ONNX_BFLOAT16);
    onnx_eager_end(tok);
    return misc_done(c, y);
}

tg_status misc_hann_window(onnx_ictx *c)
{
    static const double a[] = {0.5, -0.5};
    return cosine_window(c, a, 2);
}

tg_status misc_hamming_window(onnx_ictx *c)
{
    static const double a[] = {25.0 / 46.0, -(1 - 25.0 / 46.0)};
    return cosine_window(c, a, 2);
}

tg_status misc_blackman_window(onnx_ictx *c)
{
    static const double a[] = {0.42, -0.5, 0.08};
    return cosine_window(c, a, 3);
}

/* ---- DFT(axis, inverse, onesided): input [..., 1 or 2], dft_length ---------------------
 * The transform along the axis as two products with constant cosine and
 * sine matrices [L, K] (in float64: the sums of a float32 signal keep
 * their small terms), so it is differentiable and runs in graphs. */
#define DFT_MAX_LENGTH 4096

/* cos and sin of 2 pi t k / L, [L, K], as float64 constants */
static tg_status dft_matrices(onnx_ictx *c, int64_t L, int64_t K, tg_tensor **cm,
                              tg_tensor **sm)
{
    double *cv = onnx_tmp_alloc(c, (size_t)(L * K) * sizeof *cv);
    double *sv = cv ? onnx_tmp_alloc(c, (size_t)(L * K) * sizeof *sv) : NULL;
    if (!sv)
        return tg_last_status();
    for (int64_t t = 0; t < L; t++)
        for (int64_t k = 0; k < K; k++) {
            /* t k mod L keeps the angle small and exact */
            double a = TWO_PI * (double)((t * k) % L) / (double)L;
            cv[t * K + k] = cos(a);
            sv[t * K + k] = sin(a);
        }
    int tok = onnx_eager_begin();
    *cm = tg_from_data(TG_FLOAT64, 2, (int64_t[]){L, K}, cv);
    *sm = tg_from_data(TG_FLOAT64, 2, (int64_t[]){L, K}, sv);
    onnx_eager_end(tok);
    return *cm && *sm ? TG_OK : tg_last_status();
}

/* part p (0 real, 1 imaginary) of x [..., 2] with the signal axis moved
 * last, cut or zero-padded to L, in float64 */
static tg_tensor *dft_part(tg_tensor *x, int p, int axis, int64_t L)
{
    int r = tg_ndim(x) - 1;
    int64_t n = tg_shape(x)[axis];
    tg_tensor *v = tg_squeeze(tg_slice(x, r, p, p + 1, 1), r);
    v = onnx_as(tg_transpose(v, axis, r - 1), TG_FLOAT64);
    if (L < n)
        return tg_slice(v, r - 1, 0, L, 1);
    if (L > n) {
        int64_t pads[2 * TG_MAX_DIMS] = {0};
        pads[2 * (r - 1) + 1] = L - n;
        return tg_pad(v, 2 * r, pads, 0);
    }
    return v;
}

/* the transform over the last dim (L samples, float64; xi NULL for real
 * input) into K bins: forward e^(-i a) = cos a - i sin a, inverse the
 * conjugate over L */
static tg_status dft_last(onnx_ictx *c, tg_tensor *xr, tg_tensor *xi, int64_t L, int64_t K,
                          bool inverse, tg_tensor **yr, tg_tensor **yi)
{
    tg_tensor *cm = NULL, *sm = NULL;
    tg_status s = dft_matrices(c, L, K, &cm, &sm);
    if (s != TG_OK)
        return s;
    double sgn = inverse ? 1 : -1;
    *yr = tg_matmul(xr, cm);
    *yi = tg_mul_scalar(tg_matmul(xr, sm), sgn);
    if (xi) {
        *yr = tg_add(*yr, tg_mul_scalar(tg_matmul(xi, sm), -sgn));
        *yi = tg_add(*yi, tg_matmul(xi, cm));
    }
    if (inverse) {
        *yr = tg_mul_scalar(*yr, 1.0 / (double)L);
        *yi = tg_mul_scalar(*yi, 1.0 / (double)L);
    }
    return *yr && *yi ? TG_OK : tg_last_status();
}

tg_status misc_dft(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t a, inverse, onesided;
    tg_status s = x ? oa_int(c, "axis", 1, &a) : tg_last_status();
    if (s == TG_OK)
        s = oa_int(c, "inverse", 0, &inverse);
    if (s == TG_OK)
        s = oa_int(c, "onesided", 0, &onesided);
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x), axis;
    if (r < 2 || (tg_shape(x)[r - 1] != 1 && tg_shape(x)[r - 1] != 2) ||
        !tg_dtype_is_float(tg_dtype_of(x)))
        return onnx_err(c, TG_ERR_IO, "input should be float [..., 1 or 2] (real or complex "
                        "values), is %s of rank %d", tg_dtype_name(tg_dtype_of(x)), r);
    if ((s = onnx_axis(c, a, r, "axis", &axis)) != TG_OK)
        return s;
    if (axis == r - 1)
        return onnx_err(c, TG_ERR_IO, "axis %lld is the real/imaginary dim", (long long)a);
    bool complex_in = tg_shape(x)[r - 1] == 2;
    if (onesided && (inverse || complex_in))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "onesided is supported for a forward "
                        "transform of real input only");
    int64_t L = tg_shape(x)[axis];
    if (c->n_in > 1 && c->in[1]) {
        double v;
        if ((s = oi_scalar(c, 1, "dft_length", &v)) != TG_OK)
            return s;
        if (!(v >= 1 && v <= DFT_MAX_LENGTH))
            return onnx_err(c, TG_ERR_IO, "dft_length %g should be in [1, %d]", v,
                            DFT_MAX_LENGTH);
        L = (int64_t)v;
    }
    if (L < 1 || L > DFT_MAX_LENGTH)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "a signal of %lld samples (1 to %d are "
                        "supported)", (long long)L, DFT_MAX_LENGTH);
    int64_t K = onesided ? L / 2 + 1 : L;
    tg_tensor *xr = dft_part(x, 0, axis, L), *xi = complex_in ? dft_part(x, 1, axis, L) : NULL;
    tg_tensor *yr, *yi;
    if ((s = dft_last(c, xr, xi, L, K, inverse != 0, &yr, &yi)) != TG_OK)
        return s;
    tg_tensor *parts[2] = {tg_unsqueeze(tg_transpose(yr, axis, r - 2), r - 1),
                           tg_unsqueeze(tg_transpose(yi, axis, r - 2), r - 1)};
    if (!parts[0] || !parts[1])
        return tg_last_status();
    return misc_done(c, onnx_as(tg_concat(2, parts, r - 1), tg_dtype_of(x)));
}

/* ---- STFT(onesided): signal [B, N, 1 or 2], frame_step, window, frame_length ------------
 * The frames gathered at constant positions ([F, L]: f * step + l), times
 * the window, each transformed over its L samples as DFT does. */
tg_status misc_stft(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "signal");
    int64_t onesided;
    double step, flen = -1;
    tg_status s = x ? oa_int(c, "onesided", 1, &onesided) : tg_last_status();
    if (s == TG_OK)
        s = oi_scalar(c, 1, "frame_step", &step);
    if (s == TG_OK && c->n_in > 3 && c->in[3])
        s = oi_scalar(c, 3, "frame_length", &flen);
    if (s != TG_OK)
        return s;
    tg_tensor *win = c->n_in > 2 ? c->in[2] : NULL;
    const int64_t *xs = tg_shape(x);
    if (tg_ndim(x) != 3 || (xs[2] != 1 && xs[2] != 2) || !tg_dtype_is_float(tg_dtype_of(x)))
        return onnx_err(c, TG_ERR_IO, "signal should be float [batch, length, 1 or 2]");
    if (win && (tg_ndim(win) != 1 || !tg_dtype_is_float(tg_dtype_of(win))))
        return onnx_err(c, TG_ERR_IO, "window should be a float vector");
    int64_t L = win ? tg_shape(win)[0] : (int64_t)flen;
    if ((!win && flen < 0) || (win && flen >= 0 && (int64_t)flen != L))
        return onnx_err(c, TG_ERR_IO, "frame_length and the window's length should agree "
                        "(one of them given)");
    if (L < 1 || L > DFT_MAX_LENGTH || L > xs[1] || !(step >= 1 && step <= (double)xs[1]))
        return onnx_err(c, TG_ERR_IO, "frames of %lld samples every %g should fit the "
                        "signal's %lld (at most %d per frame)", (long long)L, step,
                        (long long)xs[1], DFT_MAX_LENGTH);
    bool complex_in = xs[2] == 2;
    if (onesided && complex_in)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "onesided is for real signals");
    int64_t B = xs[0], st = (int64_t)step, F = (xs[1] - L) / st + 1, K = onesided ? L / 2 + 1 : L;
    if ((s = onnx_check_numel(c, 3, (int64_t[]){B, F, L}, "the frames")) != TG_OK)
        return s;
    int64_t *pos = onnx_tmp_alloc(c, (size_t)(F * L) * sizeof *pos);
    if (!pos)
        return tg_last_status();
    for (int64_t f = 0; f < F; f++)
        for (int64_t l = 0; l < L; l++)
            pos[f * L + l] = f * st + l;
    tg_tensor *idx = misc_int64s(pos, F * L);
    tg_tensor *parts[2] = {NULL, NULL};
    for (int p = 0; p < (complex_in ? 2 : 1); p++) {
        tg_tensor *v = tg_reshape(tg_slice(x, 2, p, p + 1, 1), 2, (int64_t[]){B, xs[1]});
        v = tg_reshape(tg_index_select(onnx_as(v, TG_FLOAT64), 1, idx), 3,
                       (int64_t[]){B, F, L});
        parts[p] = win ? tg_mul(v, onnx_as(win, TG_FLOAT64)) : v;
    }
    tg_tensor *yr, *yi;
    if ((s = dft_last(c, parts[0], parts[1], L, K, false, &yr, &yi)) != TG_OK)
        return s;
    tg_tensor *out[2] = {tg_unsqueeze(yr, 3), tg_unsqueeze(yi, 3)};
    if (!out[0] || !out[1])
        return tg_last_status();
    return misc_done(c, onnx_as(tg_concat(2, out, 3), tg_dtype_of(x)));
}

/* ---- MelWeightMatrix(output_datatype): num_mel_bins, dft_length, sample_rate,
 *      lower_edge_hertz, upper_edge_hertz ------------------------------------------------
 * [dft_length / 2 + 1, num_mel_bins] triangular filters, computed at
 * import as ONNX's reference does (mel = 2595 log10(1 + hz / 700), the
 * range cut into num_mel_bins + 2 steps, the edges floored to bins). */
static tg_status mel_input(onnx_ictx *c, int i, const char *what, double *out)
{
    tg_tensor *t = misc_value_req(c, i, what, "the output's shape depends on it");
    if (!t)
        return tg_last_status();
    if (tg_numel(t) != 1)
        return onnx_err(c, TG_ERR_IO, "%s should have one element", what);
    return tg_copy_to(t, TG_FLOAT64, out);
}

tg_status misc_mel_weight_matrix(onnx_ictx *c)
{
    static const char *const names[5] = {"num_mel_bins", "dft_length", "sample_rate",
                                         "lower_edge_hertz", "upper_edge_hertz"};
    double v[5];
    int64_t out_type;
    tg_dtype dt;
    tg_status s = TG_OK;
    for (int i = 0; i < 5 && s == TG_OK; i++)
        s = mel_input(c, i, names[i], &v[i]);
    if (s == TG_OK)
        s = out_datatype(c, &out_type, &dt);
    if (s != TG_OK)
        return s;
    if (!(v[0] >= 1 && v[0] <= 65536 && v[1] >= 1 && v[1] <= 1 << 20 && v[2] > 0 &&
          v[3] >= 0 && v[4] >= v[3] && isfinite(v[4])))
        return onnx_err(c, TG_ERR_IO, "num_mel_bins should be in [1, 65536], dft_length in "
                        "[1, 2^20], sample_rate positive, 0 <= lower_edge_hertz <= "
                        "upper_edge_hertz");
    int64_t mels = (int64_t)v[0], bins = (int64_t)v[1] / 2 + 1;
    int64_t shape[2] = {bins, mels};
    if ((s = onnx_check_numel(c, 2, shape, "the output")) != TG_OK)
        return s;
    int64_t *edge = onnx_tmp_alloc(c, (size_t)(mels + 2) * sizeof *edge);
    double *w = edge ? onnx_tmp_alloc(c, (size_t)(bins * mels) * sizeof *w) : NULL;
    if (!w)
        return tg_last_status();
    double lo = 2595 * log10(1 + v[3] / 700), hi = 2595 * log10(1 + v[4] / 700);
    double step = (hi - lo) / (double)(mels + 2);
    for (int64_t i = 0; i < mels + 2; i++) {
        double hz = 700 * (pow(10, ((double)i * step + lo) / 2595) - 1);
        edge[i] = (int64_t)floor(((double)(int64_t)v[1] + 1) * hz / v[2]);
        if (edge[i] < 0 || edge[i] >= bins)
            return onnx_err(c, TG_ERR_IO, "upper_edge_hertz %g puts a filter edge at bin "
                            "%lld, past the %lld spectrogram bins", v[4], (long long)edge[i],
                            (long long)bins);
    }
    for (int64_t j = 0; j < bins * mels; j++)
        w[j] = 0;
    for (int64_t i = 0; i < mels; i++) {
        int64_t l = edge[i], m = edge[i + 1], h = edge[i + 2];
        if (m == l)
            w[m * mels + i] = 1;
        for (int64_t j = l; m > l && j <= m; j++)
            w[j * mels + i] = (double)(j - l) / (double)(m - l);
        for (int64_t j = m; h > m && j < h; j++)
            w[j * mels + i] = (double)(h - j) / (double)(h - m);
    }
    int tok = onnx_eager_begin();
    tg_tensor *y = onnx_as(tg_from_data(TG_FLOAT64, 2, shape, w), dt);
    onnx_eager_end(tok);
    return misc_done(c, y);
}
