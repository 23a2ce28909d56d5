// RunPlotScript: draws the report's PNGs by running plot_report.py (matplotlib)
// on report.json. The script lives in research/report/; the server finds it through
// its --plot-script flag. Running it is best effort: with no Python, no script or
// no matplotlib the report is still complete and says plainly why it has no plots.
// The child runs with argv (no shell), its output captured for that message.
#pragma once

#include <string>
#include <vector>

namespace flashtick {

struct PlotResult {
  std::vector<std::string> files;  // PNG names written under out_dir
  std::string note;                // "" when every plot was drawn, else why not
};

PlotResult RunPlotScript(const std::string& python, const std::string& script,
                         const std::string& report_json, const std::string& out_dir);

// The default script path: $FLASHTICK_PLOT_SCRIPT, else <exe dir>/plot_report.py,
// else <exe dir>/../share/flashtick/plot_report.py, else the source tree's copy
// (compile-time FLASHTICK_SOURCE_ROOT), whichever exists first; "" if none.
std::string DefaultPlotScript();

}  // namespace flashtick
