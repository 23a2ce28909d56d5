// SweepClient: the typed flashtick.v1.Experiments client the `flashtick sweep ...`
// commands share. Unary calls take the CLI's per-call deadline; Watch streams
// until the experiment ends (or the deadline), calling on_event for every
// progress message. gRPC errors come back as absl::Status with the server's
// message.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/client_options.h"
#include "flashtick/v1/experiments.grpc.pb.h"

namespace flashtick {

class SweepClient {
 public:
  explicit SweepClient(const ClientOptions& options);

  absl::StatusOr<v1::Experiment> Submit(const v1::SubmitSweepRequest& request);
  // The full configuration JSON the server resolves the request to; submits nothing.
  absl::StatusOr<std::string> ResolveConfig(const v1::SubmitSweepRequest& request);
  absl::StatusOr<v1::Experiment> Get(const std::string& id);
  absl::StatusOr<v1::ListExperimentsResponse> List(const v1::ListExperimentsRequest& request);
  absl::StatusOr<v1::Experiment> Cancel(const std::string& id);
  absl::Status Delete(const std::string& id);
  absl::StatusOr<v1::GetReportResponse> Report(const v1::GetReportRequest& request);
  absl::StatusOr<v1::PromoteArmResponse> Promote(const v1::PromoteArmRequest& request);
  // OK when the stream ended because the experiment ended.
  absl::Status Watch(const std::string& id,
                     const std::function<void(const v1::ExperimentProgress&)>& on_event);

 private:
  ClientOptions options_;
  std::unique_ptr<v1::Experiments::Stub> stub_;
};

// "exp-000001: demo SUCCEEDED ..." style helpers shared by the commands.
std::string StateName(v1::ExperimentState state);  // "succeeded", "running", ...
std::string Duration(double seconds);              // "1h02m", "3m05s", "42s"

}  // namespace flashtick
