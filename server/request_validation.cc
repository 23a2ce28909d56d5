// ModelInfer validation (see request_validation.h). Checks run cheapest first:
// tensor metadata, then sizes, then one pass over the data for NaN/Inf, so a
// malformed request costs no copy. Raw bytes are little-endian FP32 per the
// KServe v2 spec; this build assumes a little-endian host (x86-64, aarch64).
#include "server/request_validation.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/finite.h"
#include "common/status_macros.h"

namespace flashtick {
namespace {

std::string ShapeString(const google::protobuf::RepeatedField<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Names of typed-content members other than fp32_contents that are set.
std::string OtherTypedContents(const inference::InferTensorContents& c) {
  std::vector<std::string> set;
  if (c.bool_contents_size()) set.push_back("bool_contents");
  if (c.int_contents_size()) set.push_back("int_contents");
  if (c.int64_contents_size()) set.push_back("int64_contents");
  if (c.uint_contents_size()) set.push_back("uint_contents");
  if (c.uint64_contents_size()) set.push_back("uint64_contents");
  if (c.fp64_contents_size()) set.push_back("fp64_contents");
  if (c.bytes_contents_size()) set.push_back("bytes_contents");
  return absl::StrJoin(set, ", ");
}

absl::Status CheckParameters(const inference::ModelInferRequest& request, bool* last_only) {
  *last_only = false;
  auto it = request.parameters().find(kLastOnlyParameter);
  if (it == request.parameters().end()) return absl::OkStatus();
  if (it->second.parameter_choice_case() != inference::InferParameter::kBoolParam) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request parameter '", kLastOnlyParameter,
        "' must be a bool_param (true: return only the last step's probabilities)"));
  }
  *last_only = it->second.bool_param();
  return absl::OkStatus();
}

absl::Status CheckRequestedOutputs(const inference::ModelInferRequest& request) {
  for (const auto& output : request.outputs()) {
    if (output.name() != kProbsOutputName) {
      return absl::InvalidArgumentError(absl::StrCat("unknown requested output '", output.name(),
                                                     "'; this model has one output, '",
                                                     kProbsOutputName, "' [B, N, classes]"));
    }
  }
  return absl::OkStatus();
}

// Finds the first NaN/Inf and names its position, so the caller can fix the row.
absl::Status CheckFinite(absl::Span<const float> data, int64_t steps, int64_t features) {
  if (AllFinite(data.data(), data.size())) return absl::OkStatus();  // the common case, fast
  for (size_t i = 0; i < data.size(); ++i) {
    if (!std::isfinite(data[i])) {
      const int64_t f = static_cast<int64_t>(i) % features;
      const int64_t t = (static_cast<int64_t>(i) / features) % steps;
      const int64_t b = static_cast<int64_t>(i) / (features * steps);
      return absl::InvalidArgumentError(
          absl::StrCat("input '", kTicksInputName, "' holds a non-finite value (",
                       std::isnan(data[i]) ? "NaN" : "Inf", ") at [", b, ", ", t, ", ", f,
                       "] (row ", b, ", step ", t, ", feature ", f,
                       "); clean or forward-fill the ticks before sending"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Span<const float> ValidatedInfer::ticks() const {
  if (!raw.empty()) {
    return absl::MakeConstSpan(reinterpret_cast<const float*>(raw.data()),
                               raw.size() / sizeof(float));
  }
  return absl::MakeConstSpan(typed.data(), static_cast<size_t>(typed.size()));
}

void ValidatedInfer::SetTicks(absl::Span<const float> values) {
  raw.clear();
  typed.Assign(values.begin(), values.end());
}

int64_t ValidatedInfer::HeldBytes() const {
  return static_cast<int64_t>(raw.capacity()) +
         static_cast<int64_t>(typed.Capacity()) * static_cast<int64_t>(sizeof(float));
}

absl::StatusOr<ValidatedInfer> ValidateModelInfer(const inference::ModelInferRequest& request,
                                                  const InferLimits& limits) {
  inference::ModelInferRequest copy = request;
  return ValidateModelInfer(&copy, limits);
}

absl::StatusOr<ValidatedInfer> ValidateModelInfer(inference::ModelInferRequest* mutable_request,
                                                  const InferLimits& limits) {
  const inference::ModelInferRequest& request = *mutable_request;
  if (request.inputs_size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected exactly one input tensor named '", kTicksInputName,
                     "' (FP32 [B, N, F]), got ", request.inputs_size()));
  }
  const auto& input = request.inputs(0);
  if (input.name() != kTicksInputName) {
    return absl::InvalidArgumentError(absl::StrCat("unknown input '", input.name(),
                                                   "'; the input must be named '",
                                                   kTicksInputName, "'"));
  }
  if (input.datatype() != kFp32Datatype) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", kTicksInputName, "' has datatype '", input.datatype(),
                     "'; this model takes FP32 (convert with numpy .astype(np.float32))"));
  }
  if (input.shape_size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", kTicksInputName, "' has shape ", ShapeString(input.shape()),
                     " (rank ", input.shape_size(), "); expected rank 3: [B, N, F] with F = ",
                     limits.features));
  }
  const int64_t batch = input.shape(0), steps = input.shape(1), features = input.shape(2);
  if (batch < 0 || steps < 0 || features < 0) {
    return absl::InvalidArgumentError(absl::StrCat("input '", kTicksInputName, "' has shape ",
                                                   ShapeString(input.shape()),
                                                   " with a negative dimension"));
  }
  if (batch == 0 || steps == 0 || features == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", kTicksInputName, "' is empty (shape ", ShapeString(input.shape()),
                     "); send at least one row of at least one step"));
  }
  if (features != limits.features) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", kTicksInputName, "' has F = ", features,
                     " features per step; this model takes F = ", limits.features,
                     " (ticks/features.h lists them)"));
  }
  if (steps > limits.max_steps) {
    return absl::ResourceExhaustedError(
        absl::StrCat("sequence length N = ", steps, " exceeds this server's limit of ",
                     limits.max_steps,
                     " steps (the smaller of --max-seq-len and the model's max_context); "
                     "send the most recent ", limits.max_steps, " steps or raise --max-seq-len"));
  }
  if (limits.max_rows > 0 && batch > limits.max_rows / steps) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "input '", kTicksInputName, "' has B·N = ", batch, " × ", steps,
        " rows; this server computes at most ", limits.max_rows,
        " rows per request (--max-request-rows): split the batch"));
  }
  // B·N·F·4 must fit an int64 byte count (a forged shape must not overflow).
  const int64_t row_elements = steps * features;
  if (batch > std::numeric_limits<int64_t>::max() / 4 / row_elements) {
    return absl::ResourceExhaustedError(absl::StrCat("input '", kTicksInputName, "' shape ",
                                                     ShapeString(input.shape()),
                                                     " is too large to address"));
  }
  const int64_t elements = batch * row_elements;
  const int64_t expected_bytes = elements * static_cast<int64_t>(sizeof(float));

  ValidatedInfer out;
  out.batch = batch;
  out.steps = steps;
  out.features = features;
  const auto& contents = input.contents();
  const std::string others = OtherTypedContents(contents);
  if (!others.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("input '", kTicksInputName,
                                                   "' is FP32 but sets ", others,
                                                   "; put the values in fp32_contents or "
                                                   "raw_input_contents"));
  }
  if (request.raw_input_contents_size() > 0) {
    if (contents.fp32_contents_size() > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", kTicksInputName,
                       "' sets both raw_input_contents and contents.fp32_contents; send one"));
    }
    if (request.raw_input_contents_size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("raw_input_contents has ", request.raw_input_contents_size(),
                       " entries for 1 input; send one entry per input"));
    }
    const std::string& raw = request.raw_input_contents(0);
    if (static_cast<int64_t>(raw.size()) != expected_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", kTicksInputName, "' byte size mismatch: shape ", ShapeString(input.shape()),
          " of FP32 needs ", expected_bytes, " bytes, raw_input_contents[0] has ", raw.size()));
    }
    // Taken, not copied: the request's string hands over its buffer.
    out.raw = std::move(*mutable_request->mutable_raw_input_contents(0));
    if (reinterpret_cast<uintptr_t>(out.raw.data()) % alignof(float) != 0) {
      out.typed.Resize(static_cast<int>(elements), 0.0f);
      std::memcpy(out.typed.mutable_data(), out.raw.data(), out.raw.size());
      std::string().swap(out.raw);
    }
    out.raw_output = true;
  } else if (contents.fp32_contents_size() > 0) {
    if (contents.fp32_contents_size() != elements) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", kTicksInputName, "' element count mismatch: shape ",
          ShapeString(input.shape()), " needs ", elements, " values, fp32_contents has ",
          contents.fp32_contents_size()));
    }
    // Swapped, not copied (neither message lives on a protobuf arena here; on one,
    // Swap copies, which is still correct).
    out.typed.Swap(mutable_request->mutable_inputs(0)->mutable_contents()->mutable_fp32_contents());
    out.raw_output = false;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", kTicksInputName, "' carries no data: set raw_input_contents (", expected_bytes,
        " little-endian FP32 bytes) or contents.fp32_contents (", elements, " values)"));
  }
  RETURN_IF_ERROR(CheckFinite(out.ticks(), steps, features));
  RETURN_IF_ERROR(CheckParameters(request, &out.last_only));
  RETURN_IF_ERROR(CheckRequestedOutputs(request));
  return out;
}

}  // namespace flashtick
