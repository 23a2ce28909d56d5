// ModelInfer validation: every bad request maps to its specific status code and a
// message naming what to fix; good requests (raw bytes or typed fp32 contents)
// come back as the same [B, N, F] numbers. Pure: no model, no server.
#include "server/request_validation.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/inference/inference_core.h"

namespace flashtick {
namespace {

constexpr int kF = 6;
constexpr int64_t kMaxSteps = 100;

InferLimits Limits() { return InferLimits{kF, kMaxSteps}; }

std::vector<float> AsVector(absl::Span<const float> s) { return {s.begin(), s.end()}; }

std::vector<float> Ramp(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.25f * static_cast<float>(i) - 3.0f;
  return v;
}

// A valid request [B, N, F] with raw_input_contents.
inference::ModelInferRequest RawRequest(int64_t b, int64_t n, int64_t f = kF) {
  inference::ModelInferRequest request;
  request.set_model_name("m");
  auto* input = request.add_inputs();
  input->set_name("ticks");
  input->set_datatype("FP32");
  input->add_shape(b);
  input->add_shape(n);
  input->add_shape(f);
  const std::vector<float> data = Ramp(b * n * f);
  request.add_raw_input_contents()->assign(reinterpret_cast<const char*>(data.data()),
                                           data.size() * sizeof(float));
  return request;
}

void ExpectError(const inference::ModelInferRequest& request, absl::StatusCode code,
                 const std::string& fragment) {
  auto result = ValidateModelInfer(request, Limits());
  ASSERT_FALSE(result.ok()) << "expected " << absl::StatusCodeToString(code);
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_NE(std::string(result.status().message()).find(fragment), std::string::npos)
      << "message '" << result.status().message() << "' lacks '" << fragment << "'";
}

TEST(RequestValidation, RawRequestPassesWithTheSameNumbers) {
  auto result = ValidateModelInfer(RawRequest(2, 7), Limits());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->batch, 2);
  EXPECT_EQ(result->steps, 7);
  EXPECT_EQ(result->features, kF);
  EXPECT_FALSE(result->last_only);
  EXPECT_TRUE(result->raw_output);
  EXPECT_EQ(AsVector(result->ticks()), Ramp(2 * 7 * kF));
}

TEST(RequestValidation, TypedFp32ContentsPassAndAskForTypedOutput) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.clear_raw_input_contents();
  const std::vector<float> data = Ramp(3 * kF);
  request.mutable_inputs(0)->mutable_contents()->mutable_fp32_contents()->Assign(data.begin(),
                                                                                 data.end());
  auto result = ValidateModelInfer(request, Limits());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->raw_output);
  EXPECT_EQ(AsVector(result->ticks()), data);
}

// A queued ModelInfer used to hold its tensor twice (the request's bytes and the
// validated copy). The data is now moved out of the request: the validated
// tensor is the request's own buffer, and the queue's byte count is one copy.
TEST(RequestValidation, TheTensorIsMovedOutOfTheRequestNotCopied) {
  constexpr int64_t kSteps = 100, kBatch = 437;  // ~1 MiB of FP32
  InferLimits limits = Limits();
  inference::ModelInferRequest raw = RawRequest(kBatch, kSteps);
  const int64_t tensor_bytes = kBatch * kSteps * kF * static_cast<int64_t>(sizeof(float));
  const char* raw_buffer = raw.raw_input_contents(0).data();
  auto from_raw = ValidateModelInfer(&raw, limits);
  ASSERT_TRUE(from_raw.ok()) << from_raw.status();
  EXPECT_EQ(reinterpret_cast<const char*>(from_raw->ticks().data()), raw_buffer);
  EXPECT_TRUE(raw.raw_input_contents(0).empty());
  EXPECT_EQ(AsVector(from_raw->ticks()), Ramp(kBatch * kSteps * kF));

  InferenceCore::Prepared prepared;
  prepared.input = std::move(from_raw).value();
  const int64_t queued = InferenceCore::QueuedBytes(prepared, raw);
  EXPECT_GE(queued, tensor_bytes);
  EXPECT_LT(queued, tensor_bytes + 4096) << "the tensor is counted more than once";

  inference::ModelInferRequest typed = RawRequest(kBatch, kSteps);
  typed.clear_raw_input_contents();
  const std::vector<float> data = Ramp(kBatch * kSteps * kF);
  typed.mutable_inputs(0)->mutable_contents()->mutable_fp32_contents()->Assign(data.begin(),
                                                                               data.end());
  const float* typed_buffer = typed.inputs(0).contents().fp32_contents().data();
  auto from_typed = ValidateModelInfer(&typed, limits);
  ASSERT_TRUE(from_typed.ok()) << from_typed.status();
  EXPECT_EQ(from_typed->ticks().data(), typed_buffer);
  EXPECT_EQ(typed.inputs(0).contents().fp32_contents_size(), 0);
  EXPECT_EQ(AsVector(from_typed->ticks()), data);
  InferenceCore::Prepared typed_prepared;
  typed_prepared.input = std::move(from_typed).value();
  const int64_t typed_queued = InferenceCore::QueuedBytes(typed_prepared, typed);
  EXPECT_GE(typed_queued, tensor_bytes);
  EXPECT_LT(typed_queued, tensor_bytes + 4096) << "the tensor is counted more than once";
}

TEST(RequestValidation, LastOnlyParameter) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  (*request.mutable_parameters())["last_only"].set_bool_param(true);
  auto result = ValidateModelInfer(request, Limits());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->last_only);
  (*request.mutable_parameters())["last_only"].set_string_param("yes");
  ExpectError(request, absl::StatusCode::kInvalidArgument, "must be a bool_param");
}

TEST(RequestValidation, NSeqAtTheLimitPassesAndOneMoreIsResourceExhausted) {
  EXPECT_TRUE(ValidateModelInfer(RawRequest(1, kMaxSteps), Limits()).ok());
  ExpectError(RawRequest(1, kMaxSteps + 1), absl::StatusCode::kResourceExhausted,
              "exceeds this server's limit of 100 steps");
}

TEST(RequestValidation, RowsPerRequestAreCapped) {
  InferLimits limits = Limits();
  limits.max_rows = 4 * kMaxSteps;
  EXPECT_TRUE(ValidateModelInfer(RawRequest(4, kMaxSteps), limits).ok());
  auto over = ValidateModelInfer(RawRequest(5, kMaxSteps), limits);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(over.status().message()).find("--max-request-rows"), std::string::npos);
}

TEST(RequestValidation, WrongInputCount) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.clear_inputs();
  ExpectError(request, absl::StatusCode::kInvalidArgument, "exactly one input tensor");
  request = RawRequest(1, 3);
  *request.add_inputs() = request.inputs(0);
  ExpectError(request, absl::StatusCode::kInvalidArgument, "got 2");
}

TEST(RequestValidation, WrongInputName) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.mutable_inputs(0)->set_name("INPUT0");
  ExpectError(request, absl::StatusCode::kInvalidArgument, "unknown input 'INPUT0'");
}

TEST(RequestValidation, WrongDatatype) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.mutable_inputs(0)->set_datatype("FP64");
  ExpectError(request, absl::StatusCode::kInvalidArgument, "datatype 'FP64'");
}

TEST(RequestValidation, WrongRank) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.mutable_inputs(0)->clear_shape();
  request.mutable_inputs(0)->add_shape(3);
  request.mutable_inputs(0)->add_shape(kF);
  ExpectError(request, absl::StatusCode::kInvalidArgument, "expected rank 3");
}

TEST(RequestValidation, WrongFeatureCount) {
  ExpectError(RawRequest(1, 3, 5), absl::StatusCode::kInvalidArgument, "this model takes F = 6");
}

TEST(RequestValidation, EmptyAndNegativeShapes) {
  ExpectError(RawRequest(1, 0), absl::StatusCode::kInvalidArgument, "is empty");
  ExpectError(RawRequest(0, 3), absl::StatusCode::kInvalidArgument, "is empty");
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.mutable_inputs(0)->set_shape(1, -3);
  ExpectError(request, absl::StatusCode::kInvalidArgument, "negative dimension");
}

TEST(RequestValidation, ByteSizeMismatch) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.mutable_raw_input_contents(0)->pop_back();
  ExpectError(request, absl::StatusCode::kInvalidArgument, "byte size mismatch");
  request = RawRequest(1, 3);
  request.mutable_inputs(0)->set_shape(1, 4);  // claims 4 steps, carries 3
  ExpectError(request, absl::StatusCode::kInvalidArgument, "needs 96 bytes");
}

TEST(RequestValidation, ElementCountMismatchInTypedContents) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.clear_raw_input_contents();
  request.mutable_inputs(0)->mutable_contents()->add_fp32_contents(1.0f);
  ExpectError(request, absl::StatusCode::kInvalidArgument, "element count mismatch");
}

TEST(RequestValidation, NoDataAndBothKindsOfData) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.clear_raw_input_contents();
  ExpectError(request, absl::StatusCode::kInvalidArgument, "carries no data");
  request = RawRequest(1, 3);
  request.mutable_inputs(0)->mutable_contents()->add_fp32_contents(1.0f);
  ExpectError(request, absl::StatusCode::kInvalidArgument, "sets both");
  request = RawRequest(1, 3);
  request.mutable_inputs(0)->mutable_contents()->add_int_contents(1);
  ExpectError(request, absl::StatusCode::kInvalidArgument, "sets int_contents");
  request = RawRequest(1, 3);
  *request.add_raw_input_contents() = request.raw_input_contents(0);
  ExpectError(request, absl::StatusCode::kInvalidArgument, "one entry per input");
}

TEST(RequestValidation, NanAndInfNameTheirPosition) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    inference::ModelInferRequest request = RawRequest(2, 5);
    std::string& raw = *request.mutable_raw_input_contents(0);
    const int64_t index = (1 * 5 + 3) * kF + 2;  // row 1, step 3, feature 2
    std::memcpy(&raw[index * sizeof(float)], &bad, sizeof(float));
    ExpectError(request, absl::StatusCode::kInvalidArgument,
                std::isnan(bad) ? "(NaN) at [1, 3, 2]" : "(Inf) at [1, 3, 2]");
  }
}

TEST(RequestValidation, ShapeOverflowIsRefused) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.mutable_inputs(0)->set_shape(0, std::numeric_limits<int64_t>::max() / 8);
  ExpectError(request, absl::StatusCode::kResourceExhausted, "too large to address");
}

TEST(RequestValidation, UnknownRequestedOutput) {
  inference::ModelInferRequest request = RawRequest(1, 3);
  request.add_outputs()->set_name("logits");
  ExpectError(request, absl::StatusCode::kInvalidArgument, "unknown requested output 'logits'");
  request = RawRequest(1, 3);
  request.add_outputs()->set_name("probs");
  EXPECT_TRUE(ValidateModelInfer(request, Limits()).ok());
}

}  // namespace
}  // namespace flashtick
