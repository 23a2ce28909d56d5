// libFuzzer target: TrainCheckpoint::Load (trainer/train_checkpoint.h), which a
// restarted flashtickd runs on every unfinished arm's checkpoint directory. A valid
// checkpoint of a tiny model is made once; each input then replaces one part of it:
//   byte 0 % 3 == 0   the rest is manifest.json (the data files stay valid)
//   byte 0 % 3 == 1   the rest is the params file; the manifest gets its true size and
//                     CRC-32, so the fuzzer reaches the parse and shape checks behind them
//   byte 0 % 3 == 2   the same for the optimizer-state file
// Load must return a status, never crash, and a loaded trainer must have the tiny
// model's shape (no file can silently change the architecture it resumes).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_format.h"
#include "kernels/backend.h"
#include "common/file_io.h"
#include "trainer/crc32.h"
#include "trainer/train_checkpoint.h"
#include "trainer/trainer.h"

namespace {

using Json = nlohmann::json;

struct Fixture {
  std::unique_ptr<flashtick::Backend> backend;
  std::string dir;  // the working checkpoint directory
  std::string manifest;
  std::string params_name, optimizer_name;
  std::string params, optimizer;
  flashtick::ModelConfig config;
};

void Die(const std::string& what) {
  fprintf(stderr, "fuzz_train_checkpoint setup: %s\n", what.c_str());
  abort();
}

Fixture MakeFixture() {
  Fixture f;
  auto be = flashtick::CreateBackend("cpu", flashtick::BackendOptions{1, 0});
  if (!be.ok()) Die(std::string(be.status().message()));
  f.backend = std::move(*be);
  f.config.name = "fuzz-tiny";
  f.config.features = 3;
  f.config.width = 8;
  f.config.layers = 1;
  f.config.heads = 2;
  f.config.kv_heads = 1;
  f.config.mlp_ratio = 2;
  f.config.classes = 3;
  f.config.max_context = 16;
  flashtick::TrainerOptions o;
  o.seed = 5;
  auto t = flashtick::Trainer::Create(f.config, o, f.backend.get());
  if (!t.ok()) Die(std::string(t.status().message()));
  f.dir = absl::StrFormat("%s/flashtick_fuzz_ckpt_%d", std::filesystem::temp_directory_path().string(),
                          getpid());
  std::filesystem::remove_all(f.dir);
  if (auto s = flashtick::TrainCheckpoint::Save(**t, f.dir); !s.ok()) Die(std::string(s.message()));
  auto m = flashtick::ReadFileToString(f.dir + "/manifest.json");
  if (!m.ok()) Die(std::string(m.status().message()));
  f.manifest = *m;
  const Json j = Json::parse(f.manifest);
  f.params_name = j["files"]["params"]["name"];
  f.optimizer_name = j["files"]["optimizer"]["name"];
  f.params = *flashtick::ReadFileToString(f.dir + "/" + f.params_name);
  f.optimizer = *flashtick::ReadFileToString(f.dir + "/" + f.optimizer_name);
  return f;
}

void Write(const std::string& path, const std::string& bytes) {
  FILE* fp = fopen(path.c_str(), "wb");
  if (!fp) Die("cannot write " + path);
  fwrite(bytes.data(), 1, bytes.size(), fp);
  fclose(fp);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture f = MakeFixture();
  if (size < 1) return 0;
  const int mode = data[0] % 3;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string manifest = f.manifest, params = f.params, optimizer = f.optimizer;
  if (mode == 0) {
    manifest = rest;
  } else {
    Json j = Json::parse(f.manifest);
    const char* key = mode == 1 ? "params" : "optimizer";
    (mode == 1 ? params : optimizer) = rest;
    j["files"][key]["bytes"] = rest.size();
    j["files"][key]["crc32"] = absl::StrFormat("%08x", flashtick::Crc32(rest));
    manifest = j.dump(2);
  }
  Write(f.dir + "/manifest.json", manifest);
  Write(f.dir + "/" + f.params_name, params);
  Write(f.dir + "/" + f.optimizer_name, optimizer);
  auto t = flashtick::TrainCheckpoint::Load(f.dir, f.backend.get());
  if (!t.ok()) {
    if (t.status().message().empty()) abort();
    return 0;
  }
  if (mode != 0 && (*t)->config().ToJson() != f.config.ToJson()) abort();
  return 0;
}
