// TrainCheckpoint: save and verified load of a training run (trainer/train_checkpoint.h).
#include "trainer/train_checkpoint.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "common/file_io.h"
#include "model/safetensors.h"
#include "trainer/crc32.h"

namespace flashtick {
namespace {

using Json = nlohmann::json;
constexpr char kManifest[] = "manifest.json";

std::string Hex32(uint32_t v) { return absl::StrFormat("%08x", v); }

// Writes one data file and returns its manifest entry.
absl::StatusOr<Json> WriteData(const std::string& dir, const std::string& name,
                               const Safetensors& st) {
  ASSIGN_OR_RETURN(std::string bytes, st.Serialize());
  RETURN_IF_ERROR(WriteFileAtomic(dir + "/" + name, bytes));
  return Json{{"name", name}, {"bytes", bytes.size()}, {"crc32", Hex32(Crc32(bytes))}};
}

// Reads one data file named by the manifest, checks its size and CRC-32, parses it.
absl::StatusOr<Safetensors> ReadData(const std::string& dir, const Json& entry) {
  const std::string name = entry.at("name").get<std::string>();
  if (name.find('/') != std::string::npos || name.empty())
    return absl::DataLossError(absl::StrCat("checkpoint manifest names a bad file '", name, "'"));
  const std::string path = dir + "/" + name;
  ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  const uint64_t want_bytes = entry.at("bytes").get<uint64_t>();
  const std::string want_crc = entry.at("crc32").get<std::string>();
  if (bytes.size() != want_bytes)
    return absl::DataLossError(absl::StrCat("checkpoint file ", path,
                                            " is corrupted: ", bytes.size(),
                                            " bytes, the manifest says ", want_bytes));
  const std::string got_crc = Hex32(Crc32(bytes));
  if (got_crc != want_crc)
    return absl::DataLossError(absl::StrCat("checkpoint file ", path, " is corrupted: CRC-32 ",
                                            got_crc, ", the manifest says ", want_crc));
  absl::StatusOr<Safetensors> st = Safetensors::Parse(bytes);
  if (!st.ok())
    return absl::DataLossError(absl::StrCat("checkpoint file ", path, ": ", st.status().message()));
  return st;
}

Json OptionsToJson(const TrainerOptions& o) {
  return Json{{"dtype", DTypeName(o.dtype)},
              {"compute_dtype", DTypeName(o.compute_dtype.value_or(o.dtype))},
              {"optimizer",
               {{"kind", OptimizerKindName(o.optimizer)},
                {"beta1", o.hyper.beta1},
                {"beta2", o.hyper.beta2},
                {"eps", o.hyper.eps},
                {"weight_decay", o.hyper.weight_decay},
                {"rho", o.hyper.rho}}},
              {"lr",
               {{"peak", o.lr.peak},
                {"warmup_steps", o.lr.warmup_steps},
                {"total_steps", o.lr.total_steps},
                {"min_ratio", o.lr.min_ratio}}},
              {"micro_batch", o.micro_batch},
              {"max_grad_norm", o.max_grad_norm},
              {"hessian_interval", o.hessian_interval},
              {"hutchinson_samples", o.hutchinson_samples},
              {"seed", std::to_string(o.seed)}};
}

absl::StatusOr<DType> ParseDType(const std::string& name) {
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16})
    if (name == DTypeName(d)) return d;
  return absl::DataLossError(absl::StrCat("checkpoint manifest: unknown dtype '", name, "'"));
}

absl::StatusOr<TrainerOptions> OptionsFromJson(const Json& j) {
  TrainerOptions o;
  ASSIGN_OR_RETURN(o.dtype, ParseDType(j.at("dtype").get<std::string>()));
  ASSIGN_OR_RETURN(o.compute_dtype, ParseDType(j.at("compute_dtype").get<std::string>()));
  const Json& opt = j.at("optimizer");
  ASSIGN_OR_RETURN(o.optimizer, ParseOptimizerKind(opt.at("kind").get<std::string>()));
  o.hyper.beta1 = opt.at("beta1").get<double>();
  o.hyper.beta2 = opt.at("beta2").get<double>();
  o.hyper.eps = opt.at("eps").get<double>();
  o.hyper.weight_decay = opt.at("weight_decay").get<double>();
  o.hyper.rho = opt.at("rho").get<double>();
  const Json& lr = j.at("lr");
  o.lr.peak = lr.at("peak").get<double>();
  o.lr.warmup_steps = lr.at("warmup_steps").get<int64_t>();
  o.lr.total_steps = lr.at("total_steps").get<int64_t>();
  o.lr.min_ratio = lr.at("min_ratio").get<double>();
  o.micro_batch = j.at("micro_batch").get<int64_t>();
  o.max_grad_norm = j.at("max_grad_norm").get<double>();
  o.hessian_interval = j.at("hessian_interval").get<int64_t>();
  o.hutchinson_samples = j.at("hutchinson_samples").get<int>();
  o.seed = std::stoull(j.at("seed").get<std::string>());
  return o;
}

// params-<step>.safetensors or optimizer-<step>.safetensors.
bool IsDataFileName(const std::string& n) {
  return (n.rfind("params-", 0) == 0 || n.rfind("optimizer-", 0) == 0) && n.size() > 12 &&
         n.compare(n.size() - 12, 12, ".safetensors") == 0;
}

// Removes params-*/optimizer-* files other than the ones the manifest names.
void RemoveStale(const std::string& dir, const std::string& keep1, const std::string& keep2) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (IsDataFileName(n) && n != keep1 && n != keep2) std::filesystem::remove(e.path(), ec);
  }
}

}  // namespace

std::vector<std::string> TrainCheckpoint::RemoveInterruptedWrites(const std::string& dir) {
  const std::vector<std::string> paths = RemoveInterruptedAtomicWrites(
      dir, /*recursive=*/false,
      [](const std::string& target) { return IsDataFileName(target) || target == kManifest; });
  std::vector<std::string> removed;
  for (const std::string& path : paths) {
    removed.push_back(std::filesystem::path(path).filename().string());
    // model/ has no logger (server/logging.h is a layer above); flashtickd's log is
    // its stderr, so the line lands there.
    std::fprintf(stderr, "checkpoint %s: removed %s, left by a write that was interrupted\n",
                 dir.c_str(), removed.back().c_str());
  }
  return removed;
}

absl::Status TrainCheckpoint::Save(Trainer& trainer, const std::string& dir,
                                   const Json& attachment) {
  RETURN_IF_ERROR(MakeDirs(dir));
  RemoveInterruptedWrites(dir);
  ParamStore& store = trainer.params();
  TrainOptimizer& opt = trainer.optimizer();
  const std::string tag = absl::StrFormat("%010d", trainer.step());
  Safetensors params, state;
  params.metadata()["format"] = "pt";
  RETURN_IF_ERROR(store.AddTo(&params, "", store.values()));
  RETURN_IF_ERROR(store.AddTo(&state, "m.", opt.m()));
  RETURN_IF_ERROR(store.AddTo(&state, absl::StrCat(opt.second_name(), "."), opt.second()));
  ASSIGN_OR_RETURN(Json pf, WriteData(dir, "params-" + tag + ".safetensors", params));
  ASSIGN_OR_RETURN(Json of, WriteData(dir, "optimizer-" + tag + ".safetensors", state));
  Json manifest = {{"format", kFormat},
                   {"version", kVersion},
                   {"step", trainer.step()},
                   {"rng_state", std::to_string(trainer.rng().state())},
                   {"options", OptionsToJson(trainer.options())},
                   {"config", Json::parse(trainer.config().ToJson())},
                   {"files", {{"params", pf}, {"optimizer", of}}}};
  // In the manifest, not a file of its own: the one rename below publishes it together
  // with the weights, so no crash can pair it with another save's.
  if (!attachment.is_null()) manifest["attachment"] = attachment;
  RETURN_IF_ERROR(WriteFileAtomic(dir + "/" + kManifest, manifest.dump(2) + "\n"));
  RemoveStale(dir, pf["name"], of["name"]);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Trainer>> TrainCheckpoint::Load(const std::string& dir,
                                                               Backend* backend) {
  const std::string path = dir + "/" + kManifest;
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  // nlohmann throws on a missing key or a wrong type; no exception leaves this function.
  try {
    const Json m = Json::parse(text);
    if (m.at("format").get<std::string>() != kFormat || m.at("version").get<int>() != kVersion)
      return absl::DataLossError(
          absl::StrCat(path, " is not a version-", kVersion, " ", kFormat, " manifest"));
    ASSIGN_OR_RETURN(ModelConfig config, ModelConfig::FromJson(m.at("config").dump()));
    ASSIGN_OR_RETURN(TrainerOptions options, OptionsFromJson(m.at("options")));
    ASSIGN_OR_RETURN(Safetensors params, ReadData(dir, m.at("files").at("params")));
    ASSIGN_OR_RETURN(Safetensors state, ReadData(dir, m.at("files").at("optimizer")));
    ASSIGN_OR_RETURN(std::unique_ptr<Trainer> t, Trainer::Create(config, options, backend));
    ParamStore& store = t->params();
    TrainOptimizer& opt = t->optimizer();
    auto load = [&](const Safetensors& st, const std::string& prefix, const TensorView& flat) {
      absl::Status s = store.ReadFrom(st, prefix, flat);
      if (!s.ok()) return absl::DataLossError(absl::StrCat("checkpoint ", dir, ": ", s.message()));
      return s;
    };
    RETURN_IF_ERROR(load(params, "", store.values()));
    RETURN_IF_ERROR(load(state, "m.", opt.m()));
    RETURN_IF_ERROR(load(state, absl::StrCat(opt.second_name(), "."), opt.second()));
    t->step_ = m.at("step").get<int64_t>();
    t->rng_.set_state(std::stoull(m.at("rng_state").get<std::string>()));
    return t;
  } catch (const std::exception& e) {
    return absl::DataLossError(
        absl::StrCat(path, " is not a valid checkpoint manifest: ", e.what()));
  }
}

absl::StatusOr<Json> TrainCheckpoint::LoadAttachment(const std::string& dir) {
  const std::string path = dir + "/" + kManifest;
  if (!std::filesystem::exists(path))
    return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  const Json m = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  // No exception leaves this function: every access is checked first.
  const bool valid = !m.is_discarded() && m.is_object() && m.contains("format") &&
                     m["format"] == kFormat && m.contains("version") &&
                     m["version"].is_number_integer() && m["version"].get<int>() == kVersion;
  if (!valid)
    return absl::DataLossError(
        absl::StrCat(path, " is not a version-", kVersion, " ", kFormat, " manifest"));
  auto it = m.find("attachment");
  return it == m.end() ? Json(nullptr) : *it;
}

}  // namespace flashtick
