#ifndef STRATA_CRC32C_H
#define STRATA_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Extends a CRC32C (Castagnoli, reflected polynomial 0x82F63B78) over `length` bytes.
/// Start with `crc = 0`; pass the result back in to checksum data in pieces.
/// The value is the standard CRC-32C: pre- and post-inverted, as in iSCSI and ext4.
uint32_t strata_crc32c_extend(uint32_t crc, const void *data, size_t length);

/// 1 when the hardware instruction is in use, 0 for the portable table fallback.
int strata_crc32c_is_hardware(void);

#endif
