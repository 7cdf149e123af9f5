/* tg_einsum: Einstein summation (torch.einsum, ONNX Einsum), composed from
 * views, index_select (diagonals), sum and batched matmul, so gradients
 * and forward-mode rules come from those ops. The operands are contracted
 * left to right: each pair is permuted to [batch, free, contracted] and
 * [batch, contracted, free], reshaped to 3-D and multiplied; a label that
 * no later operand and not the output needs is summed away as soon as
 * only one operand holds it. Labels are a-z and A-Z; "..." stands for the
 * leading dims an operand does not name (right-aligned and broadcast
 * across operands, as in PyTorch); without "->" the output is the
 * ellipsis dims then the labels used once, in alphabetical order. */
#include "ops/nn_util.h"

#include <stdlib.h>
#include <string.h>

#define N_LETTERS 52
#define N_LABELS (N_LETTERS + TG_MAX_DIMS) /* letters, then ellipsis dims */
static const char LETTERS[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

typedef struct term {
    int n;
    int lab[2 * TG_MAX_DIMS]; /* a pairwise product may briefly hold more */
} term;

static int letter_id(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return 26 + (ch - 'a');
    return -1;
}

/* one side of a term: [s, e) of the equation without spaces; ell_dims is
 * the number of dims "..." covers, ell_first the label of its first */
static tg_status parse_term(const char *s, const char *e, int ell_dims, int ell_first,
                            term *t, const char *eq)
{
    t->n = 0;
    bool ell = false;
    while (s < e) {
        if (*s == '.') {
            if (ell || e - s < 3 || s[1] != '.' || s[2] != '.')
                return tg__error(TG_ERR_ARG, "einsum: '%s': '.' is only allowed in one "
                                 "ellipsis '...' per term", eq);
            ell = true;
            for (int j = 0; j < ell_dims; j++)
                t->lab[t->n++] = ell_first + j;
            s += 3;
            continue;
        }
        int id = letter_id(*s);
        if (id < 0)
            return tg__error(TG_ERR_ARG, "einsum: '%s': invalid subscript '%c' (only a-z and "
                             "A-Z)", eq, *s);
        if (t->n >= TG_MAX_DIMS)
            return tg__error(TG_ERR_ARG, "einsum: '%s': a term has more than %d subscripts",
                             eq, TG_MAX_DIMS);
        t->lab[t->n++] = id;
        s++;
    }
    return TG_OK;
}

/* letters and whether "..." occurs in [s, e) */
static void count_term(const char *s, const char *e, int *letters, bool *ell)
{
    *letters = 0;
    *ell = false;
    for (; s < e; s++) {
        *letters += letter_id(*s) >= 0;
        *ell = *ell || *s == '.';
    }
}

/* sums x over the axes whose label keep[] does not hold */
static tg_tensor *sum_unkept(tg_tensor *x, term *t, const bool *keep)
{
    int axes[TG_MAX_DIMS], n = 0, m = 0;
    for (int i = 0; i < t->n; i++) {
        if (!keep[t->lab[i]])
            axes[n++] = i;
        else
            t->lab[m++] = t->lab[i];
    }
    t->n = m;
    return n ? tg_sum(x, n, axes, false) : x;
}

/* the diagonal over every label that occurs twice in one operand */
static tg_tensor *take_diagonals(tg_tensor *x, term *t, const char *eq)
{
    for (int p = 0; x && p < t->n; p++) {
        for (int q = p + 1; x && q < t->n; q++) {
            if (t->lab[p] != t->lab[q])
                continue;
            int64_t n = tg_shape(x)[p];
            if (tg_shape(x)[q] != n)
                return tg__error_null(TG_ERR_SHAPE, "einsum: '%s': subscript %c repeated "
                                      "for dims of sizes %lld and %lld", eq,
                                      LETTERS[t->lab[p] % N_LETTERS], (long long)n,
                                      (long long)tg_shape(x)[q]);
            /* move p and q last, flatten them, keep elements k (n + 1) */
            int perm[TG_MAX_DIMS], m = 0, lab[TG_MAX_DIMS];
            for (int i = 0; i < t->n; i++)
                if (i != p && i != q) {
                    lab[m] = t->lab[i];
                    perm[m++] = i;
                }
            perm[m] = p;
            perm[m + 1] = q;
            int64_t shape[TG_MAX_DIMS];
            for (int i = 0; i < m; i++)
                shape[i] = tg_shape(x)[perm[i]];
            shape[m] = n * n;
            int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
            if (!idx)
                return tg__error_null(TG_ERR_NOMEM, "einsum: out of memory");
            for (int64_t k = 0; k < n; k++)
                idx[k] = k * (n + 1);
            tg_tensor *it = tg_from_data(TG_INT64, 1, &n, idx);
            free(idx);
            x = tg_index_select(tg_reshape(tg_permute(x, perm), m + 1, shape), m, it);
            lab[m] = t->lab[p];
            t->n = m + 1;
            memcpy(t->lab, lab, sizeof(int) * (size_t)(m + 1));
            p = -1; /* start over: the labels moved */
            break;
        }
    }
    return x;
}

/* x (labels t) permuted to the label groups g[0], g[1], g[2] (each a list
 * of labels) and reshaped to [prod g0, prod g1, prod g2] */
static tg_tensor *to_3d(tg_tensor *x, const term *t, const term *g, const int64_t *size)
{
    int perm[TG_MAX_DIMS], k = 0;
    int64_t s3[3] = {1, 1, 1};
    for (int gi = 0; gi < 3; gi++)
        for (int j = 0; j < g[gi].n; j++) {
            for (int i = 0; i < t->n; i++)
                if (t->lab[i] == g[gi].lab[j])
                    perm[k++] = i;
            s3[gi] *= size[g[gi].lab[j]];
        }
    return tg_reshape(tg_permute(x, perm), 3, s3);
}

static bool has(const term *t, int lab)
{
    for (int i = 0; i < t->n; i++)
        if (t->lab[i] == lab)
            return true;
    return false;
}

/* a (labels ta) times b (labels tb): labels both hold and `later` needs
 * are batch dims, the others both hold are contracted */
static tg_tensor *contract(tg_tensor *a, term *ta, tg_tensor *b, term *tb, const bool *later,
                           const int64_t *size, const char *eq)
{
    bool keep_a[N_LABELS], keep_b[N_LABELS];
    for (int l = 0; l < N_LABELS; l++) {
        keep_a[l] = later[l] || has(tb, l);
        keep_b[l] = later[l] || has(ta, l);
    }
    a = sum_unkept(a, ta, keep_a);
    b = sum_unkept(b, tb, keep_b);
    if (!a || !b)
        return NULL;
    term ga[3] = {{0}}, gb[3] = {{0}}; /* [batch, free, contracted] / [batch, contracted, free] */
    for (int i = 0; i < ta->n; i++) {
        int l = ta->lab[i];
        term *g = !has(tb, l) ? &ga[1] : later[l] ? &ga[0] : &ga[2];
        g->lab[g->n++] = l;
    }
    for (int i = 0; i < tb->n; i++)
        if (!has(ta, tb->lab[i]))
            gb[2].lab[gb[2].n++] = tb->lab[i];
    gb[0] = ga[0];
    gb[1] = ga[2];
    term out = {0};
    for (int gi = 0; gi < 3; gi++) {
        const term *g = gi == 0 ? &ga[0] : gi == 1 ? &ga[1] : &gb[2];
        for (int j = 0; j < g->n; j++)
            out.lab[out.n++] = g->lab[j];
    }
    if (out.n > TG_MAX_DIMS)
        return tg__error_null(TG_ERR_SHAPE, "einsum: '%s': an intermediate product has %d "
                              "dims, more than %d", eq, out.n, TG_MAX_DIMS);
    tg_tensor *y = tg_matmul(to_3d(a, ta, ga, size), to_3d(b, tb, gb, size));
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < out.n; i++)
        shape[i] = size[out.lab[i]];
    *ta = out;
    return tg_reshape(y, out.n, shape);
}

/* sizes per label (broadcasting size 1), then every operand expanded to them */
static tg_status label_sizes(int n, tg_tensor **xs, const term *ts, int64_t *size,
                             const char *eq)
{
    for (int l = 0; l < N_LABELS; l++)
        size[l] = -1;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < ts[k].n; i++) {
            int64_t d = tg_shape(xs[k])[i], *s = &size[ts[k].lab[i]];
            if (*s == -1 || *s == 1)
                *s = d;
            else if (d != 1 && d != *s)
                return tg__error(TG_ERR_SHAPE, "einsum: '%s': operand %d has size %lld for "
                                 "subscript %d where another has %lld", eq, k, (long long)d,
                                 i, (long long)*s);
        }
    for (int k = 0; k < n; k++) {
        int64_t shape[TG_MAX_DIMS];
        bool differ = false;
        for (int i = 0; i < ts[k].n; i++) {
            shape[i] = size[ts[k].lab[i]];
            differ = differ || shape[i] != tg_shape(xs[k])[i];
        }
        if (differ && !(xs[k] = tg_expand(xs[k], ts[k].n, shape)))
            return tg_last_status();
    }
    return TG_OK;
}

/* parses eq into the operands' terms and the output term */
static tg_status parse(const char *eq, int n, tg_tensor *const *inputs, term *ts, term *out)
{
    size_t len = strlen(eq);
    char *s = malloc(len + 1), *p = s;
    tg_status st = TG_OK;
    if (!s)
        return tg__error(TG_ERR_NOMEM, "einsum: out of memory");
    for (const char *c = eq; *c; c++)
        if (*c != ' ')
            *p++ = *c;
    *p = 0;
    char *arrow = strstr(s, "->"), *end = arrow ? arrow : p;
    for (char *c = s; c < p; c++)
        if (letter_id(*c) < 0 && *c != '.' && *c != ',' && !(arrow && c - arrow < 2 &&
                                                               c >= arrow)) {
            st = tg__error(TG_ERR_ARG, "einsum: '%s': invalid subscript '%c' (only a-z and "
                           "A-Z)", eq, *c);
            goto done;
        }
    const char *starts[64], *ends[64];
    int k = 0, ell_max = 0, ell_dims[64];
    for (char *c = s;; c++) {
        if (k < 64 && (c == s || c[-1] == ','))
            starts[k] = c;
        if (c == end || *c == ',') {
            if (k < 64)
                ends[k] = c;
            k++;
        }
        if (c == end)
            break;
    }
    if (k != n) {
        st = tg__error(TG_ERR_ARG, "einsum: '%s' has %d operand terms for %d operands", eq, k,
                       n);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        int letters;
        bool ell;
        count_term(starts[i], ends[i], &letters, &ell);
        int nd = tg_ndim(inputs[i]);
        ell_dims[i] = ell ? nd - letters : 0;
        if (ell_dims[i] < 0 || (!ell && letters != nd)) {
            char a[160];
            st = tg__error(TG_ERR_SHAPE, "einsum: '%s': operand %d has %d dims (shape %s) but "
                           "its term names %d", eq, i, nd,
                           tg_shape_str(nd, tg_shape(inputs[i]), a, sizeof a), letters);
            goto done;
        }
        ell_max = ell_dims[i] > ell_max ? ell_dims[i] : ell_max;
    }
    for (int i = 0; i < n && st == TG_OK; i++)
        st = parse_term(starts[i], ends[i], ell_dims[i],
                        N_LETTERS + ell_max - ell_dims[i], &ts[i], eq);
    if (st != TG_OK)
        goto done;
    int count[N_LABELS] = {0};
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ts[i].n; j++)
            count[ts[i].lab[j]]++;
    if (arrow) {
        if ((st = parse_term(arrow + 2, p, ell_max, N_LETTERS, out, eq)) != TG_OK)
            goto done;
        for (int j = 0; j < out->n; j++) {
            if (!count[out->lab[j]] && out->lab[j] < N_LETTERS) {
                st = tg__error(TG_ERR_ARG, "einsum: '%s': output subscript %c does not "
                               "appear in the inputs", eq, LETTERS[out->lab[j]]);
                goto done;
            }
            for (int q = 0; q < j; q++)
                if (out->lab[q] == out->lab[j]) {
                    st = tg__error(TG_ERR_ARG, "einsum: '%s': output subscript repeated", eq);
                    goto done;
                }
        }
    } else { /* the ellipsis dims, then the labels used once, sorted */
        out->n = 0;
        for (int j = 0; j < ell_max; j++)
            out->lab[out->n++] = N_LETTERS + j;
        for (int l = 0; l < N_LETTERS && out->n < TG_MAX_DIMS; l++)
            if (count[l] == 1)
                out->lab[out->n++] = l;
    }
done:
    free(s);
    return st;
}

tg_tensor *tg_einsum(const char *equation, int n, tg_tensor *const *inputs)
{
    if (!equation || !inputs)
        return tg__error_null(TG_ERR_ARG, "einsum: %s is NULL",
                              equation ? "the operand list" : "equation");
    if (n < 1 || n > 64)
        return tg__error_null(TG_ERR_ARG, "einsum: expected 1 to 64 operands, got %d", n);
    for (int i = 0; i < n; i++)
        if (!tg__nn_have("einsum", inputs[i], "an operand"))
            return NULL;
    term *ts = malloc((size_t)n * sizeof *ts);
    tg_tensor **xs = malloc((size_t)n * sizeof *xs);
    term out;
    tg_tensor *y = NULL;
    if (!ts || !xs) {
        tg__error(TG_ERR_NOMEM, "einsum: out of memory");
        goto fail;
    }
    if (parse(equation, n, inputs, ts, &out) != TG_OK)
        goto fail;
    TG_LOCAL_BEGIN();
    for (int i = 0; i < n; i++)
        xs[i] = take_diagonals(inputs[i], &ts[i], equation);
    int64_t size[N_LABELS];
    bool ok = true;
    for (int i = 0; i < n; i++)
        ok = ok && xs[i];
    if (ok && label_sizes(n, xs, ts, size, equation) == TG_OK) {
        /* later[l]: the output or an operand after the current pair needs l */
        bool later[N_LABELS];
        y = xs[0];
        term ty = ts[0];
        for (int i = 1; y && i <= n; i++) {
            for (int l = 0; l < N_LABELS; l++)
                later[l] = has(&out, l);
            for (int k = i + 1; k < n; k++)
                for (int j = 0; j < ts[k].n; j++)
                    later[ts[k].lab[j]] = true;
            if (i == n) {
                y = sum_unkept(y, &ty, later);
                break;
            }
            y = contract(y, &ty, xs[i], &ts[i], later, size, equation);
        }
        if (y) { /* into the output's order */
            int perm[TG_MAX_DIMS];
            for (int j = 0; j < out.n; j++)
                for (int i = 0; i < ty.n; i++)
                    if (ty.lab[i] == out.lab[j])
                        perm[j] = i;
            y = tg_permute(y, perm);
        }
    }
    y = tg_keep(y);
    tg_scope_end();
fail:
    free(ts);
    free(xs);
    return y;
}
