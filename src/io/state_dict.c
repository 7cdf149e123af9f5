/* State dicts: ordered named tensors plus string metadata, the in-memory
 * form of a checkpoint (see tg/io.h). Lookups are linear: checkpoints
 * hold at most thousands of entries and are read once. */
#include "core/tensor_impl.h"
#include "util/grow.h"
#include "io/io_impl.h"

#include <stdlib.h>
#include <string.h>

struct tg_state_dict {
    int n, cap_names, cap_tensors;
    char **names;
    tg_tensor **tensors;
    int n_meta, cap_keys, cap_values;
    char **keys, **values;
};

tg_state_dict *tg_state_dict_new(void)
{
    tg_state_dict *sd = calloc(1, sizeof *sd);
    if (!sd)
        return tg__error_null(TG_ERR_NOMEM, "tg_state_dict_new: out of memory");
    return sd;
}

void tg_state_dict_free(tg_state_dict *sd)
{
    if (!sd)
        return;
    for (int i = 0; i < sd->n; i++) {
        free(sd->names[i]);
        tg_release(sd->tensors[i]);
    }
    for (int i = 0; i < sd->n_meta; i++) {
        free(sd->keys[i]);
        free(sd->values[i]);
    }
    free(sd->names);
    free(sd->tensors);
    free(sd->keys);
    free(sd->values);
    free(sd);
}

/* the index of name among names[0..n) (tensor names or metadata keys), or -1 */
static int find(char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

tg_tensor *tg__state_dict_find(const tg_state_dict *sd, const char *name)
{
    int i = sd && name ? find(sd->names, sd->n, name) : -1;
    return i < 0 ? NULL : sd->tensors[i];
}

tg_status tg__state_dict_add_owned(tg_state_dict *sd, const char *name,
                                   tg_tensor *t)
{
    tg_status s = TG_OK;
    if (!sd || !name || !t)
        s = tg__error(TG_ERR_ARG, "tg_state_dict_add: %s is NULL",
                      !sd ? "the dict" : !name ? "the name" : "the tensor");
    else if (!tg__check_concrete("tg_state_dict_add", t)) /* symbolic: no data */
        s = tg_last_status();
    else if (!name[0] || strcmp(name, "__metadata__") == 0)
        s = tg__error(TG_ERR_ARG, "tg_state_dict_add: the name '%s' is not "
                      "allowed (empty or reserved)", name);
    else if (find(sd->names, sd->n, name) >= 0)
        s = tg__error(TG_ERR_ARG, "tg_state_dict_add: the name '%s' is already "
                      "in the dict", name);
    if (s == TG_OK && (!TG_GROW(sd->names, sd->cap_names, sd->n + 1) ||
                       !TG_GROW(sd->tensors, sd->cap_tensors, sd->n + 1)))
        s = tg__error(TG_ERR_NOMEM, "tg_state_dict_add: out of memory");
    char *copy = s == TG_OK ? strdup(name) : NULL;
    if (s == TG_OK && !copy)
        s = tg__error(TG_ERR_NOMEM, "tg_state_dict_add: out of memory");
    if (s != TG_OK) {
        tg_release(t);
        return s;
    }
    sd->names[sd->n] = copy;
    sd->tensors[sd->n] = t;
    sd->n++;
    return TG_OK;
}

tg_status tg_state_dict_add(tg_state_dict *sd, const char *name, tg_tensor *t)
{
    return tg__state_dict_add_owned(sd, name, t ? tg_retain(t) : NULL);
}

int tg_state_dict_size(const tg_state_dict *sd) { return sd ? sd->n : 0; }

static bool in_range(const char *fn, const tg_state_dict *sd, int i, int n)
{
    if (!sd) {
        tg__error(TG_ERR_ARG, "%s: the dict is NULL", fn);
        return false;
    }
    if (i < 0 || i >= n) {
        tg__error(TG_ERR_INDEX, "%s: index %d out of range [0, %d)", fn, i, n);
        return false;
    }
    return true;
}

const char *tg_state_dict_name(const tg_state_dict *sd, int i)
{
    return in_range("tg_state_dict_name", sd, i, sd ? sd->n : 0) ? sd->names[i] : NULL;
}

tg_tensor *tg_state_dict_tensor(const tg_state_dict *sd, int i)
{
    if (!in_range("tg_state_dict_tensor", sd, i, sd ? sd->n : 0))
        return NULL;
    return tg__publish(tg_retain(sd->tensors[i]));
}

tg_tensor *tg_state_dict_get(const tg_state_dict *sd, const char *name)
{
    if (!sd || !name)
        return tg__error_null(TG_ERR_ARG, "tg_state_dict_get: %s is NULL",
                              !sd ? "the dict" : "the name");
    tg_tensor *t = tg__state_dict_find(sd, name);
    if (!t)
        return tg__error_null(TG_ERR_ARG, "tg_state_dict_get: no tensor named "
                              "'%s' (the dict has %d)", name, sd->n);
    return tg__publish(tg_retain(t));
}

bool tg_state_dict_has(const tg_state_dict *sd, const char *name)
{
    return tg__state_dict_find(sd, name) != NULL;
}

/* ---- metadata ------------------------------------------------------------------ */

tg_status tg_state_dict_set_meta(tg_state_dict *sd, const char *key,
                                 const char *value)
{
    if (!sd || !key || !value)
        return tg__error(TG_ERR_ARG, "tg_state_dict_set_meta: %s is NULL",
                         !sd ? "the dict" : !key ? "the key" : "the value");
    char *v = strdup(value);
    if (!v)
        return tg__error(TG_ERR_NOMEM, "tg_state_dict_set_meta: out of memory");
    int i = find(sd->keys, sd->n_meta, key);
    if (i >= 0) {
        free(sd->values[i]);
        sd->values[i] = v;
        return TG_OK;
    }
    if (!TG_GROW(sd->keys, sd->cap_keys, sd->n_meta + 1) ||
        !TG_GROW(sd->values, sd->cap_values, sd->n_meta + 1)) {
        free(v);
        return tg__error(TG_ERR_NOMEM, "tg_state_dict_set_meta: out of memory");
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return tg__error(TG_ERR_NOMEM, "tg_state_dict_set_meta: out of memory");
    }
    sd->keys[sd->n_meta] = k;
    sd->values[sd->n_meta] = v;
    sd->n_meta++;
    return TG_OK;
}

const char *tg_state_dict_meta(const tg_state_dict *sd, const char *key)
{
    int i = sd && key ? find(sd->keys, sd->n_meta, key) : -1;
    return i < 0 ? NULL : sd->values[i];
}

int tg_state_dict_meta_size(const tg_state_dict *sd) { return sd ? sd->n_meta : 0; }

const char *tg_state_dict_meta_key(const tg_state_dict *sd, int i)
{
    return in_range("tg_state_dict_meta_key", sd, i, sd ? sd->n_meta : 0)
               ? sd->keys[i] : NULL;
}

const char *tg_state_dict_meta_value(const tg_state_dict *sd, int i)
{
    return in_range("tg_state_dict_meta_value", sd, i, sd ? sd->n_meta : 0)
               ? sd->values[i] : NULL;
}
