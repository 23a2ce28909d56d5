// --attention-impl {auto,flash,cudnn,flash_sm90a} for every command-line tool that runs attention on
// the GPU (flashtickd, flashtick_sweep, the benches): sets the process-wide override of
// kernels/attention_dispatch.h, which wins over FLASHTICK_ATTENTION_IMPL
// (docs/kernels/cudnn.md). Header-only so kernels/ need not depend on CLI11.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "kernels/attention_dispatch.h"

namespace flashtick {

inline CLI::Option* AddAttentionImplFlag(CLI::App* app) {
  return app
      ->add_option_function<std::string>(
          "--attention-impl",
          [](const std::string& v) {
            if (auto m = ParseAttentionImpl(v); m.ok()) SetAttentionImplOverride(*m);
          },
          "attention on CUDA: auto (time ours and cuDNN once per shape bucket, keep the "
          "faster), flash (ours), cudnn, or flash_sm90a (ours, on the Hopper wgmma kernels "
          "where they run: forward D = 64 or 128, backward D = 64, on an H100/H200; not yet "
          "validated on a GPU); "
          "default: $FLASHTICK_ATTENTION_IMPL, else auto")
      ->check(CLI::IsMember({"auto", "flash", "ours", "cudnn", "flash_sm90a"}));
}

}  // namespace flashtick
