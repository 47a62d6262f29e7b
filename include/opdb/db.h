/* Database layout: devices, version folders, and file naming. */
#ifndef OPDB_DB_H
#define OPDB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPDB_DEFAULT_DEVICE "ATLAS_800_A3_752T_128G_DIE"
#define OPDB_DATA_ROOT_ENV "OPDB_DATA_ROOT"

extern const char *const opdb_devices[];
extern const size_t opdb_ndevices;

bool opdb_device_valid(const char *device);

/* Version flag check (after strip): [0-9A-Za-z]+([._+-][0-9A-Za-z]+)* */
bool opdb_version_valid(const char *v);
extern const char *const opdb_version_hint;

typedef struct opdb_db_target {
    const char *database_path; /* explicit folder: used verbatim */
    const char *device;
    const char *vllm_version, *torch_version, *cann_version;
    const char *data_root;     /* NULL: $OPDB_DATA_ROOT or "data" */
} opdb_db_target;

/* The version folder name `vllm<v>_torch<t>_cann<c>` (malloc'd), or NULL with
 * err set when a component is missing. */
char *opdb_db_version_dir(const char *vllm, const char *torch, const char *cann, opdb_err *err);
/* The database folder (malloc'd, pathlib-normalised), or NULL with err set. */
char *opdb_db_resolve(const opdb_db_target *t, opdb_err *err);

/* `<>:"/\|?*` and control characters become `_`; "" becomes UNKNOWN_TYPE.
 * malloc'd. The result never contains `/`, so it stays inside its folder. */
char *opdb_sanitize_type_name(const char *type, size_t n);

#ifdef __cplusplus
}
#endif
#endif
