// libFuzzer target: ParseSweepConfig (research/sweep/sweep_config.h), the JSON that
// SubmitExperiment accepts from a client. Besides "no crash, no sanitizer report" it
// checks the header's promise that an accepted configuration survives its own
// ToJson: ParseSweepConfig(ToJson(c)) is accepted and writes the same JSON again.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "research/sweep/sweep_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<flashtick::SweepConfig> c = flashtick::ParseSweepConfig(text);
  if (!c.ok()) {
    if (c.status().message().empty()) abort();
    return 0;
  }
  const std::string once = flashtick::SweepConfigToJson(*c);
  absl::StatusOr<flashtick::SweepConfig> again = flashtick::ParseSweepConfig(once);
  if (!again.ok()) {
    fprintf(stderr, "accepted config not re-accepted: %s\n%s\n",
            std::string(again.status().message()).c_str(), once.c_str());
    abort();
  }
  if (flashtick::SweepConfigToJson(*again) != once) {
    fprintf(stderr, "round trip changed the config:\n%s\n", once.c_str());
    abort();
  }
  return 0;
}
