// libFuzzer target: the CLI's tick CSV reader (client/tick_csv.h ParseTickCsv),
// which `flashtick predict --csv` and `flashtick stream` run on a user's file:
// raw ticks (seconds since the open), feature rows, and the research quotes
// layout through ticks/' reader, cleaning and resampler. Checks: a table
// that parses has steps × kNumFeatures finite features, at most one session of
// steps, and a non-negative spread (crossed quotes are dropped, not sent).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "client/tick_csv.h"
#include "ticks/features.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;  // a day of ticks is bigger, but the rules are per row
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto table = flashtick::ParseTickCsv(text, "fuzz.csv");
  if (!table.ok()) return 0;
  using flashtick::kNumFeatures;
  if (table->steps <= 0 || table->steps > flashtick::kSessionSeconds ||
      table->features.size() != static_cast<size_t>(table->steps) * kNumFeatures) {
    std::abort();
  }
  for (int64_t t = 0; t < table->steps; ++t) {
    for (int f = 0; f < kNumFeatures; ++f) {
      if (!std::isfinite(table->features[t * kNumFeatures + f])) std::abort();
    }
    if (table->from_raw_ticks && table->features[t * kNumFeatures + 1] < 0) std::abort();
  }
  return 0;
}
