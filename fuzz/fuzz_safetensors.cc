// libFuzzer target: Safetensors::Parse (model/safetensors.h), the reader of every
// model file and checkpoint data file. The header promises "a corrupt file never
// crashes us"; besides that, an accepted file must serialize and parse back to the
// same tensors, and ToFloat32 of each tensor at its own shape must not crash (it
// refuses I32 with an error).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<flashtick::Safetensors> st = flashtick::Safetensors::Parse(bytes);
  if (!st.ok()) {
    if (st.status().message().empty()) abort();
    return 0;
  }
  for (const auto& [name, t] : st->tensors()) {
    if (t.data.size() != static_cast<size_t>(t.numel()) * flashtick::DTypeSize(t.dtype)) abort();
    (void)st->ToFloat32(name, t.shape);
  }
  absl::StatusOr<std::string> out = st->Serialize();
  if (!out.ok()) return 0;
  absl::StatusOr<flashtick::Safetensors> back = flashtick::Safetensors::Parse(*out);
  if (!back.ok() || back->tensors().size() != st->tensors().size()) abort();
  for (const auto& [name, t] : st->tensors()) {
    auto it = back->tensors().find(name);
    if (it == back->tensors().end() || it->second.data != t.data ||
        it->second.shape != t.shape || it->second.dtype != t.dtype)
      abort();
  }
  return 0;
}
