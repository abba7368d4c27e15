// CRC32C for Strata's frame and header checksums (FORMAT.md, "Checksums").
//
// On x86-64 with SSE4.2 the `crc32` instruction runs three independent streams so that its
// 3-cycle latency is hidden; the streams are joined with a carry-less "shift" done by table
// lookups (zeros operator). Elsewhere a slicing-by-8 table is used. Both give the same result.
#include "crc32c.h"
#include <pthread.h>
#include <string.h>

static uint32_t table[8][256];
static int table_ready = 0;
static int use_hw = -1;

static void build_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int s = 1; s < 8; s++) {
            c = table[0][c & 0xff] ^ (c >> 8);
            table[s][n] = c;
        }
    }
    table_ready = 1;
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t n) {
    if (!table_ready) build_table();
    while (n && ((uintptr_t)p & 7)) { crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8); n--; }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
              table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
              table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8; n -= 8;
    }
    while (n--) crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
#include <cpuid.h>

// Multiplies crc by x^(8*len) mod P: the "shift" needed to combine parallel streams.
// GF(2) matrix powers, computed once per block length and cached.
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec) { if (vec & 1) sum ^= *mat; vec >>= 1; mat++; }
    return sum;
}
static void gf2_square(uint32_t *sq, const uint32_t *mat) {
    for (int n = 0; n < 32; n++) sq[n] = gf2_times(mat, mat[n]);
}
// Builds 4 byte-wise tables for the operator "append len zero bytes".
static void zeros_op(uint32_t tbl[4][256], size_t len) {
    uint32_t op[32], sq[32];
    op[0] = 0x82F63B78u;
    uint32_t row = 1;
    for (int n = 1; n < 32; n++) { op[n] = row; row <<= 1; }
    gf2_square(sq, op);   // 2 bits
    gf2_square(op, sq);   // 4 bits
    // op is now the operator for one zero byte... extend to len bytes by squaring.
    do {
        gf2_square(sq, op);
        len >>= 1;
        if (len == 0) { memcpy(op, sq, sizeof op); break; }
        gf2_square(op, sq);
        len >>= 1;
    } while (len);
    for (uint32_t n = 0; n < 256; n++) {
        tbl[0][n] = gf2_times(op, n);
        tbl[1][n] = gf2_times(op, n << 8);
        tbl[2][n] = gf2_times(op, n << 16);
        tbl[3][n] = gf2_times(op, n << 24);
    }
}
static inline uint32_t shift(uint32_t tbl[4][256], uint32_t crc) {
    return tbl[0][crc & 0xff] ^ tbl[1][(crc >> 8) & 0xff] ^ tbl[2][(crc >> 16) & 0xff] ^ tbl[3][crc >> 24];
}

#define LONG_BLOCK 8192
#define SHORT_BLOCK 256
static uint32_t long_shift[4][256], short_shift[4][256];

__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c0 = crc;
    while (n && ((uintptr_t)p & 7)) { c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++); n--; }
    while (n >= 3 * LONG_BLOCK) {
        uint64_t c1 = 0, c2 = 0;
        const unsigned char *end = p + LONG_BLOCK;
        do {
            uint64_t a, b, c;
            memcpy(&a, p, 8); memcpy(&b, p + LONG_BLOCK, 8); memcpy(&c, p + 2 * LONG_BLOCK, 8);
            c0 = __builtin_ia32_crc32di(c0, a);
            c1 = __builtin_ia32_crc32di(c1, b);
            c2 = __builtin_ia32_crc32di(c2, c);
            p += 8;
        } while (p < end);
        c0 = shift(long_shift, (uint32_t)c0) ^ c1;
        c0 = shift(long_shift, (uint32_t)c0) ^ c2;
        p += 2 * LONG_BLOCK; n -= 3 * LONG_BLOCK;
    }
    while (n >= 3 * SHORT_BLOCK) {
        uint64_t c1 = 0, c2 = 0;
        const unsigned char *end = p + SHORT_BLOCK;
        do {
            uint64_t a, b, c;
            memcpy(&a, p, 8); memcpy(&b, p + SHORT_BLOCK, 8); memcpy(&c, p + 2 * SHORT_BLOCK, 8);
            c0 = __builtin_ia32_crc32di(c0, a);
            c1 = __builtin_ia32_crc32di(c1, b);
            c2 = __builtin_ia32_crc32di(c2, c);
            p += 8;
        } while (p < end);
        c0 = shift(short_shift, (uint32_t)c0) ^ c1;
        c0 = shift(short_shift, (uint32_t)c0) ^ c2;
        p += 2 * SHORT_BLOCK; n -= 3 * SHORT_BLOCK;
    }
    while (n >= 8) { uint64_t w; memcpy(&w, p, 8); c0 = __builtin_ia32_crc32di(c0, w); p += 8; n -= 8; }
    while (n--) c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++);
    return (uint32_t)c0;
}

static void init_hw(void) {
    unsigned a, b, c, d;
    use_hw = (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2)) ? 1 : 0;
    if (use_hw) { zeros_op(long_shift, LONG_BLOCK); zeros_op(short_shift, SHORT_BLOCK); }
}
#else
static void init_hw(void) { use_hw = 0; }
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) { return crc_sw(crc, p, n); }
#endif

// Once per process, before any CRC: the first calls may come from several threads at once, and
// init_hw sets use_hw before it fills the shift tables, so a racing caller used empty tables
// (a wrong checksum for 768 bytes and more; found by TSan on StrataObjectTests).
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init(void) { init_hw(); if (!use_hw) build_table(); }

uint32_t strata_crc32c_extend(uint32_t crc, const void *data, size_t length) {
    pthread_once(&init_once, init);
    crc = ~crc;
    crc = use_hw ? crc_hw(crc, (const unsigned char *)data, length)
                 : crc_sw(crc, (const unsigned char *)data, length);
    return ~crc;
}

int strata_crc32c_is_hardware(void) {
    pthread_once(&init_once, init);
    return use_hw;
}
