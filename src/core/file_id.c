/* What identifies the version of a file a run read (fs.h, opdb_file_id):
 * taken when it is read, compared before it is replaced. */
#include <string.h>
#include <sys/stat.h>

#include "opdb/fs.h"

void opdb_file_id_take(const char *path, opdb_file_id *id) {
    struct stat st;
    memset(id, 0, sizeof *id);
    id->taken = true;
    if (stat(path, &st) != 0) {
        id->absent = true;
        return;
    }
    id->dev = (uint64_t)st.st_dev;
    id->ino = (uint64_t)st.st_ino;
    id->size = (uint64_t)st.st_size;
    id->mtime_s = (int64_t)st.st_mtim.tv_sec;
    id->mtime_ns = (int64_t)st.st_mtim.tv_nsec;
    id->ctime_s = (int64_t)st.st_ctim.tv_sec;
    id->ctime_ns = (int64_t)st.st_ctim.tv_nsec;
}

bool opdb_file_id_same(const char *path, const opdb_file_id *id) {
    if (!id->taken) return true;
    opdb_file_id now;
    opdb_file_id_take(path, &now);
    if (id->absent || now.absent) return id->absent == now.absent;
    return now.dev == id->dev && now.ino == id->ino && now.size == id->size && now.mtime_s == id->mtime_s &&
           now.mtime_ns == id->mtime_ns && now.ctime_s == id->ctime_s && now.ctime_ns == id->ctime_ns;
}
