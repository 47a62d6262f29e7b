/* The named settings a program gives the library (core.h, opdb_setting):
 * the library reads no environment variable itself, so an embedding
 * program decides what reaches it; opdb's CLI answers from its environment
 * for the names it lists (src/cli/cli_process.c). */
#include <stdatomic.h>

#include "opdb/core.h"

static _Atomic(opdb_setting_fn) g_settings;

void opdb_set_settings(opdb_setting_fn fn) { atomic_store(&g_settings, fn); }

const char *opdb_setting(const char *name) {
    opdb_setting_fn fn = atomic_load(&g_settings);
    return fn ? fn(name) : NULL;
}
