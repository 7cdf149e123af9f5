/* The reduction engine's accumulator table (reduce_kernels.h): built per
 * instruction set from reduce_arch.h (reduce_avx512.c, reduce_avx2.c,
 * reduce_generic.c, the same bits at every level) and chosen here at run
 * time (cpu.h). */
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/reduce_kernels.h"

typedef tg_red_fns red_table[TG_RED_NKINDS][TG_NUM_DTYPES];
extern const red_table tg__red_table_generic;
#if defined(__x86_64__)
extern const red_table tg__red_table_avx2, tg__red_table_avx512;
#endif

static const red_table *table_now(void)
{
#if defined(__x86_64__)
    switch (tg__cpu_isa()) {
    case TG_ISA_AVX512: return &tg__red_table_avx512;
    case TG_ISA_AVX2: return &tg__red_table_avx2;
    default: break;
    }
#endif
    return &tg__red_table_generic;
}

const tg_red_fns *tg__red_fns(tg_red_kind kind, tg_dtype dt)
{
    if ((unsigned)kind >= TG_RED_NKINDS || (unsigned)dt >= TG_NUM_DTYPES)
        return NULL;
    const tg_red_fns *f = &(*table_now())[kind][dt];
    return f->inner ? f : NULL;
}
