#define _GNU_SOURCE
#include "file_hints.h"

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

int strata_start_writeback(int fd, uint64_t offset, uint64_t length) {
#if defined(__linux__)
    if (offset > INT64_MAX || length > INT64_MAX - offset) return -1;
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
    return 0;
#endif
}

int strata_sync_data(int fd) {
#if defined(__APPLE__)
    if (fcntl(fd, F_FULLFSYNC) == 0) return 0;
    return fsync(fd);
#else
    return fdatasync(fd);
#endif
}
