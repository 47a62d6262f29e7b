// opdb_cuda_check [--no-sweep] [--quick] [--device N]: kernel correctness,
// then the GEMM sweep. Exit 0: all kernels correct; 1: a failure; 2: usage;
// 77: no CUDA device (nothing checked; ctest reports the test as skipped).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.cuh"

static int usage(void) {
    fprintf(stderr, "usage: opdb_cuda_check [--no-sweep] [--quick] [--device N]\n");
    return 2;
}

int main(int argc, char **argv) {
    bool sweep = true, quick = false;
    int device = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-sweep") == 0) sweep = false;
        else if (strcmp(argv[i], "--quick") == 0) quick = true;
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = atoi(argv[++i]);
        else return usage();
    }
    opdb_err err;
    memset(&err, 0, sizeof err);
    opdb_cu *cu = NULL;
    int rc = opdb_cu_open(device, &cu, &err);
    if (rc == OPDB_CU_NO_DEVICE) {
        printf("opdb_cuda_check: %s; nothing checked\n", err.msg);
        return 77;
    }
    if (rc) {
        fprintf(stderr, "opdb_cuda_check: %s\n", err.msg);
        return 1;
    }
    char desc[256], stack[64];
    opdb_cu_describe(cu, desc, sizeof desc);
    opdb_cu_stack(cu, stack, sizeof stack);
    printf("device %d: %s [%s]\n", device, desc, stack);
    int failures = check_kernels(cu);
    printf("%d kernel check(s) failed\n", failures);
    if (sweep) failures += gemm_sweep(cu, quick);
    opdb_cu_close(cu);
    return failures ? 1 : 0;
}
