// CRC-32C (Castagnoli), the standard one: reflected polynomial 0x82F63B78, initial value
// 0xFFFFFFFF, final XOR 0xFFFFFFFF. Check value: Crc32c("123456789") == 0xE3069283. It is the CRC
// of iSCSI, ext4 and RocksDB, and the only CRC in this project's formats and wire protocol
// (docs/formats.md §1).
//
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at start), else a
// table-driven loop; both give the same result (tested).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace archil {

// The CRC of `n` bytes at `data`.
uint32_t Crc32c(const void* data, size_t n);
inline uint32_t Crc32c(std::string_view s) { return Crc32c(s.data(), s.size()); }

// Continues a CRC: Crc32cExtend(Crc32c(a), b) == Crc32c(a + b).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);

// The portable implementation, for tests that compare it with the hardware one.
uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t n);
// True if Crc32c uses the SSE4.2 instruction on this machine.
bool Crc32cIsHardware();

}  // namespace archil
