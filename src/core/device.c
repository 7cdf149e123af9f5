/* Device names: "cpu:N", "/rank:R/cpu:N" (tg/device.h). */
#include "core/status_impl.h"
#include "tg/device.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEVICE_NUMBER 65535

/* a decimal number at *p (advanced past it), 0 .. MAX_DEVICE_NUMBER; -1 if none */
static int read_number(const char **p)
{
    const char *s = *p;
    long v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++)
        if ((v = v * 10 + (*s - '0')) > MAX_DEVICE_NUMBER)
            return -1;
    *p = s;
    return (int)v;
}

static tg_status bad_name(const char *name, const char *why)
{
    return tg__error(TG_ERR_ARG, "tg_device_parse: invalid device name '%s': %s "
                     "(expected \"cpu:N\" or \"/rank:R/cpu:N\", N and R in 0..%d)",
                     name, why, MAX_DEVICE_NUMBER);
}

tg_status tg_device_parse(const char *name, tg_device *out)
{
    if (!name || !out)
        return tg__error(TG_ERR_ARG, "tg_device_parse: %s is NULL", name ? "out" : "name");
    tg_device d = {TG_CPU, 0, 0};
    const char *p = name;
    if (!strncmp(p, "/rank:", 6)) {
        p += 6;
        if ((d.rank = read_number(&p)) < 0)
            return bad_name(name, "the rank is not a number");
        if (*p != '/')
            return bad_name(name, "'/' must follow the rank");
        p++;
    } else if (*p == '/') {
        return bad_name(name, "a leading '/' starts \"/rank:R/\"");
    }
    if (strncmp(p, "cpu", 3))
        return !strncmp(p, "gpu", 3) || !strncmp(p, "cuda", 4)
                   ? tg__error(TG_ERR_UNSUPPORTED, "tg_device_parse: '%s': GPU devices "
                               "are not built (only cpu:N; see docs/DISTRIBUTED.md)", name)
                   : bad_name(name, "unknown device kind");
    p += 3;
    if (*p == ':') {
        p++;
        if ((d.index = read_number(&p)) < 0)
            return bad_name(name, "the index is not a number");
    }
    if (*p)
        return bad_name(name, "unexpected text after the device");
    *out = d;
    return TG_OK;
}

const char *tg_device_str(tg_device d, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    if (d.rank)
        snprintf(buf, len, "/rank:%d/cpu:%d", d.rank, d.index);
    else
        snprintf(buf, len, "cpu:%d", d.index);
    return buf;
}

bool tg_device_eq(tg_device a, tg_device b)
{
    return a.type == b.type && a.index == b.index && a.rank == b.rank;
}
