#define _GNU_SOURCE
#include "file_hints.h"

#include <fcntl.h>
#include <stdint.h>

int strata_start_writeback(int fd, uint64_t offset, uint64_t length) {
#if defined(__linux__)
    if (offset > INT64_MAX || length > INT64_MAX - offset) return -1;
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)length;
    return 0;
#endif
}
