// Uses the installed client library: parses a features CSV with the CLI's reader and
// asks a server that is not there whether it is live, which must fail as UNAVAILABLE
// (the generated stubs, gRPC and the channel all linked from the package).
#include <cstdio>
#include <string>

#include "absl/strings/str_join.h"
#include "client/client_options.h"
#include "client/inference_client.h"
#include "client/tick_csv.h"

int main() {
  const std::string csv = absl::StrJoin(flashtick::FeatureColumnNames(), ",") +
                          "\n0.0001,1.5,10,0,1,1\n-0.0002,1.4,-3,0.01,0.99,0\n";
  absl::StatusOr<flashtick::TickTable> table = flashtick::ParseTickCsv(csv, "inline.csv");
  if (!table.ok() || table->steps != 2 || table->features.size() != 12) {
    std::fprintf(stderr, "ParseTickCsv: %s\n", table.status().ToString().c_str());
    return 1;
  }
  flashtick::ClientOptions options;
  options.server = "127.0.0.1:1";  // nothing listens on port 1
  options.timeout_seconds = 10;
  flashtick::InferenceClient client(options);
  absl::StatusOr<bool> live = client.ServerLive();
  if (live.ok() || !absl::IsUnavailable(live.status())) {
    std::fprintf(stderr, "ServerLive to a closed port: %s\n",
                 live.ok() ? "ok" : live.status().ToString().c_str());
    return 1;
  }
  std::printf("consumer_client: %lld steps parsed; %s\n", static_cast<long long>(table->steps),
              live.status().ToString().c_str());
  return 0;
}
