// Compile-time dispatch from runtime values (after flash-attention's static_switch.h):
//   BOOL_SWITCH(p.causal, kCausal, [&] { return Run<kCausal>(p); });
//   HEADDIM_SWITCH(d, kHeadDim, [&] { return Run<kHeadDim>(p); });
// Each expands to an immediately-invoked lambda, so it can be returned from.
// HEADDIM_SWITCH covers the head dims the CUDA kernels are built for (64, 128, 256);
// callers validate D first, as an unsupported D falls into the 128 branch.
#pragma once

#define BOOL_SWITCH(COND, CONST_NAME, ...)      \
  [&] {                                         \
    if (COND) {                                 \
      constexpr static bool CONST_NAME = true;  \
      return __VA_ARGS__();                     \
    } else {                                    \
      constexpr static bool CONST_NAME = false; \
      return __VA_ARGS__();                     \
    }                                           \
  }()

#define HEADDIM_SWITCH(HEADDIM, CONST_NAME, ...) \
  [&] {                                          \
    if ((HEADDIM) == 64) {                       \
      constexpr static int CONST_NAME = 64;      \
      return __VA_ARGS__();                      \
    } else if ((HEADDIM) == 256) {               \
      constexpr static int CONST_NAME = 256;     \
      return __VA_ARGS__();                      \
    } else {                                     \
      constexpr static int CONST_NAME = 128;     \
      return __VA_ARGS__();                      \
    }                                            \
  }()
