/* The storage allocator (core/alloc.h): size classes that hold what was
 * asked and waste at most a quarter (with caching off: sizes rounded to
 * whole lines), 64-byte aligned blocks whose every
 * byte may be written (valgrind and ASan watch the raw allocations), freed
 * blocks reused for their class, a trim that drops them, and children
 * forked while another thread allocates that can allocate too. */
#include "harness.h"
#include "core/alloc.h"
#include "core/tensor_impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_classes_hold_and_waste_little(void)
{
    size_t prev = 0;
    int bad = 0;
    for (size_t size = 1; size <= ((size_t)1 << 20); size += size < 4096 ? 1 : 61) {
        size_t got = tg__buffer_block_bytes(size);
        size_t floor = size < 256 ? 256 : size; /* the smallest class */
        if (got < size || got > floor + floor / 4 + TG_ALIGN || got < prev || got % TG_ALIGN)
            bad++;
        prev = got;
    }
    CHECK(bad == 0);
    if (!tg__alloc_caching()) /* TG_ALLOC_CACHE=0, ASan: sizes rounded to lines */
        return;
    /* the class edges: exact sizes keep their size */
    CHECK(tg__buffer_block_bytes(64) == 256);
    CHECK(tg__buffer_block_bytes(256) == 256);
    CHECK(tg__buffer_block_bytes(257) == 320);
    CHECK(tg__buffer_block_bytes((size_t)64 << 10) == (size_t)64 << 10);
    CHECK(tg__buffer_block_bytes(((size_t)64 << 10) - 1) == (size_t)64 << 10);
    CHECK(tg__buffer_block_bytes(((size_t)64 << 10) + 1) == (size_t)80 << 10);
    /* past the cache's largest class: the size, rounded */
    size_t huge = ((size_t)256 << 20) + 1;
    CHECK(tg__buffer_block_bytes(huge) == huge + TG_ALIGN - 1);
}

static void test_blocks_aligned_writable_reused(void)
{
    static const size_t sizes[] = {64, 100, 1000, 4096, 40000, 65535, 65536, 200000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        unsigned char *a = tg__buffer_alloc(n);
        CHECK(a && (uintptr_t)a % TG_ALIGN == 0);
        if (!a)
            continue;
        memset(a, 0xab, tg__buffer_block_bytes(n));
        tg__buffer_free(a, n);
        unsigned char *b = tg__buffer_alloc(n);
        CHECK(b && (uintptr_t)b % TG_ALIGN == 0);
        if (tg__alloc_caching())
            CHECK(b == a); /* the class's list gave the freed block back */
        tg__buffer_free(b, n);
    }
    tg__buffer_trim();
    /* tensors of every size come and go through it (the test's scope
     * releases them) */
    for (int64_t n = 1; n < 70000; n = n * 3 + 1) {
        tg_tensor *t = tg_full(TG_FLOAT32, 1, &n, 2.5);
        CHECK(t && ((const float *)tg_data(t))[n - 1] == 2.5f);
    }
}

static atomic_int churning;

/* tensors made and dropped as fast as possible: the caches' lists are
 * locked most of the time */
static void *churn(void *arg)
{
    (void)arg;
    int64_t n = 100;
    while (atomic_load(&churning)) {
        tg_tensor *t = tg_zeros(TG_FLOAT32, 1, &n);
        tg_release(t);
    }
    return NULL;
}

/* fork() copies the calling thread alone: a child that inherited a list's
 * lock held by the churning thread would hang at its first tensor
 * (alarm() makes that a failed child) */
static void test_fork_while_another_thread_allocates(void)
{
    /* under valgrind each child's exit reports the churning thread's
     * tensor of that moment, which the child cannot free, as lost (and
     * valgrind runs one thread at a time: no lock is ever caught held) */
    if (getenv("TG_TEST_UNDER_VALGRIND"))
        return;
    pthread_t th;
    atomic_store(&churning, 1);
    CHECK(pthread_create(&th, NULL, churn, NULL) == 0);
    int failed = 0, rounds = 100;
    for (int round = 0; round < rounds && !failed; round++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10);
            int64_t n = 100;
            tg_tensor *t = tg_zeros(TG_FLOAT32, 1, &n);
            int ok = t && ((const float *)tg_data(t))[99] == 0;
            tg_release(t);
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        failed = !(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                   WEXITSTATUS(status) == 0);
    }
    atomic_store(&churning, 0);
    pthread_join(th, NULL);
    CHECK(!failed);
}

int main(void)
{
    RUN(test_classes_hold_and_waste_little);
    RUN(test_blocks_aligned_writable_reused);
    RUN(test_fork_while_another_thread_allocates);
    return tt_finish();
}
