/* Scopes for eager code: every tensor a public call returns
 * inside a scope is owned by it and released at tg_scope_end, unless
 * kept. One per-thread stack of entries; each scope is a suffix of it. */
#include "core/tensor_impl.h"
#include "util/grow.h"

#include <stdlib.h>

typedef struct entry {
    tg_tensor *t;
    bool kept;
} entry;

#define MAX_SCOPE_DEPTH 256

static _Thread_local entry *entries;
static _Thread_local size_t n_entries, cap_entries;
static _Thread_local size_t marks[MAX_SCOPE_DEPTH];
static _Thread_local int depth;
static _Thread_local int overflow; /* scopes opened past the depth limit */
/* scopes at or below the floor are hidden from code that manages its own
 * references (the autograd engine): see tg__scope_suspend */
static _Thread_local int floor_depth;

int tg__scope_suspend(void)
{
    int old = floor_depth;
    floor_depth = depth;
    return old;
}

void tg__scope_resume(int old_floor) { floor_depth = old_floor; }

int tg_scope_hide(void) { return tg__scope_suspend(); }
void tg_scope_unhide(int token) { tg__scope_resume(token); }

int tg_scope_depth(void) { return depth + overflow; }

void tg_scope_begin(void)
{
    if (depth == MAX_SCOPE_DEPTH) {
        overflow++; /* nested too deep: inner scopes merge into this one */
        return;
    }
    marks[depth++] = n_entries;
}

static bool push(tg_tensor *t)
{
    if (!TG_GROW(entries, cap_entries, n_entries + 1))
        return false;
    entries[n_entries].t = t;
    entries[n_entries].kept = false;
    n_entries++;
    return true;
}

tg_tensor *tg__publish(tg_tensor *t)
{
    if (t && depth > floor_depth && !push(t)) {
        tg_release(t);
        return tg__error_null(TG_ERR_NOMEM, "out of memory in scope");
    }
    return t;
}

tg_tensor *tg_keep(tg_tensor *t)
{
    if (!t || depth == floor_depth)
        return t;
    for (size_t i = n_entries; i > marks[depth - 1]; i--) {
        if (entries[i - 1].t == t && !entries[i - 1].kept) {
            entries[i - 1].kept = true;
            return t;
        }
    }
    return t; /* not owned by this scope: nothing to keep */
}

void tg_scope_end(void)
{
    if (overflow > 0) {
        overflow--;
        return;
    }
    if (depth == floor_depth)
        return; /* unbalanced end: nothing of ours to close */
    size_t start = marks[--depth];
    size_t out = start;
    for (size_t i = start; i < n_entries; i++) {
        if (!entries[i].kept)
            tg_release(entries[i].t);
        else if (depth > floor_depth)
            entries[out++] = (entry){entries[i].t, false}; /* to the parent */
        /* kept with no parent: the caller now owns the reference */
    }
    n_entries = out;
    if (depth == 0) { /* nothing left to track: leave no memory behind */
        free(entries);
        entries = NULL;
        cap_entries = 0;
    }
}
