// Safetensors reader/writer: round trip of every supported dtype with metadata,
// interop with the reference Python implementation both ways, and corrupt files
// (truncated, bad JSON, offsets out of range, gaps, overlaps, wrong dtype, duplicate
// names, huge header length, random byte flips): each a clear error, never a crash.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "gtest/gtest.h"
#include "common/file_io.h"
#include "model/safetensors.h"

namespace flashtick {
namespace {

std::string TempDir() {
  std::string d = ::testing::TempDir() + "/safetensors_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(d);
  return d;
}

Safetensors Sample() {
  Safetensors st;
  std::vector<float> f = {1.5f, -2.0f, 3.25f, 0.0f, 1e-30f, -7.0f};
  std::vector<double> d = {3.141592653589793, -1e300};
  std::vector<uint16_t> bf = {0x3f80, 0xc000, 0x7f80};
  std::vector<uint16_t> h = {0x3c00, 0x0001};
  std::vector<int32_t> i = {7, -9, 2147483647, 0};
  EXPECT_TRUE(st.Add("blocks.0.w", DType::kF32, {2, 3}, f.data()).ok());
  EXPECT_TRUE(st.Add("d", DType::kF64, {2}, d.data()).ok());
  EXPECT_TRUE(st.Add("bf", DType::kBF16, {3}, bf.data()).ok());
  EXPECT_TRUE(st.Add("h", DType::kF16, {1, 2}, h.data()).ok());
  EXPECT_TRUE(st.Add("ints", DType::kI32, {2, 2}, i.data()).ok());
  EXPECT_TRUE(st.Add("empty", DType::kF32, {0, 4}, nullptr).ok());
  EXPECT_TRUE(st.Add("scalar", DType::kF32, {}, f.data()).ok());
  st.metadata()["format"] = "pt";
  st.metadata()["config"] = "{\"width\": 64}";
  return st;
}

void ExpectEqual(const Safetensors& a, const Safetensors& b) {
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const auto& [name, t] : a.tensors()) {
    auto it = b.tensors().find(name);
    ASSERT_NE(it, b.tensors().end()) << name;
    EXPECT_EQ(t.dtype, it->second.dtype) << name;
    EXPECT_EQ(t.shape, it->second.shape) << name;
    EXPECT_EQ(t.data, it->second.data) << name;
  }
  EXPECT_EQ(a.metadata(), b.metadata());
}

TEST(Safetensors, RoundTripThroughFile) {
  const Safetensors st = Sample();
  const std::string path = TempDir() + "/rt.safetensors";
  ASSERT_TRUE(st.WriteFile(path).ok());
  auto back = Safetensors::ReadFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectEqual(st, *back);
  // The data buffer starts 8-byte aligned and no temp file is left behind.
  auto bytes = ReadFileToString(path);
  uint64_t n;
  std::memcpy(&n, bytes->data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u);
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(TempDir())) files += e.path().string().find(".tmp.") != std::string::npos;
  EXPECT_EQ(files, 0);
}

TEST(Safetensors, ToFloat32ConvertsAndChecksShape) {
  const Safetensors st = Sample();
  auto bf = st.ToFloat32("bf", std::vector<int64_t>{3});
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ((*bf)[0], 1.0f);
  EXPECT_EQ((*bf)[1], -2.0f);
  EXPECT_TRUE(std::isinf((*bf)[2]));
  auto h = st.ToFloat32("h", std::vector<int64_t>{1, 2});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)[1], std::ldexp(1.0f, -24));
  auto wrong = st.ToFloat32("blocks.0.w", std::vector<int64_t>{3, 2});
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("blocks.0.w"), std::string::npos);
  EXPECT_EQ(st.ToFloat32("nope", std::vector<int64_t>{}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(st.ToFloat32("ints", std::vector<int64_t>{2, 2}).ok());
}

// A file with the given header text and data buffer.
std::string Build(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

void ExpectCorrupt(const std::string& bytes, const std::string& needle) {
  auto st = Safetensors::Parse(bytes);
  ASSERT_FALSE(st.ok()) << "accepted a corrupt file expecting '" << needle << "'";
  EXPECT_NE(st.status().message().find(needle), std::string::npos)
      << "message: " << st.status().message() << "\nexpected to mention: " << needle;
}

TEST(Safetensors, CorruptFilesAreClearErrors) {
  const std::string good = *Sample().Serialize();
  ASSERT_TRUE(Safetensors::Parse(good).ok());
  ExpectCorrupt("", "shorter than the 8-byte header length");
  ExpectCorrupt(good.substr(0, 5), "shorter than the 8-byte header length");
  ExpectCorrupt(good.substr(0, 40), "runs past the end");        // cut inside the header
  ExpectCorrupt(good.substr(0, good.size() - 3), "outside the");  // cut inside the data
  ExpectCorrupt(good + "xyz", "trailing bytes");
  std::string huge = good;
  const uint64_t big = uint64_t{1} << 40;
  std::memcpy(huge.data(), &big, 8);
  ExpectCorrupt(huge, "exceeds the");
  const std::string d8(8, '\0');
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]", d8),
                "not a valid JSON object");
  ExpectCorrupt(Build("[1, 2]", ""), "does not start with '{'");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 16]}}", d8),
                "outside the 8-byte data buffer");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [3], \"data_offsets\": [0, 8]}}", d8),
                "needs 12");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 0]}}", d8),
                "outside the");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"Q7\", \"shape\": [2], \"data_offsets\": [0, 8]}}", d8),
                "unknown dtype 'Q7'");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"U8\", \"shape\": [8], \"data_offsets\": [0, 8]}}", d8),
                "does not load");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [-2], \"data_offsets\": [0, 8]}}", d8),
                "not a non-negative integer");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [2.5], \"data_offsets\": [0, 8]}}", d8),
                "not a non-negative integer");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [2]}}", d8), "data_offsets");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8], \"x\": 1}}", d8),
                "unknown key 'x'");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
                      " \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", d8),
                "overlaps");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", d8),
                "belong to no tensor");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
                      " \"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", d8),
                "names 'a' twice");
  ExpectCorrupt(Build("{\"__metadata__\": {\"k\": 3}}", ""), "is not a string");
  ExpectCorrupt(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296, 4294967296],"
                      " \"data_offsets\": [0, 8]}}", d8),
                "overflows");
  // Header padded with spaces (allowed by the format) still parses.
  EXPECT_TRUE(Safetensors::Parse(Build("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                                       "\"data_offsets\": [0, 8]}}      ", d8)).ok());
  EXPECT_EQ(Safetensors::ReadFile("/nonexistent/x.safetensors").status().code(),
            absl::StatusCode::kNotFound);
}

// Random byte flips and truncations of a valid file: Parse must return (ok or an
// error), never crash or hang. Run under -DFLASHTICK_SANITIZE=ON for memory errors.
TEST(Safetensors, RandomCorruptionNeverCrashes) {
  const std::string good = *Sample().Serialize();
  std::mt19937_64 rng(12345);
  int rejected = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string b = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) b.resize(rng() % b.size());
    rejected += !Safetensors::Parse(b).ok();
  }
  EXPECT_GT(rejected, 1000);
}

std::string Python() { return FLASHTICK_PYTHON; }

bool HavePythonSafetensors() {
  return std::system((Python() + " -c 'import safetensors.numpy' 2>/dev/null").c_str()) == 0;
}

// Files we write load in the reference implementation with the same values, and
// files it writes load here.
TEST(Safetensors, InteropWithReferenceImplementation) {
  if (!HavePythonSafetensors()) GTEST_SKIP() << "no safetensors in " << Python();
  const std::string dir = TempDir();
  const std::string ours = dir + "/ours.safetensors", theirs = dir + "/theirs.safetensors";
  ASSERT_TRUE(Sample().WriteFile(ours).ok());
  const std::string script = dir + "/check.py";
  FILE* f = std::fopen(script.c_str(), "w");
  std::fputs(R"PY(
import sys, json, numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file
ours, theirs = sys.argv[1], sys.argv[2]
with safe_open(ours, framework="np") as f:
    md = f.metadata()
    assert md == {"format": "pt", "config": '{"width": 64}'}, md
    w = f.get_tensor("blocks.0.w")
    assert w.dtype == np.float32 and w.shape == (2, 3), (w.dtype, w.shape)
    assert np.array_equal(w.ravel(), np.array([1.5, -2.0, 3.25, 0.0, 1e-30, -7.0], np.float32))
    d = f.get_tensor("d")
    assert d.dtype == np.float64 and d[0] == 3.141592653589793 and d[1] == -1e300
    h = f.get_tensor("h")
    assert h.dtype == np.float16 and h.shape == (1, 2) and h[0, 0] == 1.0
    i = f.get_tensor("ints")
    assert i.dtype == np.int32 and i.tolist() == [[7, -9], [2147483647, 0]]
    assert f.get_tensor("empty").shape == (0, 4) and f.get_tensor("scalar").shape == ()
save_file({"x": np.arange(12, dtype=np.float32).reshape(3, 4),
           "y": np.array([0.5, -1.0], dtype=np.float16),
           "z": np.array([1, 2, 3], dtype=np.int32)}, theirs, metadata={"who": "python"})
)PY", f);
  std::fclose(f);
  ASSERT_EQ(std::system((Python() + " " + script + " " + ours + " " + theirs).c_str()), 0);
  auto st = Safetensors::ReadFile(theirs);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->metadata().at("who"), "python");
  auto x = st->ToFloat32("x", std::vector<int64_t>{3, 4});
  ASSERT_TRUE(x.ok());
  for (int k = 0; k < 12; ++k) EXPECT_EQ((*x)[k], float(k));
  auto y = st->ToFloat32("y", std::vector<int64_t>{2});
  ASSERT_TRUE(y.ok());
  EXPECT_EQ((*y)[0], 0.5f);
  EXPECT_EQ((*y)[1], -1.0f);
  EXPECT_EQ(st->tensors().at("z").dtype, DType::kI32);
}

}  // namespace
}  // namespace flashtick
