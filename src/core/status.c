/* Thread-local last error: the message and status of the most recent
 * failure, for tg_last_error(). */
#include "core/status_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char err_msg[1024];
static _Thread_local tg_status err_status = TG_OK;
static _Thread_local uint64_t err_count;

/* formatted aside first: a message may quote the previous one
 * (tg_last_error() as an argument), which must not be overwritten while
 * it is read */
static void set_error(tg_status s, const char *fmt, va_list ap)
{
    char msg[sizeof err_msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    err_status = s;
    err_count++;
    memcpy(err_msg, msg, sizeof msg);
}

tg_status tg__error(tg_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(s, fmt, ap);
    va_end(ap);
    return s;
}

void *tg__error_null(tg_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(s, fmt, ap);
    va_end(ap);
    return NULL;
}

bool tg__error_is_set(void) { return err_status != TG_OK; }

uint64_t tg__error_count(void) { return err_count; }

const char *tg_last_error(void) { return err_msg; }
tg_status tg_last_status(void) { return err_status; }

void tg_clear_error(void)
{
    err_status = TG_OK;
    err_msg[0] = '\0';
}

const char *tg_status_name(tg_status s)
{
    switch (s) {
    case TG_OK: return "ok";
    case TG_ERR_ARG: return "invalid argument";
    case TG_ERR_SHAPE: return "shape error";
    case TG_ERR_DTYPE: return "dtype error";
    case TG_ERR_INDEX: return "index error";
    case TG_ERR_AUTOGRAD: return "autograd error";
    case TG_ERR_NOMEM: return "out of memory";
    case TG_ERR_IO: return "i/o error";
    case TG_ERR_UNSUPPORTED: return "unsupported";
    case TG_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}
