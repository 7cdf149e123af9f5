/* Internal layout of nn modules, shared by the object model (module.c)
 * and the built-in layers and containers. */
#ifndef TG_NN_MODULE_H
#define TG_NN_MODULE_H

#include "core/tensor_impl.h"
#include "tg/autograd.h"
#include "tg/nn.h"

#include <stddef.h>

/* what a built-in kind provides. forward runs with the caller's scopes
 * suspended: every op result is a reference it owns, so it can release
 * intermediates at once; it returns an owned reference. */
typedef struct tg_module_type {
    const char *kind;
    tg_tensor *(*forward)(tg_module *m, tg_tensor *x);
    /* PyTorch's extra_repr: the arguments shown inside "Kind(...)" */
    void (*describe)(const tg_module *m, char *buf, size_t len);
} tg_module_type;

typedef struct tg_nn_slot { /* a named parameter or buffer */
    char *name;
    tg_tensor *t; /* owned reference */
} tg_nn_slot;

typedef struct tg_nn_child {
    char *name;
    tg_module *m; /* owned */
} tg_nn_child;

struct tg_module {
    const tg_module_type *type; /* NULL for a custom module */
    char *custom_kind;          /* custom modules: owned copy of the kind */
    tg_module_forward_fn custom_forward;
    void *user;
    void (*user_free)(void *);
    void *cfg;                  /* built-ins: their settings (malloc'd) */
    bool training;
    bool has_parent;            /* added to a container: owned by it */
    tg_nn_slot *params, *buffers;
    int n_params, n_buffers, cap_params, cap_buffers;
    tg_nn_child *children;
    int n_children, cap_children;
};

/* a built-in module of the given type with cfg (taken over; may be NULL);
 * NULL with an error (cfg freed) when out of memory */
tg_module *tg__module_make(const tg_module_type *type, void *cfg);
/* runs m with scopes already suspended; returns an owned reference */
tg_tensor *tg__module_run(tg_module *m, tg_tensor *x);
/* a float32 parameter drawn from U(-bound, bound), added to m as name */
tg_status tg__module_add_uniform(tg_module *m, const char *name, int ndim,
                                 const int64_t *shape, double bound,
                                 tg_generator *g);
/* a new tensor owned by the caller whatever scopes are open */
tg_tensor *tg__module_full(tg_dtype dt, int ndim, const int64_t *shape,
                           double value);
/* own parameter/buffer by plain name, or NULL (no error) */
tg_tensor *tg__module_own(const tg_module *m, const char *name);

#endif
