// The model's input encoding (model/input_encoding.h): the Fourier columns' layout and
// values, the kernel they give a dot product, and the config that switches them on.
#include "model/input_encoding.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "gtest/gtest.h"
#include "model/config.h"
#include "model/params.h"

namespace flashtick {
namespace {

ModelConfig FourierConfig() {
  ModelConfig c;
  c.fourier_feature = 1;
  c.fourier_periods = {1.0f, 4.0f, 64.0f};
  return c;
}

TEST(InputEncoding, WithoutFourierRowsAreCopied) {
  ModelConfig c;
  EXPECT_EQ(c.input_width(), c.features);
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> out(in.size());
  EncodeInputs(c, in.data(), 2, out.data());
  EXPECT_EQ(out, in);
}

// Column 1 leaves its place; the other five keep their order, then sin, cos per period.
TEST(InputEncoding, FourierColumnsFollowTheOthers) {
  const ModelConfig c = FourierConfig();
  ASSERT_EQ(c.input_width(), 6 - 1 + 2 * 3);
  const std::vector<float> in = {0.1f, 2.5f, -3.0f, 4.0f, 0.5f, 1.0f,
                                 7.0f, -0.75f, 8.0f, 9.0f, 10.0f, 11.0f};
  std::vector<float> out(2 * c.input_width(), -99.0f);
  EncodeInputs(c, in.data(), 2, out.data());
  for (int r = 0; r < 2; ++r) {
    const float* x = &in[r * 6];
    const float* y = &out[r * c.input_width()];
    EXPECT_EQ(y[0], x[0]);
    for (int f = 2; f < 6; ++f) EXPECT_EQ(y[f - 1], x[f]) << "row " << r << " feature " << f;
    for (int p = 0; p < 3; ++p) {
      const double a = 2 * std::numbers::pi * x[1] / c.fourier_periods[p];
      EXPECT_NEAR(y[5 + 2 * p], std::sin(a), 1e-7) << "row " << r << " period " << p;
      EXPECT_NEAR(y[6 + 2 * p], std::cos(a), 1e-7) << "row " << r << " period " << p;
    }
  }
}

// Why the encoding exists: the dot product of two encoded rows' Fourier columns is
// Σ_p cos(2π(x − x')/p), largest when the two values are equal, and the same for any
// shift of both (a level is matched wherever it lies).
// InputRows: the raw rows themselves without encoding (no copy), else the encoding in
// the caller's buffer, which a later call of the same or fewer rows reuses.
TEST(InputEncoding, InputRowsEncodeIntoTheCallersBuffer) {
  ModelConfig plain;
  std::vector<float> ticks(3 * plain.features);
  for (size_t i = 0; i < ticks.size(); ++i) ticks[i] = 0.25f * static_cast<float>(i);
  std::vector<float> buffer;
  EXPECT_EQ(InputRows(plain, ticks.data(), 3, &buffer), ticks.data());
  EXPECT_TRUE(buffer.empty());

  const ModelConfig c = FourierConfig();
  const float* rows = InputRows(c, ticks.data(), 3, &buffer);
  ASSERT_EQ(rows, buffer.data());
  ASSERT_GE(buffer.size(), static_cast<size_t>(3 * c.input_width()));
  std::vector<float> want(3 * c.input_width());
  EncodeInputs(c, ticks.data(), 3, want.data());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(rows[i], want[i]) << i;
  const float* again = InputRows(c, ticks.data() + c.features, 2, &buffer);
  EXPECT_EQ(again, rows) << "two rows fit the three-row buffer: no reallocation";
  for (int64_t i = 0; i < 2 * c.input_width(); ++i) EXPECT_EQ(again[i], want[c.input_width() + i]);
}

TEST(InputEncoding, FourierDotProductPeaksAtEqualValues) {
  ModelConfig c = FourierConfig();
  c.fourier_periods = {1.5f, 3.0f, 6.0f, 12.0f, 24.0f, 48.0f};
  const int W = c.input_width(), P = static_cast<int>(c.fourier_periods.size());
  auto fourier = [&](float v) {
    std::vector<float> row = {0, v, 0, 0, 0, 0}, out(W);
    EncodeInputs(c, row.data(), 1, out.data());
    return std::vector<float>(out.end() - 2 * P, out.end());
  };
  auto dot = [](const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += double{a[i]} * b[i];
    return s;
  };
  for (float key : {2.0f, 9.5f, 30.0f}) {
    const double self = dot(fourier(key), fourier(key));
    EXPECT_NEAR(self, P, 1e-5);
    for (float other = 0.0f; other < 40.0f; other += 0.5f) {
      if (other == key) continue;
      double want = 0;
      for (float p : c.fourier_periods) want += std::cos(2 * std::numbers::pi * (key - other) / p);
      const double got = dot(fourier(key), fourier(other));
      EXPECT_NEAR(got, want, 1e-5) << key << " vs " << other;
      EXPECT_LT(got, self - 0.5) << key << " vs " << other << ": not separated";
    }
  }
}

TEST(InputEncoding, EmbeddingTakesTheEncodedWidth) {
  const ModelConfig c = FourierConfig();
  bool found = false;
  for (const ParamSpec& s : TransformerParamSpecs(c)) {
    if (s.name != "embed.weight") continue;
    found = true;
    EXPECT_EQ(s.shape[1], c.input_width());
  }
  EXPECT_TRUE(found);
}

TEST(InputEncoding, ConfigValidatesAndRoundTrips) {
  const ModelConfig c = FourierConfig();
  ASSERT_TRUE(c.Validate().ok()) << c.Validate();
  auto back = ModelConfig::FromJson(c.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->fourier_feature, 1);
  EXPECT_EQ(back->fourier_periods, c.fourier_periods);
  EXPECT_EQ(back->input_width(), c.input_width());
  // A config.json without the keys (every model saved before) has no encoding.
  auto old = ModelConfig::FromJson(R"({"width": 32, "heads": 4, "kv_heads": 2})");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->fourier_feature, -1);
  EXPECT_EQ(old->input_width(), old->features);

  auto refused = [](ModelConfig m, const char* what) {
    const absl::Status s = m.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what;
    EXPECT_NE(s.message().find("fourier"), std::string::npos) << what << ": " << s;
  };
  ModelConfig m = c;
  m.fourier_feature = 6;
  refused(m, "column out of range");
  m = c;
  m.fourier_periods.clear();
  refused(m, "no periods");
  m = c;
  m.fourier_periods = {1.0f, 0.0f};
  refused(m, "zero period");
  m = c;
  m.fourier_periods = {NAN};
  refused(m, "NaN period");
  m = c;
  m.fourier_periods.assign(kMaxFourierPeriods + 1, 1.0f);
  refused(m, "too many periods");
  m = ModelConfig{};
  m.fourier_periods = {1.0f};
  refused(m, "periods without a column");
  for (const char* bad : {R"({"fourier_feature": 1, "fourier_periods": 3})",
                          R"({"fourier_feature": 1, "fourier_periods": ["a"]})",
                          R"({"fourier_feature": 1})"}) {
    EXPECT_EQ(ModelConfig::FromJson(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace flashtick
