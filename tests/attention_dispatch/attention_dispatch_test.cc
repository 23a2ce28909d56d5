// AttentionDispatcher with fake timings: which implementation each mode picks, that a
// bucket is measured once, that the winner survives in the JSON cache for the same
// GPU/driver/cuDNN and is measured again for another, and that failures fall back to
// ours and are logged once.
#include "kernels/attention_dispatch.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace flashtick {
namespace {

AttentionEnvironment H200() { return {"NVIDIA H200", 13000, 91900}; }

AttentionBucket Bucket(int64_t T, int64_t D = 64, AttentionDirection dir = AttentionDirection::kFwd) {
  return MakeAttentionBucket(dir, DType::kBF16, AttentionShape{1, T, 12, 12, D}, true);
}

// A timer returning fixed ms per implementation and counting calls.
struct FakeTimer {
  double flash_ms = 2.0, cudnn_ms = 1.0;
  bool cudnn_fails = false;
  std::map<AttentionImpl, int> calls;
  AttentionDispatcher::Timer fn() {
    return [this](AttentionImpl impl) -> absl::StatusOr<double> {
      ++calls[impl];
      if (impl == AttentionImpl::kCudnn && cudnn_fails) return absl::InternalError("no plan");
      return impl == AttentionImpl::kFlash ? flash_ms : cudnn_ms;
    };
  }
};

std::string TempPath(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() /
                 (name + "_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                  "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
  std::filesystem::remove(p);
  return p.string();
}

TEST(AttentionDispatch, ParseAndNames) {
  EXPECT_EQ(*ParseAttentionImpl("auto"), AttentionImpl::kAuto);
  EXPECT_EQ(*ParseAttentionImpl("flash"), AttentionImpl::kFlash);
  EXPECT_EQ(*ParseAttentionImpl("ours"), AttentionImpl::kFlash);
  EXPECT_EQ(*ParseAttentionImpl("cudnn"), AttentionImpl::kCudnn);
  EXPECT_EQ(*ParseAttentionImpl("flash_sm90a"), AttentionImpl::kFlashSm90a);
  EXPECT_FALSE(ParseAttentionImpl("CUDNN").ok());
  EXPECT_FALSE(ParseAttentionImpl("").ok());
  for (AttentionImpl i : {AttentionImpl::kAuto, AttentionImpl::kFlash, AttentionImpl::kCudnn,
                          AttentionImpl::kFlashSm90a})
    EXPECT_EQ(*ParseAttentionImpl(AttentionImplName(i)), i);
}

TEST(AttentionDispatch, Buckets) {
  EXPECT_EQ(AttentionBucketUp(1, 128), 128);
  EXPECT_EQ(AttentionBucketUp(128, 128), 128);
  EXPECT_EQ(AttentionBucketUp(129, 128), 256);
  EXPECT_EQ(AttentionBucketUp(23400, 128), 32768);
  EXPECT_EQ(AttentionBucketUp(262144, 128), 262144);
  EXPECT_EQ(AttentionBucketUp(12, 1), 16);
  const AttentionBucket b =
      MakeAttentionBucket(AttentionDirection::kBwd, DType::kF16, AttentionShape{2, 23400, 12, 4, 128}, false);
  EXPECT_EQ(b.Key(), "bwd|fp16|d128|full|g3|n32768|bh32");
  // Same bucket for 20,000 and 23,400; another for 40,000 and for another head dim.
  EXPECT_EQ(Bucket(20000).Key(), Bucket(23400).Key());
  EXPECT_NE(Bucket(40000).Key(), Bucket(23400).Key());
  EXPECT_NE(Bucket(23400, 128).Key(), Bucket(23400, 64).Key());
  EXPECT_NE(Bucket(23400, 64, AttentionDirection::kBwd).Key(), Bucket(23400).Key());
  EXPECT_EQ(H200().Key(), "NVIDIA H200|driver=13000|cudnn=91900");
}

TEST(AttentionDispatch, ForcedModes) {
  FakeTimer t;
  std::vector<std::string> log;
  AttentionDispatcher flash({AttentionImpl::kFlash, "", H200()}, [&](const std::string& m) { log.push_back(m); });
  EXPECT_EQ(flash.Choose(Bucket(4096), true, t.fn()).impl, AttentionImpl::kFlash);
  AttentionDispatcher cudnn({AttentionImpl::kCudnn, "", H200()}, [&](const std::string& m) { log.push_back(m); });
  const AttentionChoice c = cudnn.Choose(Bucket(4096), true, t.fn());
  EXPECT_EQ(c.impl, AttentionImpl::kCudnn);
  EXPECT_EQ(c.reason, "forced");
  EXPECT_TRUE(t.calls.empty()) << "forced modes never time";
  EXPECT_TRUE(log.empty());
  // cuDNN asked for where it cannot run: ours, said once per bucket.
  for (int i = 0; i < 3; ++i) {
    const AttentionChoice f = cudnn.Choose(Bucket(8192), false, t.fn());
    EXPECT_EQ(f.impl, AttentionImpl::kFlash);
    EXPECT_EQ(f.reason, "cudnn_unavailable");
  }
  EXPECT_EQ(log.size(), 1u);
  cudnn.set_mode(AttentionImpl::kFlash);
  EXPECT_EQ(cudnn.Choose(Bucket(4096), true, t.fn()).impl, AttentionImpl::kFlash);
  // flash_sm90a is ours (the CUDA launcher picks the forward kernel), never timed.
  cudnn.set_mode(AttentionImpl::kFlashSm90a);
  const AttentionChoice s = cudnn.Choose(Bucket(4096), true, t.fn());
  EXPECT_EQ(s.impl, AttentionImpl::kFlash);
  EXPECT_EQ(s.reason, "forced");
  EXPECT_TRUE(t.calls.empty());
}

TEST(AttentionDispatch, AutoMeasuresOncePerBucket) {
  FakeTimer t;
  std::vector<std::string> log;
  AttentionDispatcher d({AttentionImpl::kAuto, "", H200()}, [&](const std::string& m) { log.push_back(m); });
  AttentionChoice c = d.Choose(Bucket(23400), true, t.fn());
  EXPECT_EQ(c.impl, AttentionImpl::kCudnn);
  EXPECT_EQ(c.reason, "measured");
  c = d.Choose(Bucket(20000), true, t.fn());  // same bucket
  EXPECT_EQ(c.impl, AttentionImpl::kCudnn);
  EXPECT_EQ(c.reason, "cached");
  EXPECT_EQ(t.calls[AttentionImpl::kFlash], 1);
  EXPECT_EQ(t.calls[AttentionImpl::kCudnn], 1);
  // A bucket where ours is faster; a tie goes to ours.
  t.flash_ms = 0.5;
  EXPECT_EQ(d.Choose(Bucket(4096), true, t.fn()).impl, AttentionImpl::kFlash);
  t.flash_ms = t.cudnn_ms = 1.0;
  EXPECT_EQ(d.Choose(Bucket(1024), true, t.fn()).impl, AttentionImpl::kFlash);
  const auto e = d.Lookup(Bucket(23400));
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->flash_ms, 2.0);
  EXPECT_DOUBLE_EQ(e->cudnn_ms, 1.0);
  EXPECT_EQ(log.size(), 3u) << "one line per measurement";
}

TEST(AttentionDispatch, AutoFallsBackWithoutCudnnOrTimer) {
  FakeTimer t;
  std::vector<std::string> log;
  AttentionDispatcher d({AttentionImpl::kAuto, "", H200()}, [&](const std::string& m) { log.push_back(m); });
  EXPECT_EQ(d.Choose(Bucket(4096), false, t.fn()).reason, "cudnn_unavailable");
  EXPECT_TRUE(t.calls.empty());
  // No timer (graph capture): ours, nothing remembered, so a later call measures.
  EXPECT_EQ(d.Choose(Bucket(8192), true, nullptr).reason, "no_timer");
  EXPECT_FALSE(d.Lookup(Bucket(8192)).has_value());
  EXPECT_EQ(d.Choose(Bucket(8192), true, t.fn()).reason, "measured");
  // cuDNN failing at run time: ours, logged once, not measured again in this process.
  t.cudnn_fails = true;
  log.clear();
  for (int i = 0; i < 3; ++i) {
    const AttentionChoice c = d.Choose(Bucket(65536), true, t.fn());
    EXPECT_EQ(c.impl, AttentionImpl::kFlash);
    EXPECT_EQ(c.reason, "cudnn_failed");
  }
  EXPECT_EQ(log.size(), 1u);
  EXPECT_EQ(t.calls[AttentionImpl::kCudnn], 2) << "8192 once, 65536 once";
  EXPECT_FALSE(d.Lookup(Bucket(65536)).has_value());
}

TEST(AttentionDispatch, SupportAskedOnlyWhenCudnnMightRun) {
  // Asking builds a cuDNN graph on CUDA: not for a bucket ours has won, nor when forced.
  FakeTimer t;
  int asked = 0;
  auto supported = [&] { ++asked; return true; };
  AttentionDispatcher d({AttentionImpl::kAuto, "", H200()}, [](const std::string&) {});
  t.flash_ms = 0.5;
  EXPECT_EQ(d.Choose(Bucket(4096), supported, t.fn()).impl, AttentionImpl::kFlash);
  EXPECT_EQ(asked, 1);
  for (int64_t T : {3000, 3500, 4000}) EXPECT_EQ(d.Choose(Bucket(T), supported, t.fn()).reason, "cached");
  EXPECT_EQ(asked, 1) << "ours won the bucket: other lengths in it never ask cuDNN";
  t.flash_ms = 2.0;
  EXPECT_EQ(d.Choose(Bucket(65536), supported, t.fn()).impl, AttentionImpl::kCudnn);
  EXPECT_EQ(d.Choose(Bucket(40000), supported, t.fn()).reason, "cached");
  EXPECT_EQ(asked, 3) << "cuDNN won: each call checks its exact shape";
  // A shape in a cuDNN bucket that cuDNN refuses runs ours.
  const AttentionChoice c = d.Choose(Bucket(50000), std::function<bool()>([] { return false; }), t.fn());
  EXPECT_EQ(c.impl, AttentionImpl::kFlash);
  EXPECT_EQ(c.reason, "cudnn_unavailable");
  d.set_mode(AttentionImpl::kFlash);
  d.Choose(Bucket(65536), supported, t.fn());
  EXPECT_EQ(asked, 3);
}

TEST(AttentionDispatch, CacheRoundTripAndEnvironmentKey) {
  const std::string path = TempPath("attn_cache");
  FakeTimer t;
  auto quiet = [](const std::string&) {};
  {
    AttentionDispatcher d({AttentionImpl::kAuto, path, H200()}, quiet);
    EXPECT_EQ(d.Choose(Bucket(23400), true, t.fn()).impl, AttentionImpl::kCudnn);
    t.flash_ms = 0.1;
    EXPECT_EQ(d.Choose(Bucket(4096, 128), true, t.fn()).impl, AttentionImpl::kFlash);
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(t.calls[AttentionImpl::kCudnn], 2);
  {
    // Same environment: both winners come from the file, nothing is timed.
    AttentionDispatcher d({AttentionImpl::kAuto, path, H200()}, quiet);
    AttentionChoice c = d.Choose(Bucket(23400), true, t.fn());
    EXPECT_EQ(c.impl, AttentionImpl::kCudnn);
    EXPECT_EQ(c.reason, "cached");
    EXPECT_EQ(d.Choose(Bucket(4096, 128), true, t.fn()).impl, AttentionImpl::kFlash);
    EXPECT_EQ(t.calls[AttentionImpl::kCudnn], 2);
  }
  {
    // Another cuDNN version: measured again, and the H200 entries stay in the file.
    AttentionEnvironment other = H200();
    other.cudnn = 92000;
    t.flash_ms = 5.0;
    AttentionDispatcher d({AttentionImpl::kAuto, path, other}, quiet);
    AttentionChoice c = d.Choose(Bucket(4096, 128), true, t.fn());
    EXPECT_EQ(c.reason, "measured");
    EXPECT_EQ(c.impl, AttentionImpl::kCudnn);
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto entries = AttentionCacheFromJson(ss.str());
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_EQ(entries->size(), 3u);
  std::filesystem::remove(path);
}

TEST(AttentionDispatch, ConcurrentWritersMerge) {
  // Two processes (sweep arms) sharing one file: each save keeps the other's entries.
  const std::string path = TempPath("attn_merge");
  FakeTimer t;
  auto quiet = [](const std::string&) {};
  AttentionDispatcher a({AttentionImpl::kAuto, path, H200()}, quiet);
  AttentionDispatcher b({AttentionImpl::kAuto, path, H200()}, quiet);
  a.Choose(Bucket(4096), true, t.fn());
  b.Choose(Bucket(65536), true, t.fn());
  AttentionDispatcher c({AttentionImpl::kAuto, path, H200()}, quiet);
  EXPECT_TRUE(c.Lookup(Bucket(4096)).has_value());
  EXPECT_TRUE(c.Lookup(Bucket(65536)).has_value());
  std::filesystem::remove(path);
}

TEST(AttentionDispatch, CorruptCacheIsIgnoredAndRewritten) {
  const std::string path = TempPath("attn_corrupt");
  { std::ofstream(path) << "{not json"; }
  std::vector<std::string> log;
  FakeTimer t;
  AttentionDispatcher d({AttentionImpl::kAuto, path, H200()}, [&](const std::string& m) { log.push_back(m); });
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("ignoring"), std::string::npos) << log[0];
  EXPECT_EQ(d.Choose(Bucket(4096), true, t.fn()).reason, "measured");
  AttentionDispatcher again({AttentionImpl::kAuto, path, H200()}, [](const std::string&) {});
  EXPECT_TRUE(again.Lookup(Bucket(4096)).has_value());
  std::filesystem::remove(path);
}

TEST(AttentionDispatch, JsonRejectsBadEntries) {
  EXPECT_FALSE(AttentionCacheFromJson("[]").ok());
  EXPECT_FALSE(AttentionCacheFromJson(R"({"format":"other","entries":[]})").ok());
  EXPECT_FALSE(AttentionCacheFromJson(
                   R"({"format":"flashtick_attention_cache_v1","entries":[{"env":"x","bucket":"y","winner":"auto"}]})")
                   .ok());
  EXPECT_FALSE(AttentionCacheFromJson(
                   R"({"format":"flashtick_attention_cache_v1","entries":[{"env":"x","winner":"flash"}]})")
                   .ok());
  auto ok = AttentionCacheFromJson(R"({"format":"flashtick_attention_cache_v1","entries":[]})");
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->empty());
}

}  // namespace
}  // namespace flashtick
