// Safetensors parse/serialize (model/safetensors.h). Validation follows the reference
// implementation's rules: header length within the file and ≤ 100 MB, a JSON object
// whose entries have exactly dtype/shape/data_offsets, offsets inside the buffer that
// match shape × dtype size, and tensors that tile the buffer with no gap or overlap.
#include "model/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "kernels/common/element_value.h"
#include "common/file_io.h"

namespace flashtick {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this reader copies bytes as they are");

namespace {

using Json = nlohmann::json;

absl::Status Corrupt(auto... parts) {
  return absl::DataLossError(absl::StrCat("safetensors: ", parts...));
}

bool DTypeFromName(const std::string& s, DType* d) {
  static const std::pair<const char*, DType> kNames[] = {
      {"F32", DType::kF32}, {"F64", DType::kF64}, {"BF16", DType::kBF16},
      {"F16", DType::kF16}, {"I32", DType::kI32}};
  for (const auto& [name, dt] : kNames)
    if (s == name) {
      *d = dt;
      return true;
    }
  return false;
}

// Dtypes the format defines that flashtick does not load.
bool IsOtherSafetensorsDType(const std::string& s) {
  static const char* kOthers[] = {"BOOL", "U8",  "I8",  "I16",     "U16",     "U32",
                                  "I64",  "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4",
                                  "F6_E2M3", "F6_E3M2", "C64"};
  return std::any_of(std::begin(kOthers), std::end(kOthers), [&](const char* o) { return s == o; });
}

struct Entry {
  std::string name;
  uint64_t begin, end;
};

absl::Status ParseEntry(const std::string& name, const Json& v, uint64_t buffer_bytes,
                        SafetensorsTensor* t, Entry* e) {
  if (!v.is_object()) return Corrupt("entry '", name, "' is not a JSON object");
  for (const auto& [key, unused] : v.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      return Corrupt("entry '", name, "' has an unknown key '", key, "'");
  if (!v.contains("dtype") || !v["dtype"].is_string())
    return Corrupt("entry '", name, "' has no string 'dtype'");
  const std::string dtype = v["dtype"].get<std::string>();
  if (!DTypeFromName(dtype, &t->dtype)) {
    if (IsOtherSafetensorsDType(dtype))
      return absl::InvalidArgumentError(absl::StrCat(
          "safetensors: tensor '", name, "' has dtype ", dtype,
          ", which flashtick does not load (supported: F32, F64, BF16, F16, I32)"));
    return Corrupt("tensor '", name, "' has an unknown dtype '", dtype, "'");
  }
  if (!v.contains("shape") || !v["shape"].is_array())
    return Corrupt("entry '", name, "' has no 'shape' array");
  uint64_t numel = 1;
  for (const Json& d : v["shape"]) {
    if (!d.is_number_unsigned())
      return Corrupt("tensor '", name, "' has a shape entry that is not a non-negative integer");
    const uint64_t n = d.get<uint64_t>();
    if (n > (uint64_t{1} << 62) || (n != 0 && numel > (uint64_t{1} << 62) / n))
      return Corrupt("tensor '", name, "' has a shape whose size overflows");
    numel *= n;
    t->shape.push_back(static_cast<int64_t>(n));
  }
  if (t->shape.size() > kMaxRank)
    return absl::InvalidArgumentError(absl::StrCat("safetensors: tensor '", name, "' has rank ",
                                                   t->shape.size(), " (at most ", kMaxRank, ")"));
  const auto& off = v.contains("data_offsets") ? v["data_offsets"] : Json();
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
      !off[1].is_number_unsigned())
    return Corrupt("tensor '", name, "' needs 'data_offsets' [begin, end] of non-negative integers");
  e->name = name;
  e->begin = off[0].get<uint64_t>();
  e->end = off[1].get<uint64_t>();
  if (e->begin > e->end || e->end > buffer_bytes)
    return Corrupt("tensor '", name, "' has data_offsets [", e->begin, ", ", e->end,
                   "] outside the ", buffer_bytes, "-byte data buffer (truncated file?)");
  const uint64_t want = numel * DTypeSize(t->dtype);
  if (e->end - e->begin != want)
    return Corrupt("tensor '", name, "' spans ", e->end - e->begin, " bytes but ", dtype, " ",
                   absl::StrJoin(t->shape, "x"), " needs ", want);
  return absl::OkStatus();
}

}  // namespace

int64_t SafetensorsTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const char* SafetensorsDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "F32";
    case DType::kF64: return "F64";
    case DType::kBF16: return "BF16";
    case DType::kF16: return "F16";
    case DType::kI32: return "I32";
  }
  return "?";
}

absl::StatusOr<Safetensors> Safetensors::Parse(absl::string_view bytes) {
  if (bytes.size() < 8)
    return Corrupt("file is ", bytes.size(), " bytes, shorter than the 8-byte header length");
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxHeaderBytes)
    return Corrupt("header length ", n, " exceeds the ", kMaxHeaderBytes,
                   "-byte limit (not a safetensors file?)");
  if (n > bytes.size() - 8)
    return Corrupt("header length ", n, " runs past the end of the ", bytes.size(),
                   "-byte file (truncated?)");
  const absl::string_view header = bytes.substr(8, n);
  if (header.empty() || header[0] != '{') return Corrupt("header does not start with '{'");
  // nlohmann keeps the last of duplicate keys; the callback catches them instead.
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  Json::parser_callback_t cb = [&](int, Json::parse_event_t ev, Json& parsed) {
    if (ev == Json::parse_event_t::object_start) keys.emplace_back();
    if (ev == Json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (ev == Json::parse_event_t::key && !keys.empty() && parsed.is_string() &&
        !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  Json j = Json::parse(header.begin(), header.end(), cb, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Corrupt("header is not a valid JSON object");
  if (!duplicate.empty()) return Corrupt("header names '", duplicate, "' twice");

  Safetensors st;
  const uint64_t buffer_bytes = bytes.size() - 8 - n;
  std::vector<Entry> entries;
  for (const auto& [name, v] : j.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) return Corrupt("__metadata__ is not a JSON object");
      for (const auto& [k, mv] : v.items()) {
        if (!mv.is_string()) return Corrupt("__metadata__ value for '", k, "' is not a string");
        st.metadata_[k] = mv.get<std::string>();
      }
      continue;
    }
    SafetensorsTensor t;
    Entry e;
    RETURN_IF_ERROR(ParseEntry(name, v, buffer_bytes, &t, &e));
    st.tensors_[name] = std::move(t);
    entries.push_back(e);
  }
  // The tensors must tile the buffer: sorted by offset, each starts where the last ended.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const Entry& e : entries) {
    if (e.begin < at) return Corrupt("tensor '", e.name, "' overlaps the tensor before it");
    if (e.begin > at)
      return Corrupt("bytes [", at, ", ", e.begin, ") of the data buffer belong to no tensor");
    at = e.end;
    st.tensors_[e.name].data.assign(bytes.data() + 8 + n + e.begin, e.end - e.begin);
  }
  if (at != buffer_bytes)
    return Corrupt("the data buffer has ", buffer_bytes - at,
                   " trailing bytes that belong to no tensor");
  return st;
}

absl::StatusOr<Safetensors> Safetensors::ReadFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  absl::StatusOr<Safetensors> st = Parse(bytes);
  if (!st.ok())
    return absl::Status(st.status().code(), absl::StrCat(path, ": ", st.status().message()));
  return st;
}

absl::StatusOr<std::string> Safetensors::Serialize() const {
  Json header = Json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors_) {
    if (name.empty() || name == "__metadata__")
      return absl::InvalidArgumentError(absl::StrCat("safetensors: invalid tensor name '", name, "'"));
    header[name] = {{"dtype", SafetensorsDTypeName(t.dtype)},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  std::string text;
  try {  // dump throws only on invalid UTF-8 in a name or metadata string
    text = header.dump();
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("safetensors: ", e.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data buffer starts 8-byte aligned
  const uint64_t n = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  out.reserve(8 + n + offset);
  out += text;
  for (const auto& [name, t] : tensors_) out += t.data;
  return out;
}

absl::Status Safetensors::WriteFile(const std::string& path) const {
  ASSIGN_OR_RETURN(std::string bytes, Serialize());
  return WriteFileAtomic(path, bytes);
}

absl::Status Safetensors::Add(const std::string& name, DType dtype, std::vector<int64_t> shape,
                              const void* data) {
  SafetensorsTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (int64_t d : t.shape)
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("safetensors: '", name, "' has a negative dim"));
  const size_t bytes = static_cast<size_t>(t.numel()) * DTypeSize(dtype);
  t.data.assign(static_cast<const char*>(data), bytes);
  tensors_[name] = std::move(t);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> Safetensors::ToFloat32(
    const std::string& name, absl::Span<const int64_t> expect_shape) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    return absl::NotFoundError(absl::StrCat("safetensors: no tensor '", name, "'"));
  const SafetensorsTensor& t = it->second;
  if (!std::equal(t.shape.begin(), t.shape.end(), expect_shape.begin(), expect_shape.end()))
    return absl::InvalidArgumentError(absl::StrCat("safetensors: tensor '", name, "' has shape [",
                                                   absl::StrJoin(t.shape, ", "), "], expected [",
                                                   absl::StrJoin(expect_shape, ", "), "]"));
  const size_t n = static_cast<size_t>(t.numel());
  std::vector<float> out(n);
  if (t.dtype == DType::kI32)
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors: tensor '", name, "' is I32; weights must be floating point"));
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(ElementValue(t.dtype, t.data.data(), i));
  return out;
}

}  // namespace flashtick
