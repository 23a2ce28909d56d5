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

// The default script path, the first of these that exists ("" if none):
//   $FLASHTICK_PLOT_SCRIPT (an override: returned as given, even when it does not exist)
//   <exe dir>/plot_report.py
//   <exe dir>/../share/flashtick/plot_report.py   an install tree (cmake --install puts
//       it in <datadir>/flashtick; the path is relative to the install's bindir)
//   share/flashtick/plot_report.py one, two or three folders above <exe dir>   the build
//       tree's copy, for binaries that run where they were built (server/, tests/sweep/)
// <exe dir> is the folder of the running executable (/proc/self/exe). No path is
// compiled in, so an installed binary never looks for the source or build tree.
// The server's --plot-script and flashtick_sweep's --plot-script override all of it.
std::string DefaultPlotScript();

}  // namespace flashtick
