// libFuzzer target: the tick file readers of ticks/ — ParseQuotesCsv and
// ParseBarsCsv (both through CsvTable and ParseTimestamp), then, for what parses,
// the cleaning pass and the resampling onto session grids, as `flashtick sweep`
// and the CSV data source of a sweep run them on a user's file. The first byte
// picks the reader and a small grid (so a day's grid stays small and fast); the
// rest is the file. Checks: cleaning keeps a subset in time order.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "ticks/bars.h"
#include "ticks/cleaning.h"
#include "ticks/quotes.h"
#include "ticks/resample.h"
#include "ticks/timestamp.h"

namespace {

flashtick::SessionSpec SmallSpec(uint8_t b) {
  flashtick::SessionSpec spec;
  spec.open_second = 9 * 3600 + (b & 3) * 1800;
  spec.step_us = 1000000LL * (1 + ((b >> 2) & 3));
  spec.steps = 64;
  spec.clock_shift_seconds = (b & 32) ? 7 * 3600 : 0;
  spec.weekdays_only = (b & 64) != 0;
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const absl::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)flashtick::ParseTimestamp(text.substr(0, 40));
  const flashtick::SessionSpec spec = SmallSpec(mode);
  if (mode & 128) {
    auto bars = flashtick::ParseBarsCsv(text, "fuzz bars");
    if (!bars.ok()) return 0;
    flashtick::CleanBarSeries clean = flashtick::CleanBars(*bars);
    if (clean.bars.size() > bars->size()) abort();
    for (size_t i = 1; i < clean.bars.size(); ++i)
      if (clean.bars[i].time_us < clean.bars[i - 1].time_us) abort();
    (void)flashtick::ResampleBars(clean.bars, spec, "FUZZ");
  } else {
    auto ticks = flashtick::ParseQuotesCsv(text, "fuzz quotes");
    if (!ticks.ok()) return 0;
    flashtick::CleanQuotes clean = flashtick::CleanTicks(*ticks);
    if (clean.ticks.size() > ticks->size()) abort();
    for (size_t i = 1; i < clean.ticks.size(); ++i)
      if (clean.ticks[i].time_us < clean.ticks[i - 1].time_us) abort();
    (void)flashtick::ResampleQuotes(clean.ticks, spec, "FUZZ");
  }
  return 0;
}
