#ifndef STRATA_FILE_HINTS_H
#define STRATA_FILE_HINTS_H

#include <stdint.h>

/// Starts writing `length` bytes at `offset` of `fd` back to the device without waiting for
/// it (Linux `sync_file_range` with `SYNC_FILE_RANGE_WRITE`, which Swift's Glibc module does
/// not expose: it needs `_GNU_SOURCE`). A hint: returns 0 or -1 with `errno`, does nothing
/// where the system has no such call, and makes nothing durable.
int strata_start_writeback(int fd, uint64_t offset, uint64_t length);

/// Makes every write so far to `fd` durable: `fdatasync` on Linux; on Apple platforms
/// `fcntl(F_FULLFSYNC)` (plain `fsync` there leaves data in the drive's cache), falling back to
/// `fsync` where the file system refuses it. Returns 0, or -1 with `errno`.
int strata_sync_data(int fd);

#endif
