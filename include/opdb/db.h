/* Where databases live: devices, version folders, and file naming. */
#ifndef OPDB_DB_H
#define OPDB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OPDB_DEFAULT_DEVICE "ATLAS_800_A3_752T_128G_DIE"
#define OPDB_DATA_ROOT_ENV "OPDB_DATA_ROOT"

OPDB_API extern const char *const opdb_devices[];
OPDB_API extern const size_t opdb_ndevices;

OPDB_API bool opdb_device_valid(const char *device);

/* The operator catalogue: the operators opdb replays (what --ops accepts and
 * which database tables update and bench touch), the names of the replay
 * registry (opdb_op_registry, opdb/replay.h) without aliases. */
OPDB_API extern const char *const opdb_op_catalogue[];
OPDB_API extern const size_t opdb_op_catalogue_count;
OPDB_API bool opdb_is_replay_op(const char *normalised_name);

/* Version flag check (after strip): [0-9A-Za-z]+([._+-][0-9A-Za-z]+)* */
OPDB_API bool opdb_version_valid(const char *v);
OPDB_API extern const char *const opdb_version_hint;

typedef struct opdb_db_target {
    const char *database_path; /* explicit folder: used verbatim */
    const char *device;
    const char *vllm_version, *torch_version, *cann_version;
    const char *data_root;     /* NULL: the OPDB_DATA_ROOT setting or "data" */
} opdb_db_target;

/* The version folder name `vllm<v>_torch<t>_cann<c>` (malloc'd), or NULL with
 * err set when a component is missing. */
OPDB_API char *opdb_db_version_dir(const char *vllm, const char *torch, const char *cann, opdb_err *err);
/* The database folder (malloc'd, pathlib-normalised), or NULL with err set. */
OPDB_API char *opdb_db_resolve(const opdb_db_target *t, opdb_err *err);

/* `<>:"/\|?*` and control characters become `_`; "" becomes UNKNOWN_TYPE.
 * malloc'd. The result never contains `/`, so it stays inside its folder. */
OPDB_API char *opdb_sanitize_type_name(const char *type, size_t n);

/* ---- the path policy: every name from input that becomes a file ----
 * opdb_safe_stem (default mode) = opdb_sanitize_type_name, then DEL and each
 * direction mark or override (U+061C, U+200E/F, U+202A-E, U+2066-9) become
 * `_`, a leading `.` becomes `_` (no `.`, `..` or hidden files), and a stem
 * over OPDB_STEM_MAX bytes keeps its first bytes (cut on a UTF-8 boundary)
 * and ends in `~` + 8 hex digits of opdb_name_hash(whole name), so distinct
 * long names stay distinct.  The result is never empty, has no `/` and no
 * control byte.  malloc'd. */
#define OPDB_STEM_MAX 200
#define OPDB_NAME_MAX 243 /* a file name, leaving room for its ".<name>.tmp.XXXXXX" temp file */
OPDB_API char *opdb_safe_stem(const char *name, size_t n);
/* The table file name (stem + ".csv") for the operator type name[0..n),
 * given the names already chosen in this run (used[0..nused), NULL entries
 * skipped): opdb_safe_stem, then `~2`, `~3`... while the name is taken, with
 * a warning for that and for a name that differs from another only in case.
 * Every reader that makes tables from operator types uses it.  malloc'd. */
OPDB_API char *opdb_table_file_name(const char *const *used, size_t nused, const char *name, size_t n);
/* FNV-1a 32 of the bytes. */
OPDB_API uint32_t opdb_name_hash(const char *p, size_t n);
/* 0 when fname can be one file name inside a folder (not empty, no `/`, not
 * `.`/`..`, at most OPDB_NAME_MAX bytes); else -1 with a clear error (control
 * bytes shown as \xNN).  --reference-quirks writers check raw names with it. */
OPDB_API int opdb_check_file_name(const char *fname, opdb_err *err);
/* dir/fname after opdb_check_file_name, verified to lie directly inside dir
 * (malloc'd); NULL with err set otherwise.  Every writer builds its final
 * paths with it. */
OPDB_API char *opdb_path_in_dir(const char *dir, const char *fname, opdb_err *err);
/* The first of names[0..n) equal to name ignoring ASCII case but not equal
 * (a clash on case-insensitive file systems), or NULL.  NULL entries skipped. */
OPDB_API const char *opdb_name_case_clash(const char *const *names, size_t n, const char *name);

#ifdef __cplusplus
}
#endif
#endif
