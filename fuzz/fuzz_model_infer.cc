// libFuzzer target: KServe v2 ModelInferRequest decoding (protobuf wire bytes, as gRPC
// hands them to the service) and ValidateModelInfer (server/request_validation.h).
// The first input byte picks the model's limits (F in 1..8, max N in 1..256) so the
// F-mismatch and N-limit branches are both reachable; the rest is the wire message.
// Besides "no crash, no sanitizer report" it checks the validator's promise: an
// accepted request is a finite [B, N, F] tensor that fits the limits.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "google/protobuf/stubs/logging.h"
#include "inference/grpc_service.pb.h"
#include "server/request_validation.h"

// Protobuf logs every invalid UTF-8 string it parses; a fuzzer makes millions.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  flashtick::InferLimits limits;
  limits.features = 1 + (data[0] & 7);
  limits.max_steps = 1 + ((data[0] >> 3) & 31) * 8;
  inference::ModelInferRequest request;
  if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  // The server's path: the tensor is moved out of the request.
  absl::StatusOr<flashtick::ValidatedInfer> v = flashtick::ValidateModelInfer(&request, limits);
  if (!v.ok()) {
    if (v.status().message().empty()) abort();  // every refusal must say why
    return 0;
  }
  if (v->features != limits.features || v->steps < 1 || v->steps > limits.max_steps ||
      v->batch < 1 ||
      static_cast<int64_t>(v->ticks().size()) != v->batch * v->steps * v->features)
    abort();
  for (float x : v->ticks())
    if (!std::isfinite(x)) abort();
  return 0;
}
