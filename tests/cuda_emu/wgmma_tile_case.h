// The cases and tile size of the wgmma tile GEMM (tests/cuda_emu/wgmma_tile_gemm.cuh),
// apart from its device code so host-only test files can name them.
#pragma once

namespace flashtick::testing {

// Layouts of A and B in shared memory (wgmma_tile_gemm.cuh describes each).
enum class WgmmaCase : int { kKMajorSw128, kBMnMajorSw128, kARegisters, kInterleave, kAMnMajorSw128 };

inline constexpr int kWgmmaTile = 64;                                // M = N = K
inline constexpr int kWgmmaTileBytes = kWgmmaTile * kWgmmaTile * 2;  // one 16-bit tile, 8 KB

}  // namespace flashtick::testing
