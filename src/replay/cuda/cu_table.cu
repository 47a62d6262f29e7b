// Operator name -> CUDA kernel.
#include <string.h>

#include "cu_kernels.cuh"

#define OPDB_CU_ENTRY(name) &opdb_cu_k_##name,
static const opdb_cu_kernel *const cu_table[] = {OPDB_CU_KERNELS(OPDB_CU_ENTRY)};
#undef OPDB_CU_ENTRY

extern "C" const opdb_cu_kernel *opdb_cu_kernel_find(const char *name) {
    for (size_t i = 0; i < sizeof cu_table / sizeof cu_table[0]; i++)
        if (strcmp(cu_table[i]->name, name) == 0) return cu_table[i];
    return NULL;
}

extern "C" const opdb_cu_kernel *opdb_cu_kernel_at(size_t i) {
    return i < sizeof cu_table / sizeof cu_table[0] ? cu_table[i] : NULL;
}
