/* dtype sizes, names and the promotion lattice documented in tg/core.h. */
#include "core/dtype_impl.h"
#include "core/status_impl.h"

const size_t tg__dtype_sizes[TG_NUM_DTYPES] = {4, 8, 4, 8, 1, 1};
static const char *const names[TG_NUM_DTYPES] = {
    "float32", "float64", "int32", "int64", "uint8", "bool"};
/* rank in the promotion order bool < uint8 < int32 < int64 < f32 < f64 */
static const int rank[TG_NUM_DTYPES] = {4, 5, 2, 3, 1, 0};

static tg_dtype default_float = TG_FLOAT32;

tg_dtype tg_default_float(void) { return default_float; }

tg_status tg_set_default_float(tg_dtype dt)
{
    if (dt != TG_FLOAT32 && dt != TG_FLOAT64)
        return tg__error(TG_ERR_DTYPE, "tg_set_default_float: the default must be a float "
                         "dtype (float32 or float64), got %s", tg_dtype_name(dt));
    default_float = dt;
    return TG_OK;
}

bool tg_dtype_is_valid(int dt) { return dt >= 0 && dt < TG_NUM_DTYPES; }

size_t tg_dtype_size(tg_dtype dt)
{
    return tg__dtype_size(dt);
}

const char *tg_dtype_name(tg_dtype dt)
{
    return tg_dtype_is_valid((int)dt) ? names[dt] : "invalid-dtype";
}

bool tg_dtype_is_float(tg_dtype dt)
{
    return dt == TG_FLOAT32 || dt == TG_FLOAT64;
}

tg_dtype tg_promote_types(tg_dtype a, tg_dtype b)
{
    /* uint8 with a signed integer: the signed type (rank already says so
     * for int32/int64, as both outrank uint8) */
    if (!tg_dtype_is_valid((int)a) || !tg_dtype_is_valid((int)b))
        return tg_dtype_is_valid((int)a) ? a : b; /* garbage in: no overread */
    return rank[a] >= rank[b] ? a : b;
}
