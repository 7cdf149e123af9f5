/* The nn module object model: named parameters, buffers and children,
 * forward dispatch, train/eval, lookups by dotted name and freeing. */
#include "nn/module.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

tg_module *tg__module_make(const tg_module_type *type, void *cfg)
{
    tg_module *m = calloc(1, sizeof *m);
    if (!m) {
        free(cfg);
        return tg__error_null(TG_ERR_NOMEM, "%s: out of memory", type->kind);
    }
    m->type = type;
    m->cfg = cfg;
    m->training = true;
    return m;
}

tg_module *tg_module_new(const char *kind, tg_module_forward_fn forward,
                         void *user, void (*user_free)(void *))
{
    if (!kind || !*kind)
        return tg__error_null(TG_ERR_ARG, "tg_module_new: kind is empty");
    tg_module *m = calloc(1, sizeof *m);
    char *k = dup_str(kind);
    if (!m || !k) {
        free(m);
        free(k);
        return tg__error_null(TG_ERR_NOMEM, "tg_module_new: out of memory");
    }
    m->custom_kind = k;
    m->custom_forward = forward;
    m->user = user;
    m->user_free = user_free;
    m->training = true;
    return m;
}

void *tg_module_user(const tg_module *m) { return m ? m->user : NULL; }

static void free_slots(tg_nn_slot *s, int n)
{
    for (int i = 0; i < n; i++) {
        free(s[i].name);
        tg_release(s[i].t);
    }
    free(s);
}

void tg_module_free(tg_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_children; i++) {
        free(m->children[i].name);
        tg_module_free(m->children[i].m);
    }
    free(m->children);
    free_slots(m->params, m->n_params);
    free_slots(m->buffers, m->n_buffers);
    if (m->user_free)
        m->user_free(m->user);
    free(m->custom_kind);
    free(m->cfg);
    free(m);
}

const char *tg_module_kind(const tg_module *m)
{
    if (!m)
        return NULL;
    return m->type ? m->type->kind : m->custom_kind;
}

/* ---- registration ------------------------------------------------------ */

static bool name_taken(const tg_module *m, const char *name)
{
    for (int i = 0; i < m->n_params; i++)
        if (!strcmp(m->params[i].name, name))
            return true;
    for (int i = 0; i < m->n_buffers; i++)
        if (!strcmp(m->buffers[i].name, name))
            return true;
    for (int i = 0; i < m->n_children; i++)
        if (!strcmp(m->children[i].name, name))
            return true;
    return false;
}

/* the checks every kind of registration shares */
static tg_status check_name(const char *fn, const tg_module *m,
                            const char *name)
{
    if (!m)
        return tg__error(TG_ERR_ARG, "%s: module is NULL", fn);
    if (!name || !*name)
        return tg__error(TG_ERR_ARG, "%s: name is empty", fn);
    if (strchr(name, '.'))
        return tg__error(TG_ERR_ARG, "%s: name '%s' must not contain '.'", fn,
                         name);
    if (name_taken(m, name))
        return tg__error(TG_ERR_ARG, "%s: duplicate name '%s' in %s", fn, name,
                         tg_module_kind(m));
    return TG_OK;
}

static tg_status push_slot(const char *fn, tg_nn_slot **slots, int *n, int *cap,
                           const char *name, tg_tensor *t)
{
    if (!TG_GROW(*slots, *cap, *n + 1))
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", fn);
    tg_nn_slot *s = *slots;
    char *nm = dup_str(name);
    if (!nm)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", fn);
    s[*n].name = nm;
    s[*n].t = tg_retain(t);
    (*n)++;
    return TG_OK;
}

tg_status tg_module_add_parameter(tg_module *m, const char *name, tg_tensor *t)
{
    const char *fn = "tg_module_add_parameter";
    tg_status s = check_name(fn, m, name);
    if (s != TG_OK)
        return s;
    if (!t)
        return tg__error(TG_ERR_ARG, "%s: tensor '%s' is NULL", fn, name);
    if (!tg_dtype_is_float(t->dtype))
        return tg__error(TG_ERR_DTYPE, "%s: parameter '%s' must be floating "
                         "point, got %s", fn, name, tg_dtype_name(t->dtype));
    if (t->grad_fn)
        return tg__error(TG_ERR_AUTOGRAD, "%s: parameter '%s' must be a leaf, "
                         "not the result of '%s' (tg_detach it first)", fn,
                         name, tg_grad_fn_name(t));
    s = push_slot(fn, &m->params, &m->n_params, &m->cap_params, name, t);
    if (s == TG_OK)
        t->requires_grad = true;
    return s;
}

tg_status tg_module_add_buffer(tg_module *m, const char *name, tg_tensor *t)
{
    const char *fn = "tg_module_add_buffer";
    tg_status s = check_name(fn, m, name);
    if (s != TG_OK)
        return s;
    if (!t)
        return tg__error(TG_ERR_ARG, "%s: tensor '%s' is NULL", fn, name);
    return push_slot(fn, &m->buffers, &m->n_buffers, &m->cap_buffers, name, t);
}

tg_status tg_module_add(tg_module *m, const char *name, tg_module *child)
{
    const char *fn = "tg_module_add";
    if (!child) { /* a failed constructor: keep its error */
        tg_status s = tg__error_is_set() ? tg_last_status() : TG_ERR_ARG;
        if (!tg__error_is_set())
            tg__error(s, "%s: child '%s' is NULL", fn, name ? name : "");
        return s;
    }
    /* a module that has an owner already must not be freed here */
    if (child == m || child->has_parent)
        return tg__error(TG_ERR_ARG, "%s: '%s' %s", fn, name ? name : "",
                         child == m ? "cannot be its own child"
                                    : "already belongs to a container");
    tg_status s = check_name(fn, m, name);
    char *nm = NULL;
    if (s == TG_OK) {
        bool grown = TG_GROW(m->children, m->cap_children, m->n_children + 1);
        nm = dup_str(name);
        if (!grown || !nm)
            s = tg__error(TG_ERR_NOMEM, "%s: out of memory", fn);
    }
    if (s != TG_OK) {
        free(nm);
        tg_module_free(child); /* the parent owns it whatever happens */
        return s;
    }
    m->children[m->n_children].name = nm;
    m->children[m->n_children].m = child;
    m->n_children++;
    child->has_parent = true;
    return TG_OK;
}

/* ---- forward ----------------------------------------------------------- */

tg_tensor *tg__module_run(tg_module *m, tg_tensor *x)
{
    if (m->type)
        return m->type->forward(m, x);
    if (!m->custom_forward)
        return tg__error_null(TG_ERR_UNSUPPORTED, "%s: module has no forward",
                              m->custom_kind);
    /* custom code gets a scope, so its intermediates are freed */
    tg_scope_begin();
    tg_tensor *y = tg_keep(m->custom_forward(m, x));
    tg_scope_end();
    if (!y && !tg__error_is_set())
        tg__error(TG_ERR_ARG, "%s: forward returned NULL", m->custom_kind);
    return y;
}

tg_tensor *tg_module_forward(tg_module *m, tg_tensor *x)
{
    if (!m)
        return tg__error_null(TG_ERR_ARG, "tg_module_forward: module is NULL");
    if (!x) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "%s: input is NULL", tg_module_kind(m));
        return NULL;
    }
    int old = tg__scope_suspend();
    tg_tensor *y = tg__module_run(m, x);
    tg__scope_resume(old);
    return tg__publish(y);
}

/* ---- modes and bulk updates ------------------------------------------------ */

void tg_module_train(tg_module *m, bool training)
{
    if (!m)
        return;
    m->training = training;
    for (int i = 0; i < m->n_children; i++)
        tg_module_train(m->children[i].m, training);
}

bool tg_module_is_training(const tg_module *m) { return m && m->training; }

void tg_module_zero_grad(tg_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_params; i++)
        tg_zero_grad(m->params[i].t);
    for (int i = 0; i < m->n_children; i++)
        tg_module_zero_grad(m->children[i].m);
}

tg_status tg_module_requires_grad(tg_module *m, bool requires_grad)
{
    if (!m)
        return tg__error(TG_ERR_ARG, "tg_module_requires_grad: module is NULL");
    for (int i = 0; i < m->n_params; i++)
        m->params[i].t->requires_grad = requires_grad;
    for (int i = 0; i < m->n_children; i++)
        tg_module_requires_grad(m->children[i].m, requires_grad);
    return TG_OK;
}

/* replaces each floating-point tensor of slots by its cast to dt */
static tg_status cast_slots(tg_nn_slot *slots, int n, tg_dtype dt)
{
    for (int i = 0; i < n; i++) {
        tg_tensor *t = slots[i].t;
        if (!tg_dtype_is_float(t->dtype) || t->dtype == dt)
            continue;
        int old = tg__scope_suspend();
        tg_no_grad_begin();
        tg_tensor *c = tg_cast(t, dt); /* a new tensor: the dtype differs */
        tg_no_grad_end();
        tg__scope_resume(old);
        if (!c)
            return tg_last_status();
        c->requires_grad = t->requires_grad;
        slots[i].t = c;
        tg_release(t);
    }
    return TG_OK;
}

tg_status tg_module_to_dtype(tg_module *m, tg_dtype dt)
{
    if (!m)
        return tg__error(TG_ERR_ARG, "tg_module_to_dtype: module is NULL");
    if (dt != TG_FLOAT32 && dt != TG_FLOAT64)
        return tg__error(TG_ERR_DTYPE, "tg_module_to_dtype: expected float32 "
                         "or float64, got %s", tg_dtype_is_valid((int)dt)
                         ? tg_dtype_name(dt) : "an invalid dtype");
    tg_status s = cast_slots(m->params, m->n_params, dt);
    if (s == TG_OK)
        s = cast_slots(m->buffers, m->n_buffers, dt);
    for (int i = 0; s == TG_OK && i < m->n_children; i++)
        s = tg_module_to_dtype(m->children[i].m, dt);
    return s;
}

/* ---- lookups ------------------------------------------------------------- */

int tg_module_num_children(const tg_module *m) { return m ? m->n_children : 0; }

tg_module *tg_module_child_at(const tg_module *m, int i)
{
    return m && i >= 0 && i < m->n_children ? m->children[i].m : NULL;
}

const char *tg_module_child_name(const tg_module *m, int i)
{
    return m && i >= 0 && i < m->n_children ? m->children[i].name : NULL;
}

/* the direct child named by the first len characters of name */
static tg_module *child_n(const tg_module *m, const char *name, size_t len)
{
    for (int i = 0; i < m->n_children; i++)
        if (strlen(m->children[i].name) == len &&
            !strncmp(m->children[i].name, name, len))
            return m->children[i].m;
    return NULL;
}

/* walks every dotted component but the last; returns the module holding
 * it and points *leaf at the last component, or NULL */
static const tg_module *walk(const tg_module *m, const char *path,
                             const char **leaf)
{
    const char *dot;
    while (m && (dot = strchr(path, '.')) != NULL) {
        m = child_n(m, path, (size_t)(dot - path));
        path = dot + 1;
    }
    *leaf = path;
    return m;
}

tg_module *tg_module_child(const tg_module *m, const char *path)
{
    if (!m || !path)
        return tg__error_null(TG_ERR_ARG, "tg_module_child: NULL argument");
    const char *leaf;
    const tg_module *p = walk(m, path, &leaf);
    tg_module *c = p ? child_n(p, leaf, strlen(leaf)) : NULL;
    if (!c)
        return tg__error_null(TG_ERR_INDEX, "tg_module_child: no submodule "
                              "'%s' in %s", path, tg_module_kind(m));
    return c;
}

tg_tensor *tg__module_own(const tg_module *m, const char *name)
{
    for (int i = 0; i < m->n_params; i++)
        if (!strcmp(m->params[i].name, name))
            return m->params[i].t;
    for (int i = 0; i < m->n_buffers; i++)
        if (!strcmp(m->buffers[i].name, name))
            return m->buffers[i].t;
    return NULL;
}

/* the parameter/buffer slot for a full dotted name, or NULL */
static tg_nn_slot *find_slot(const tg_module *m, const char *name)
{
    const char *leaf;
    const tg_module *p = walk(m, name, &leaf);
    if (!p)
        return NULL;
    for (int i = 0; i < p->n_params; i++)
        if (!strcmp(p->params[i].name, leaf))
            return &p->params[i];
    for (int i = 0; i < p->n_buffers; i++)
        if (!strcmp(p->buffers[i].name, leaf))
            return &p->buffers[i];
    return NULL;
}

tg_tensor *tg_module_tensor(const tg_module *m, const char *name)
{
    if (!m || !name)
        return tg__error_null(TG_ERR_ARG, "tg_module_tensor: NULL argument");
    tg_nn_slot *s = find_slot(m, name);
    if (!s)
        return tg__error_null(TG_ERR_INDEX, "tg_module_tensor: no parameter or "
                              "buffer '%s' in %s", name, tg_module_kind(m));
    return s->t;
}

int64_t tg_module_num_parameters(const tg_module *m)
{
    tg_named_tensor *list;
    int n = tg_module_parameters(m, &list);
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += list[i].tensor->numel;
    tg_named_tensors_free(list); /* NULL on failure */
    return n >= 0 ? total : -1;
}

/* ---- named listings ---------------------------------------------------------- */

typedef struct lister {
    tg_named_tensor *items; /* names malloc'd one by one while collecting */
    int n, cap;
    bool buffers, dedup;
    bool failed;
} lister;

static void list_push(lister *l, const char *prefix, const char *name,
                      tg_tensor *t, bool is_buffer)
{
    if (l->failed)
        return;
    if (l->dedup) /* a shared (tied) parameter is listed once, as in PyTorch */
        for (int i = 0; i < l->n; i++)
            if (l->items[i].tensor == t)
                return;
    if (!TG_GROW(l->items, l->cap, l->n + 1)) {
        l->failed = true;
        return;
    }
    size_t a = strlen(prefix), b = strlen(name);
    char *full = malloc(a + b + 1);
    if (!full) {
        l->failed = true;
        return;
    }
    memcpy(full, prefix, a);
    memcpy(full + a, name, b + 1);
    l->items[l->n++] = (tg_named_tensor){full, t, is_buffer};
}

static void list_module(lister *l, const tg_module *m, const char *prefix)
{
    for (int i = 0; i < m->n_params; i++)
        list_push(l, prefix, m->params[i].name, m->params[i].t, false);
    if (l->buffers)
        for (int i = 0; i < m->n_buffers; i++)
            list_push(l, prefix, m->buffers[i].name, m->buffers[i].t, true);
    for (int i = 0; i < m->n_children && !l->failed; i++) {
        size_t a = strlen(prefix), b = strlen(m->children[i].name);
        char *p = malloc(a + b + 2);
        if (!p) {
            l->failed = true;
            return;
        }
        memcpy(p, prefix, a);
        memcpy(p + a, m->children[i].name, b);
        p[a + b] = '.';
        p[a + b + 1] = '\0';
        list_module(l, m->children[i].m, p);
        free(p);
    }
}

/* packs the collected entries and their names into one block */
static int list_finish(lister *l, tg_named_tensor **out)
{
    size_t chars = 0;
    for (int i = 0; i < l->n; i++)
        chars += strlen(l->items[i].name) + 1;
    tg_named_tensor *block = NULL;
    if (!l->failed)
        block = malloc((size_t)(l->n + 1) * sizeof *block + chars);
    if (block) {
        char *p = (char *)(block + l->n + 1);
        for (int i = 0; i < l->n; i++) {
            size_t len = strlen(l->items[i].name) + 1;
            memcpy(p, l->items[i].name, len);
            block[i] = l->items[i];
            block[i].name = p;
            p += len;
        }
        block[l->n] = (tg_named_tensor){NULL, NULL, false}; /* terminator */
    }
    for (int i = 0; i < l->n; i++)
        free((char *)l->items[i].name);
    free(l->items);
    if (!block) {
        *out = NULL;
        tg__error(TG_ERR_NOMEM, "tg_module_state: out of memory");
        return -1;
    }
    *out = block;
    return l->n;
}

static int list_all(const char *fn, const tg_module *m, tg_named_tensor **out,
                    bool buffers)
{
    if (!out || !m) {
        if (out)
            *out = NULL;
        tg__error(TG_ERR_ARG, "%s: %s is NULL", fn, out ? "module" : "out");
        return -1;
    }
    lister l = {.buffers = buffers, .dedup = !buffers};
    list_module(&l, m, "");
    return list_finish(&l, out);
}

int tg_module_parameters(const tg_module *m, tg_named_tensor **out)
{
    return list_all("tg_module_parameters", m, out, false);
}

int tg_module_state(const tg_module *m, tg_named_tensor **out)
{
    return list_all("tg_module_state", m, out, true);
}

void tg_named_tensors_free(tg_named_tensor *list) { free(list); }

/* ---- loading state ------------------------------------------------------------ */

static tg_status check_state(tg_module *m, int n, const tg_named_tensor *state,
                             bool strict)
{
    const char *fn = "tg_module_load_state";
    for (int i = 0; i < n; i++) {
        if (!state[i].name || !state[i].tensor)
            return tg__error(TG_ERR_ARG, "%s: entry %d has a NULL name or "
                             "tensor", fn, i);
        tg_nn_slot *s = find_slot(m, state[i].name);
        if (!s) {
            if (strict)
                return tg__error(TG_ERR_ARG, "%s: unexpected key '%s' (not a "
                                 "parameter or buffer of this %s)", fn,
                                 state[i].name, tg_module_kind(m));
            continue;
        }
        const tg_tensor *src = state[i].tensor, *dst = s->t;
        if (!tg__shape_eq(src->ndim, src->shape, dst->ndim, dst->shape)) {
            char a[160], b[160];
            return tg__error(TG_ERR_SHAPE, "%s: '%s' has shape %s in the "
                             "state but %s in the module", fn, state[i].name,
                             tg_shape_str(src->ndim, src->shape, a, sizeof a),
                             tg_shape_str(dst->ndim, dst->shape, b, sizeof b));
        }
    }
    if (!strict)
        return TG_OK;
    tg_named_tensor *all;
    int total = tg_module_state(m, &all);
    if (total < 0)
        return tg_last_status();
    tg_status st = TG_OK;
    for (int j = 0; j < total && st == TG_OK; j++) {
        bool found = false;
        for (int i = 0; i < n && !found; i++)
            found = !strcmp(state[i].name, all[j].name);
        if (!found)
            st = tg__error(TG_ERR_ARG, "%s: missing key '%s'", fn, all[j].name);
    }
    tg_named_tensors_free(all);
    return st;
}

tg_status tg_module_load_state(tg_module *m, int n,
                               const tg_named_tensor *state, bool strict)
{
    if (!m || (n > 0 && !state) || n < 0)
        return tg__error(TG_ERR_ARG, "tg_module_load_state: bad arguments");
    tg_status s = check_state(m, n, state, strict);
    if (s != TG_OK)
        return s; /* nothing was changed */
    tg_no_grad_begin();
    for (int i = 0; i < n && s == TG_OK; i++) {
        tg_nn_slot *slot = find_slot(m, state[i].name);
        if (slot)
            s = tg_copy_(slot->t, state[i].tensor);
    }
    tg_no_grad_end();
    return s;
}

/* ---- description ------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool failed;
} sbuf;

static void put(sbuf *b, const char *s)
{
    size_t len = strlen(s);
    if (b->failed)
        return;
    if (!TG_GROW(b->p, b->cap, b->n + len + 1)) {
        b->failed = true;
        return;
    }
    memcpy(b->p + b->n, s, len + 1);
    b->n += len;
}

static void indent(sbuf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        put(b, "  ");
}

static void describe(sbuf *b, const tg_module *m, int depth)
{
    char args[256] = "";
    if (m->type && m->type->describe)
        m->type->describe(m, args, sizeof args);
    put(b, tg_module_kind(m));
    put(b, "(");
    put(b, args);
    if (m->n_children) {
        put(b, "\n");
        for (int i = 0; i < m->n_children; i++) {
            indent(b, depth + 1);
            put(b, "(");
            put(b, m->children[i].name);
            put(b, "): ");
            describe(b, m->children[i].m, depth + 1);
            put(b, "\n");
        }
        indent(b, depth);
    }
    put(b, ")");
}

char *tg_module_to_string(const tg_module *m)
{
    if (!m)
        return tg__error_null(TG_ERR_ARG, "tg_module_to_string: module is NULL");
    sbuf b = {0};
    describe(&b, m, 0);
    if (b.failed) {
        free(b.p);
        return tg__error_null(TG_ERR_NOMEM, "tg_module_to_string: out of memory");
    }
    return b.p;
}

/* ---- helpers for the built-in layers --------------------------------------------- */

tg_tensor *tg__module_full(tg_dtype dt, int ndim, const int64_t *shape,
                           double value)
{
    int old = tg__scope_suspend();
    tg_tensor *t = tg_full(dt, ndim, shape, value);
    tg__scope_resume(old);
    return t;
}

tg_status tg__module_add_uniform(tg_module *m, const char *name, int ndim,
                                 const int64_t *shape, double bound,
                                 tg_generator *g)
{
    int old = tg__scope_suspend();
    tg_tensor *t = tg_rand_uniform(g, TG_FLOAT32, ndim, shape, -bound, bound);
    tg__scope_resume(old);
    if (!t)
        return tg_last_status();
    tg_status s = tg_module_add_parameter(m, name, t);
    tg_release(t);
    return s;
}
