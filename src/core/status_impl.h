/* Internal error reporting: set the thread-local last error. */
#ifndef TG_STATUS_IMPL_H
#define TG_STATUS_IMPL_H

#include "tg/core.h"

#include <stdint.h>

#if defined(__GNUC__)
#define TG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TG_PRINTF(a, b)
#endif

/* records status s with a printf-style message; returns s */
tg_status tg__error(tg_status s, const char *fmt, ...) TG_PRINTF(2, 3);
/* the same, for functions that return a pointer: returns NULL */
void *tg__error_null(tg_status s, const char *fmt, ...) TG_PRINTF(2, 3);
/* non-fatal: keeps an earlier error's message when set (NULL inputs) */
bool tg__error_is_set(void);
/* how many errors this thread has recorded: equal before and after a
 * failed call when the call gave no message (the dispatcher then gives
 * one naming the op) */
uint64_t tg__error_count(void);

#endif
