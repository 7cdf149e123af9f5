/* A lock around a few instructions of work (the allocator's free lists):
 * one atomic exchange when it is free, where a pthread mutex's lock and
 * unlock took ~40 instructions, paid twice per tensor of every step. A
 * waiter spins briefly, then yields its core: the holder may have been
 * preempted inside. Internal. */
#ifndef TG_CORE_SPINLOCK_H
#define TG_CORE_SPINLOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct tg_spinlock {
    atomic_bool held;
} tg_spinlock;

static inline void tg__spin_lock(tg_spinlock *l)
{
    while (atomic_exchange_explicit(&l->held, true, memory_order_acquire))
        for (int i = 0; atomic_load_explicit(&l->held, memory_order_relaxed); i++) {
            if (i >= 64)
                sched_yield();
#if defined(__x86_64__) || defined(__i386__)
            else
                __builtin_ia32_pause();
#endif
        }
}

static inline void tg__spin_unlock(tg_spinlock *l)
{
    atomic_store_explicit(&l->held, false, memory_order_release);
}

#endif
