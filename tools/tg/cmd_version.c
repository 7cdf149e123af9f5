/* tg version: the library version and how it was built; --verbose adds
 * how the kernels run on this machine (instruction set, BLAS, and which
 * GEMM implementation serves LeNet-5's products and two squares). */
#include "commands.h"
#include "tg/tg.h"

#include <stdio.h>
#include <string.h>

/* the float32 products of a LeNet-5 step at batch 64, and two squares */
static const struct {
    const char *name;
    bool ta, tb;
    int64_t m, n, k;
} shapes[] = {
    {"fc1 forward", false, true, 64, 120, 400}, {"fc1 input grad", false, false, 64, 400, 120},
    {"fc1 weight grad", true, false, 120, 400, 64}, {"fc2 forward", false, true, 64, 84, 120},
    {"fc3 forward", false, true, 64, 10, 84}, {"square 512", false, false, 512, 512, 512},
    {"square 1024", false, false, 1024, 1024, 1024},
};

int tg_cmd_version(int argc, char **argv)
{
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = true;
        } else {
            fprintf(stderr, "tg version: unknown option %s (usage: tg version "
                    "[--verbose])\n", argv[i]);
            return 1;
        }
    }
    printf("tensorgraph %s\n", TG_VERSION);
    if (!verbose)
        return 0;
    printf("%s\nthreads: %d\n", tg_kernels_report(), tg_get_num_threads());
    printf("MPI: %s\n", tg_dist_built() ? "built (mpirun -np N tg train lenet --distributed)"
                                         : "not built (tensorgraph was built without MPI)");
    printf("float32 GEMM per shape (built-in at avx2 and avx512, the BLAS below; "
           "TG_GEMM=builtin|blas forces):\n");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        printf("  %-16s %c%c %4lld x %4lld x %4lld: %s\n", shapes[i].name,
               shapes[i].ta ? 'T' : 'N', shapes[i].tb ? 'T' : 'N',
               (long long)shapes[i].m, (long long)shapes[i].n, (long long)shapes[i].k,
               tg_gemm_choice(TG_FLOAT32, shapes[i].ta, shapes[i].tb, shapes[i].m,
                              shapes[i].n, shapes[i].k));
    return 0;
}
