// The training ops on the CPU (f64) against JAX float64 (STYLE rule 5, layer c):
// tests/grad/jax_train_ops.py writes seeded inputs and jax.vjp / vjp-of-vjp outputs
// for LayerNorm, GELU and cross-entropy, BiasGrad, and AdamW / Sophia-H trajectories
// into the test's temp dir; this test runs our ops on the same inputs and compares.
// Bound: max |ours − jax| / max |jax| < 1e-12 per output (both are f64 evaluations of
// the same formulas, so only rounding separates them).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/grad/grad_test_util.h"

namespace flashtick::grad_test {
namespace {

using Json = nlohmann::json;
constexpr double kTol = 1e-12;

struct Arr {
  std::vector<int64_t> shape;
  std::vector<double> v;
  TensorView view() {
    return MakeView(v.data(), DType::kF64, DeviceKind::kCpu, shape.data(), int(shape.size()));
  }
  TensorView param() {
    return MakeView(v.data(), DType::kF64, DeviceKind::kCpu, {int64_t(v.size())});
  }
};

Arr Get(const Json& j) {
  return Arr{j["shape"].get<std::vector<int64_t>>(), j["data"].get<std::vector<double>>()};
}
Arr Zeros(const Arr& like) { return Arr{like.shape, std::vector<double>(like.v.size(), 0.0)}; }

void Expect(const char* op, const char* name, const Arr& got, const Json& want) {
  const double err = MaxRelErr(got.v, want["data"].get<std::vector<double>>());
  std::printf("%s_cpu_vs_jax: %s max_rel=%.1e\n", op, name, err);
  EXPECT_LT(err, kTol) << op << " " << name;
}

class TrainOpsJax : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string path =
        absl::StrCat(::testing::TempDir(), "/train_ops_jax_", getpid(), ".json");
    const std::string cmd = absl::StrCat("'", FLASHTICK_PYTHON, "' '", FLASHTICK_SOURCE_DIR,
                                         "/tests/grad/jax_train_ops.py' '", path, "'");
    const int rc = std::system(cmd.c_str());
    ASSERT_EQ(rc, 0) << "the JAX oracle failed: " << cmd
                     << "\n(needs jax in FLASHTICK_PYTHON; scripts/setup.sh makes .venv)";
    std::ifstream f(path);
    cases_ = new Json(Json::parse(f)["cases"]);
    std::remove(path.c_str());
  }
  static void TearDownTestSuite() { delete cases_; }
  static Json* cases_;
};
Json* TrainOpsJax::cases_ = nullptr;

TEST_F(TrainOpsJax, AllOpsMatch) {
  auto be = Cpu();
  int seen = 0;
  for (const Json& c : *cases_) {
    const std::string op = c["op"];
    const Json& in = c["inputs"];
    const Json& want = c["outputs"];
    ++seen;
    if (op == "layernorm_bwd" || op == "layernorm_bwd_bwd") {
      Arr x = Get(in["x"]), g = Get(in["gamma"]), dy = Get(in["dy"]);
      Arr ox = Zeros(x), og = Zeros(g), o3 = (op == "layernorm_bwd") ? Zeros(g) : Zeros(x);
      OpDesc d = Desc(op == "layernorm_bwd" ? Op::kLayerNormBwd : Op::kLayerNormBwdBwd);
      d.layernorm.eps = 1e-5f;
      if (op == "layernorm_bwd") {
        ASSERT_TRUE(
            RunOp(*be, d, {x.view(), g.param(), dy.view()}, {ox.view(), og.param(), o3.param()})
                .ok());
        Expect("layernorm_bwd", "dX", ox, want["dx"]);
        Expect("layernorm_bwd", "dgamma", og, want["dgamma"]);
        Expect("layernorm_bwd", "dbeta", o3, want["dbeta"]);
      } else {
        Arr gx = Get(in["gx"]), gg = Get(in["ggamma"]), gb = Get(in["gbeta"]);
        ASSERT_TRUE(RunOp(*be, d,
                          {x.view(), g.param(), dy.view(), gx.view(), gg.param(), gb.param()},
                          {ox.view(), og.param(), o3.view()})
                        .ok());
        Expect("layernorm_bwd_bwd", "dX", ox, want["dx"]);
        Expect("layernorm_bwd_bwd", "dgamma", og, want["dgamma"]);
        Expect("layernorm_bwd_bwd", "ddY", o3, want["ddy"]);
      }
    } else if (op == "gelu_bwd") {
      Arr x = Get(in["x"]), dy = Get(in["dy"]), dx = Zeros(x);
      ASSERT_TRUE(RunOp(*be, Desc(Op::kGeluBwd), {x.view(), dy.view()}, {dx.view()}).ok());
      Expect("gelu_bwd", "dX", dx, want["dx"]);
    } else if (op == "gelu_bwd_bwd") {
      Arr x = Get(in["x"]), dy = Get(in["dy"]), gdx = Get(in["gdx"]), ox = Zeros(x), ody = Zeros(x);
      ASSERT_TRUE(RunOp(*be, Desc(Op::kGeluBwdBwd), {x.view(), dy.view(), gdx.view()},
                        {ox.view(), ody.view()})
                      .ok());
      Expect("gelu_bwd_bwd", "dX", ox, want["dx"]);
      Expect("gelu_bwd_bwd", "ddY", ody, want["ddy"]);
    } else if (op == "cross_entropy") {
      Arr z = Get(in["z"]), w = Get(in["w"]), g = Get(in["g"]);
      std::vector<int32_t> y = in["y"]["data"].get<std::vector<int32_t>>();
      const int64_t M = z.shape[0];
      TensorView yv = V(y, {M});
      Arr loss = Zeros(w), dz = Zeros(z), ddz = Zeros(z), ddw = Zeros(w);
      ASSERT_TRUE(RunOp(*be, Desc(Op::kSoftmaxCrossEntropy), {z.view(), yv}, {loss.view()}).ok());
      ASSERT_TRUE(
          RunOp(*be, Desc(Op::kSoftmaxCrossEntropyBwd), {z.view(), yv, w.view()}, {dz.view()})
              .ok());
      ASSERT_TRUE(RunOp(*be, Desc(Op::kSoftmaxCrossEntropyBwdBwd),
                        {z.view(), yv, w.view(), g.view()}, {ddz.view(), ddw.view()})
                      .ok());
      Expect("softmax_cross_entropy", "loss", loss, want["loss"]);
      Expect("softmax_cross_entropy_bwd", "dlogits", dz, want["dz"]);
      Expect("softmax_cross_entropy_bwd_bwd", "dlogits", ddz, want["ddz"]);
      Expect("softmax_cross_entropy_bwd_bwd", "ddloss", ddw, want["ddw"]);
    } else if (op == "bias_grad") {
      Arr dy = Get(in["dy"]), db = Get(want["db"]);
      std::fill(db.v.begin(), db.v.end(), 0.0);
      ASSERT_TRUE(RunOp(*be, Desc(Op::kBiasGrad), {dy.view()}, {db.param()}).ok());
      Expect("bias_grad", "db", db, want["db"]);
    } else if (op == "adamw" || op == "sophia_h") {
      const bool adam = op == "adamw";
      const Json& a = c["attrs"];
      OpDesc d = Desc(adam ? Op::kAdamW : Op::kSophiaH);
      d.optimizer.lr = a["lr"].get<float>();
      d.optimizer.beta1 = a["beta1"].get<float>();
      d.optimizer.beta2 = a["beta2"].get<float>();
      d.optimizer.eps = a["eps"].get<float>();
      d.optimizer.weight_decay = a["weight_decay"].get<float>();
      d.optimizer.grad_scale = a["grad_scale"].get<float>();
      d.optimizer.rho = a["rho"].get<float>();
      Arr p = Get(in["p0"]), grads = Get(in["grads"]);
      Arr m = Zeros(p), s2 = Zeros(p);
      const int64_t n = int64_t(p.v.size()), steps = grads.shape[0];
      for (int64_t s = 0; s < steps; ++s) {
        std::vector<double> g(grads.v.begin() + s * n, grads.v.begin() + (s + 1) * n);
        d.optimizer.step = s + 1;
        absl::Status st;
        if (adam) {
          st = RunOp(*be, d, {V(g, {n})}, {p.param(), m.param(), s2.param()});
        } else {
          Arr hh = Get(in["hhats"]);
          std::vector<double> hhat(hh.v.begin() + s * n, hh.v.begin() + (s + 1) * n);
          TensorView hv = V(hhat, {n});
          if (in["refresh"][s].get<int>() == 0) hv.data = nullptr;
          st = RunOp(*be, d, {V(g, {n}), hv}, {p.param(), m.param(), s2.param()});
        }
        ASSERT_TRUE(st.ok()) << st;
      }
      Expect(op.c_str(), "param", p, want["p"]);
      Expect(op.c_str(), "m", m, want["m"]);
      Expect(op.c_str(), adam ? "v" : "h", s2, want[adam ? "v" : "h"]);
    } else {
      ADD_FAILURE() << "unknown oracle case " << op;
    }
  }
  EXPECT_EQ(seen, 13) << "the oracle wrote an unexpected number of cases";
}

}  // namespace
}  // namespace flashtick::grad_test
