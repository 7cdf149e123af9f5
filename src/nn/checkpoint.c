/* Module state to and from state dicts (tg/io.h), the form checkpoints
 * and safetensors files take, with PyTorch's state_dict names. */
#include "nn/module.h"

#include <stdlib.h>
#include <string.h>

tg_status tg_module_state_dict(const tg_module *m, tg_state_dict *sd,
                               const char *prefix)
{
    if (!m || !sd)
        return tg__error(TG_ERR_ARG, "tg_module_state_dict: NULL argument");
    if (!prefix)
        prefix = "";
    tg_named_tensor *st;
    int n = tg_module_state(m, &st);
    if (n < 0)
        return tg_last_status();
    size_t plen = strlen(prefix);
    tg_status s = TG_OK;
    for (int i = 0; i < n && s == TG_OK; i++) {
        size_t len = strlen(st[i].name);
        char *name = malloc(plen + len + 1);
        if (!name) {
            s = tg__error(TG_ERR_NOMEM, "tg_module_state_dict: out of memory");
            break;
        }
        memcpy(name, prefix, plen);
        memcpy(name + plen, st[i].name, len + 1);
        s = tg_state_dict_add(sd, name, st[i].tensor);
        free(name);
    }
    tg_named_tensors_free(st);
    return s;
}

tg_status tg_module_load_state_dict(tg_module *m, const tg_state_dict *sd,
                                    const char *prefix, bool strict)
{
    if (!m || !sd)
        return tg__error(TG_ERR_ARG, "tg_module_load_state_dict: NULL argument");
    if (!prefix)
        prefix = "";
    size_t plen = strlen(prefix);
    int total = tg_state_dict_size(sd), n = 0;
    tg_named_tensor *sel = malloc((size_t)(total + 1) * sizeof *sel);
    if (!sel)
        return tg__error(TG_ERR_NOMEM, "tg_module_load_state_dict: out of memory");
    /* the dict hands out new references: own them, whatever scope is open */
    int old = tg__scope_suspend();
    for (int i = 0; i < total; i++) {
        const char *name = tg_state_dict_name(sd, i);
        if (strncmp(name, prefix, plen) != 0)
            continue;
        sel[n].name = name + plen;
        sel[n].tensor = tg_state_dict_tensor(sd, i);
        sel[n].is_buffer = false;
        n++;
    }
    tg__scope_resume(old);
    tg_status s = tg_module_load_state(m, n, sel, strict);
    for (int i = 0; i < n; i++)
        tg_release(sel[i].tensor);
    free(sel);
    return s;
}
