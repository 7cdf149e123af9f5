/* The library's one way to grow an array (issue 10). Every growable array
 * goes through TG_GROW, so one build switch changes them all: with
 * TG_GROW_BY_ONE (Debug and sanitizer builds) an array starts at capacity
 * 1 and grows by exactly what is asked (up to 64 KiB; then it doubles),
 * and every growth moves it to a new block and frees the old one, so a
 * pointer into the array kept across an append is a use-after-free that
 * ASan reports at the first append, not only when a realloc happens to
 * move. Release builds double (capacities 8 * 2^k). */
#ifndef TG_UTIL_GROW_H
#define TG_UTIL_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Makes room for `need` elements of `elem` bytes in the array *arrp
 * (arrp points at the caller's T * pointer), whose capacity is *cap:
 * true when there is room (the array may have moved; new elements are
 * uninitialized), false when out of memory or the size overflows (array
 * and capacity unchanged). Sets no error: the caller names its operation. */
bool tg__grow_size(void *arrp, size_t *cap, size_t need, size_t elem);
bool tg__grow_int(void *arrp, int *cap, size_t need, size_t elem);
bool tg__grow_i64(void *arrp, int64_t *cap, size_t need, size_t elem);

/* TG_GROW(arr, cap, need): arr a T * lvalue, cap an int, int64_t or
 * size_t lvalue holding its capacity */
#define TG_GROW(arr, cap, need)                                               \
    _Generic(&(cap), int *: tg__grow_int, int64_t *: tg__grow_i64,            \
             size_t *: tg__grow_size)(&(arr), &(cap), (size_t)(need), sizeof *(arr))

/* the capacity TG_GROW gives an array of capacity cap that must hold
 * need elements (cap when it already can). Arrays that store only their
 * count (ONNX messages) have capacity tg__grow_capacity(0, count): from
 * empty, growing straight to n or one element at a time ends the same.
 * Callers that charge allocations to a budget ask it before growing. */
size_t tg__grow_capacity(size_t cap, size_t need, size_t elem);

/* whether this build grows by one (tests and tools may report it) */
bool tg__grow_by_one(void);

#endif
