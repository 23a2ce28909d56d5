// Request validation for ModelInfer: turns an inference::ModelInferRequest into
// a checked [B, N, F] FP32 tensor, or a status a person can act on. Pure (no
// model, no I/O), so every bad case is unit-tested (tests/server/). Codes:
//   INVALID_ARGUMENT   wrong input count/name/datatype/rank, empty tensor, wrong F,
//                      byte size or element count mismatch, NaN/Inf, bad parameter
//   RESOURCE_EXHAUSTED N over the limit (min of --max-seq-len and the model's
//                      max_context), or B·N·F too large to address
// Model lookup (NOT_FOUND for unknown names/versions) is ModelRepository::Find.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "inference/grpc_service.pb.h"

namespace flashtick {

// Wire names of the ModelInfer contract (ModelMetadata reports the same).
inline constexpr char kTicksInputName[] = "ticks";
inline constexpr char kProbsOutputName[] = "probs";
inline constexpr char kFp32Datatype[] = "FP32";
inline constexpr char kLastOnlyParameter[] = "last_only";
// Response parameters naming what ran.
inline constexpr char kKernelPathParameter[] = "kernel_path";
inline constexpr char kDeviceParameter[] = "device";

struct InferLimits {
  int features = 0;       // F of the model
  int64_t max_steps = 0;  // largest N accepted
  // Largest B·N of one request (--max-request-rows; 0: no cap): the work one call
  // may start is bounded by this, not only by the message size.
  int64_t max_rows = 0;
};

struct ValidatedInfer {
  // [B, N, F] row-major, all finite: a view of `raw` or `typed`, whichever holds
  // the request's data. The data is moved out of the request, not copied, so a
  // queued request holds its tensor once (the byte budget of --max-queue-mb
  // counts HeldBytes()).
  absl::Span<const float> ticks() const;
  void SetTicks(absl::Span<const float> values);  // a copy into `typed` (tests, tools)
  int64_t HeldBytes() const;                      // what raw and typed hold

  // raw_input_contents[0], taken from the request (little-endian FP32 bytes). Its
  // buffer comes from operator new, aligned for float; an unaligned one (never
  // seen) is copied into `typed` instead.
  std::string raw;
  google::protobuf::RepeatedField<float> typed;  // fp32_contents, swapped out of the request
  int64_t batch = 0;
  int64_t steps = 0;
  int64_t features = 0;
  bool last_only = false;
  // The request sent raw_input_contents, so the answer uses raw_output_contents;
  // a request with typed contents gets typed fp32_contents back.
  bool raw_output = true;
};

// Validates `request` and moves its tensor data into the result (the request
// keeps its metadata; its raw_input_contents[0] / fp32_contents are left empty).
// On an error the request may have lost its data too.
absl::StatusOr<ValidatedInfer> ValidateModelInfer(inference::ModelInferRequest* request,
                                                  const InferLimits& limits);
// The same on a copy of `request` (tests and callers that keep the request).
absl::StatusOr<ValidatedInfer> ValidateModelInfer(const inference::ModelInferRequest& request,
                                                  const InferLimits& limits);

}  // namespace flashtick
