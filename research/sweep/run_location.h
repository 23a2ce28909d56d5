// RunLocation: where this process trains an arm, recorded in the arm's result so the
// sweep report can say where each arm ran (docs/research/sweeps.md). A Kubernetes pod
// learns its pod and node names from the downward API (env POD_NAME and NODE_NAME, set
// by the Job the coordinator creates, docs/deploy.md); anywhere else the host name.
#pragma once

#include <string>

namespace flashtick {

// "pod P on node K" (either part alone when only one is set), else "host H".
std::string RunLocation();

}  // namespace flashtick
