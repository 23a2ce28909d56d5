// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320: the checksum of zlib, gzip and
// PNG), for the checkpoint manifest. Written here rather than linked from zlib so the
// training engine builds on a GPU machine that has only the CUDA toolkit; the tests
// check it against zlib's crc32 and the standard check value crc32("123456789") =
// 0xCBF43926.
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace flashtick {

// crc: the running value (0 to start); returns the CRC of everything so far.
uint32_t Crc32(absl::string_view bytes, uint32_t crc = 0);

}  // namespace flashtick
