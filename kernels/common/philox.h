// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw 2011
// ("Parallel random numbers: as easy as 1, 2, 3", SC'11), as Random123 and cuRAND
// define it. A pure function of a 128-bit counter and a 64-bit key: element i of a
// random tensor is computed from i alone, so a GPU thread needs no state and no
// sequence to skip through, and the CPU reference produces the very same bits.
// Checked against Random123's known-answer vectors (tests/ops_cpu/hutchinson_test.cc).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define FT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FT_HOST_DEVICE inline
#endif

namespace flashtick {

struct Philox4x32 {
  uint32_t v[4];
};

// One round: two 32×32 → 64-bit products, halves swapped and xored with the key.
FT_HOST_DEVICE Philox4x32 PhiloxRound(Philox4x32 c, uint32_t k0, uint32_t k1) {
  const uint64_t p0 = uint64_t{0xD2511F53u} * c.v[0];
  const uint64_t p1 = uint64_t{0xCD9E8D57u} * c.v[2];
  return Philox4x32{{static_cast<uint32_t>(p1 >> 32) ^ c.v[1] ^ k0, static_cast<uint32_t>(p1),
                     static_cast<uint32_t>(p0 >> 32) ^ c.v[3] ^ k1, static_cast<uint32_t>(p0)}};
}

// Ten rounds, the key bumped by the Weyl constants (golden ratio, √3 − 1) between them.
FT_HOST_DEVICE Philox4x32 Philox4x32_10(Philox4x32 counter, uint32_t k0, uint32_t k1) {
  counter = PhiloxRound(counter, k0, k1);
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int r = 1; r < 10; ++r) {
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
    counter = PhiloxRound(counter, k0, k1);
  }
  return counter;
}

// The 128 random bits of block b of a Rademacher vector drawn with `seed`
// (kernels/ops/hutchinson.h): Philox4x32-10(counter = b, key = seed). Element i takes
// bit i mod 128 of block ⌊i/128⌋ (RademacherBit).
FT_HOST_DEVICE Philox4x32 RademacherBlock(uint64_t seed, uint64_t block) {
  return Philox4x32_10(
      Philox4x32{{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u}},
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}
FT_HOST_DEVICE bool RademacherBit(const Philox4x32& block_bits, int64_t i) {
  const int bit = static_cast<int>(i & 127);
  return (block_bits.v[bit >> 5] >> (bit & 31)) & 1u;
}

// The sign of element i of that vector on its own. true: +1.
FT_HOST_DEVICE bool RademacherPositive(uint64_t seed, int64_t i) {
  return RademacherBit(RademacherBlock(seed, static_cast<uint64_t>(i) >> 7), i);
}

}  // namespace flashtick
