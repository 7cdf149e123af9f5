/* What every fuzz target asks of a refusal: a message saying why
 * (tg_last_error). A refusal without one stops the fuzzer at that input. */
#ifndef TG_FUZZ_CHECK_H
#define TG_FUZZ_CHECK_H

#include "tg/core.h"

#include <stdio.h>
#include <stdlib.h>

static inline void fuzz_require_message(const char *target)
{
    const char *msg = tg_last_error();
    if (!msg || !*msg) {
        fprintf(stderr, "%s: a failure without a message\n", target);
        abort();
    }
}

#endif
