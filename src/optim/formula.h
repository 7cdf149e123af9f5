/* The arithmetic an optimizer's update is written in, once, for both of
 * its forms: the fused loop (TG_C_*: C operators on one element of the
 * element type, or on doubles for the per-step scalars) and graphs
 * (TG_G_*: op calls on symbolic tensors, tg_graph_optim). Each algorithm
 * writes its update as one macro over an arithmetic A (A##_ADD, ...), so
 * the graph performs the loop's float operations in the loop's order and
 * dtype: given the same gradients, both give the same bits.
 *
 * SET(dst, e) stores e into dst (an element, or an assign node on a state
 * variable) and is the stored value; RESULT(out, e) evaluates e and, in a
 * graph, keeps it in out (the assign a caller runs); SELECT(c, a, b) is a
 * where (c a compile-time flag in the loop, a bool tensor in graphs). */
#ifndef TG_OPTIM_FORMULA_H
#define TG_OPTIM_FORMULA_H

#include "optim/optim_impl.h"
#include "tg/graph.h"
#include "tg/ops.h"

#define TG_C_ADD(a, b) ((a) + (b))
#define TG_C_SUB(a, b) ((a) - (b))
#define TG_C_MUL(a, b) ((a) * (b))
#define TG_C_DIV(a, b) ((a) / (b))
#define TG_C_NEG(a) (-(a))
#define TG_C_SQRT(a) TG_SQRT(a)
#define TG_C_POW(a, b) pow(a, b)
/* torch.maximum: NaN wins (the maximum op's own rule) */
#define TG_C_MAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define TG_C_LERP(SMALL, a, b, w, w1) TG_LERP(SMALL, a, b, w, w1)
#define TG_C_SELECT(c, a, b) ((c) ? (a) : (b))
#define TG_C_SET(dst, e) ((dst) = (e))
#define TG_C_RESULT(out, e) ((void)(e))

/* a symbolic value: the graph arithmetic's element type (one token, so
 * that K(V) declares every field a pointer) */
typedef tg_tensor *tg__sym;

#define TG_G_ADD(a, b) tg_add(a, b)
#define TG_G_SUB(a, b) tg_sub(a, b)
#define TG_G_MUL(a, b) tg__optim_graph_mul(a, b)
#define TG_G_DIV(a, b) tg_div(a, b)
#define TG_G_NEG(a) tg_neg(a)
#define TG_G_SQRT(a) tg_sqrt(a)
#define TG_G_POW(a, b) tg_pow(a, b)
#define TG_G_MAX(a, b) tg_maximum(a, b)
#define TG_G_LERP(SMALL, a, b, w, w1) \
    ((SMALL) ? tg_add(a, tg_mul(w, tg_sub(b, a))) : tg_sub(b, tg_mul(tg_sub(b, a), w1)))
#define TG_G_SELECT(c, a, b) tg_where(c, a, b)
#define TG_G_SET(dst, e) tg_assign(dst, e)
#define TG_G_RESULT(out, e) ((out) = (e))

/* A graph's constants, k (a struct K(tg_tensor *)), from the loop's: the
 * algorithm's CONSTS(T, h, c_) computes them in the element type T of
 * dtype dt, so each graph constant (0-d, of dt) holds exactly the loop's
 * value; FIELDS(X) lists the fields; AFTER(T) may read c_ too. */
#define TG_G_CONST_FIELD(f) k.f = tg_scalar(dt_, (double)c_.f);
#define TG_G_CONSTS_T(T, K, CONSTS, FIELDS, AFTER, h)                       \
    do {                                                                    \
        K(T) c_;                                                            \
        CONSTS(T, h, c_);                                                   \
        FIELDS(TG_G_CONST_FIELD)                                            \
        AFTER(T)                                                            \
    } while (0)
#define TG_G_CONSTS(dt, K, CONSTS, FIELDS, AFTER, h)                        \
    do {                                                                    \
        tg_dtype dt_ = (dt);                                                \
        if (dt_ == TG_FLOAT32)                                              \
            TG_G_CONSTS_T(float, K, CONSTS, FIELDS, AFTER, h);              \
        else                                                                \
            TG_G_CONSTS_T(double, K, CONSTS, FIELDS, AFTER, h);             \
    } while (0)
#define TG_G_NOTHING(T)

/* a * b, or the other operand itself when one is a concrete 0-d 1 of the
 * other's dtype (SGD's sign without maximize, its 1 - dampening): x * 1
 * is x bit for bit, so the graph leaves out a pass the loop makes over
 * its run-time constants */
tg_tensor *tg__optim_graph_mul(tg_tensor *a, tg_tensor *b);

/* graph_scalars of the algorithms whose only per-step scalar is the step
 * size -lr (shared, 0-d): SGD's first one, Adadelta's, RMSprop's */
tg_status tg__optim_graph_neg_lr(tg_tensor *lr, tg_dtype dt, tg_tensor **out);

#endif
