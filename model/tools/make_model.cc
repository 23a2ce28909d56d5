// flashtick_make_model: creates <out>/<name>/<version>/{config.json, model.safetensors}
// from Transformer::InitRandom with a seed and config flags, then loads it back and
// runs a short forward to prove it serves. Plain argv parsing (CLI11 is only present
// when the server is built). Idempotent: an existing model identical to what this
// command would write (config and weights) is left alone; a different one is
// replaced only with --force.
//
//   flashtick_make_model [--out models] [--name flashtick-tiny] [--version 1] [--seed 1]
//       [--features 6] [--width 64] [--layers 2] [--heads 4] [--kv-heads 4]
//       [--mlp-ratio 4]  (--kv-heads defaults to --heads)
//       [--classes 3] [--max-context 32768] [--rope-theta 10000]
//       [--rotary-dims -1] [--exclude-self-layers 0] [--force]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "kernels/backend.h"
#include "model/config.h"
#include "model/params.h"
#include "model/transformer.h"

namespace {

constexpr char kUsage[] =
    "usage: flashtick_make_model [--out DIR] [--name NAME] [--version N] [--seed S]\n"
    "         [--features F] [--width C] [--layers L] [--heads H] [--kv-heads HKV]\n"
    "         [--mlp-ratio R] [--classes K] [--max-context T] [--rope-theta THETA]\n"
    "         [--rotary-dims R (leading dims of each head RoPE rotates; -1 = all)]\n"
    "         [--exclude-self-layers K (the first K layers attend to earlier steps only)]\n"
    "         [--force]\n"
    "Writes DIR/NAME/N/{config.json, model.safetensors} (default models/flashtick-tiny/1)\n"
    "with GPT-2-style random weights drawn from seed S.\n";

int Fail(const std::string& msg) {
  std::fprintf(stderr, "flashtick_make_model: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using flashtick::ModelConfig;
  std::map<std::string, std::string> flags = {{"out", "models"}, {"version", "1"}, {"seed", "1"}};
  bool force = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--force") {
      force = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) return Fail(absl::StrCat("unexpected argument '", a, "'\n", kUsage));
    std::string key = a.substr(2), value;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return Fail(absl::StrCat("--", key, " needs a value"));
    }
    flags[key] = value;
  }

  ModelConfig c;
  uint64_t seed = 0;
  int version = 0;
  auto int_flag = [&](const char* key, int* field) -> bool {
    auto it = flags.find(key);
    if (it == flags.end()) return true;
    if (!absl::SimpleAtoi(it->second, field)) return false;
    flags.erase(it);
    return true;
  };
  const bool kv_given = flags.count("kv-heads") > 0;
  const char* int_keys[] = {"features", "width", "layers", "heads", "kv-heads", "mlp-ratio", "classes",
                            "max-context"};
  int* int_fields[] = {&c.features, &c.width, &c.layers, &c.heads, &c.kv_heads, &c.mlp_ratio,
                       &c.classes, &c.max_context};
  for (int i = 0; i < 8; ++i)
    if (!int_flag(int_keys[i], int_fields[i]))
      return Fail(absl::StrCat("--", int_keys[i], " must be an integer"));
  if (!kv_given) c.kv_heads = c.heads;  // plain multi-head attention unless asked
  if (!int_flag("version", &version) || version < 1) return Fail("--version must be an integer >= 1");
  if (!absl::SimpleAtoi(flags["seed"], &seed)) return Fail("--seed must be a non-negative integer");
  flags.erase("seed");
  if (flags.count("rope-theta")) {
    if (!absl::SimpleAtof(flags["rope-theta"], &c.rope_theta)) return Fail("--rope-theta must be a number");
    flags.erase("rope-theta");
  }
  if (flags.count("rotary-dims")) {
    if (!absl::SimpleAtoi(flags["rotary-dims"], &c.rotary_dims))
      return Fail("--rotary-dims must be an integer");
    flags.erase("rotary-dims");
  }
  if (flags.count("exclude-self-layers")) {
    if (!absl::SimpleAtoi(flags["exclude-self-layers"], &c.exclude_self_layers))
      return Fail("--exclude-self-layers must be an integer");
    flags.erase("exclude-self-layers");
  }
  if (flags.count("name")) {
    c.name = flags["name"];
    flags.erase("name");
  }
  const std::string out = flags["out"];
  flags.erase("out");
  if (!flags.empty()) return Fail(absl::StrCat("unknown flag --", flags.begin()->first, "\n", kUsage));
  if (c.name.empty() || c.name.find('/') != std::string::npos || c.name[0] == '.')
    return Fail("--name must be a plain directory name");
  if (absl::Status s = c.Validate(); !s.ok()) return Fail(std::string(s.message()));

  const std::string dir = absl::StrCat(out, "/", c.name, "/", version);
  auto backend = flashtick::CreateBackend("cpu");
  if (!backend.ok()) return Fail(std::string(backend.status().message()));
  auto model = flashtick::Transformer::InitRandom(c, seed, backend->get());
  if (!model.ok()) return Fail(std::string(model.status().message()));
  if (std::filesystem::exists(dir + "/config.json") && !force) {
    // Leave it only if it is exactly what this command would write (config and weights).
    auto existing = flashtick::Transformer::Load(dir, backend->get());
    if (!existing.ok())
      return Fail(absl::StrCat(dir, " holds a model that does not load (", existing.status().message(),
                               "); use --force to replace it"));
    bool same = (*existing)->config().ToJson() == c.ToJson();
    for (const auto& spec : (*model)->params().specs()) {
      if (!same) break;
      same = *(*existing)->params().MasterToHost(spec.name) == *(*model)->params().MasterToHost(spec.name);
    }
    if (same) {
      std::printf("%s already holds this model; leaving it\n", dir.c_str());
      return 0;
    }
    return Fail(absl::StrCat(dir, " holds a different model (config or seed); use --force to replace it"));
  }
  if (absl::Status s = (*model)->Save(dir); !s.ok()) return Fail(std::string(s.message()));

  // Prove the written files load and predict.
  auto loaded = flashtick::Transformer::Load(dir, backend->get());
  if (!loaded.ok()) return Fail(absl::StrCat("wrote ", dir, " but cannot load it: ", loaded.status().message()));
  constexpr int64_t kCheckSteps = 16;
  std::vector<float> ticks(kCheckSteps * c.features, 0.5f);
  auto probs = (*loaded)->Predict(ticks, 1, kCheckSteps, true);
  if (!probs.ok()) return Fail(absl::StrCat("wrote ", dir, " but it does not predict: ", probs.status().message()));
  std::printf("wrote %s: %s, %lld parameters, seed %llu\n", dir.c_str(), c.name.c_str(),
              static_cast<long long>((*loaded)->parameter_count()), static_cast<unsigned long long>(seed));
  return 0;
}
