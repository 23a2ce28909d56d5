// Prints where the installed research library finds plot_report.py from this
// executable (research/report/plot_runner.h); the test installs this program into the
// package's bin/ and expects the package's share/flashtick/plot_report.py.
#include <cstdio>
#include <string>

#include "research/report/plot_runner.h"

int main() {
  const std::string script = flashtick::DefaultPlotScript();
  std::printf("%s\n", script.c_str());
  return script.empty() ? 1 : 0;
}
