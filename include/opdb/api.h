/* What every public header shares: the library's version (CMakeLists.txt
 * reads its project version from here, so the two cannot differ) and the
 * export marker.  libopdb is built with -fvisibility=hidden and a version
 * script (libopdb.map, version OPDB_1): libopdb.so exports only the
 * functions declared OPDB_API in the installed headers; OPDB_API in the
 * other, internal headers of include/opdb/ serves the static library's
 * users (ctest lint.exported_symbols holds the three in step). */
#ifndef OPDB_API_H
#define OPDB_API_H

#define OPDB_VERSION_MAJOR 0
#define OPDB_VERSION_MINOR 1
#define OPDB_VERSION_PATCH 0
#define OPDB_VERSION_STR_(x) #x
#define OPDB_VERSION_STR(x) OPDB_VERSION_STR_(x)
/* "MAJOR.MINOR.PATCH", made from the three numbers above */
#define OPDB_VERSION_STRING \
    OPDB_VERSION_STR(OPDB_VERSION_MAJOR) "." OPDB_VERSION_STR(OPDB_VERSION_MINOR) "." OPDB_VERSION_STR(OPDB_VERSION_PATCH)
/* One number to compare: 10000 * major + 100 * minor + patch. */
#define OPDB_VERSION_NUMBER (OPDB_VERSION_MAJOR * 10000 + OPDB_VERSION_MINOR * 100 + OPDB_VERSION_PATCH)

#if defined(__GNUC__)
#define OPDB_API __attribute__((visibility("default")))
#else
#define OPDB_API
#endif

/* Options structs. Each starts with `size_t size` and is filled with its
 * defaults by opdb_<x>_init(o), a macro over opdb_<x>_init_sized(o,
 * sizeof *o): the library writes only as many bytes as the caller's struct
 * has and records that size in it, so a program (or a ctypes binding) built
 * against an older or newer header is never written past its struct. A
 * call given a size this library does not know refuses it with a usage
 * error; opdb_qdb_open reads the fields the caller's size covers and takes
 * the defaults of the rest. */

#endif
