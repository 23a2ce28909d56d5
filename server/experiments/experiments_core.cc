// ExperimentsCore (see experiments_core.h).
#include "server/experiments/experiments_core.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/file_io.h"
#include "server/experiments/arm_promotion.h"
#include "server/experiments/experiment_proto.h"
#include "server/experiments/sweep_memory_estimate.h"
#include "ticks/data_file.h"
#include "research/sweep/sweep_config.h"
#include "research/sweep/sweep_presets.h"

namespace flashtick {
namespace {

namespace fs = std::filesystem;

constexpr int kDefaultPageSize = 50;
constexpr int kMaxPageSize = 500;
constexpr size_t kMaxRequestKey = 200;
constexpr size_t kMaxIdLength = 64;

absl::Status CheckId(const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("experiment id is empty");
  if (id.size() > kMaxIdLength) return absl::InvalidArgumentError("experiment id is too long");
  return absl::OkStatus();
}

std::string ContentType(const std::string& name) {
  if (absl::EndsWith(name, ".png")) return "image/png";
  if (absl::EndsWith(name, ".md")) return "text/markdown";
  if (absl::EndsWith(name, ".json")) return "application/json";
  return "application/octet-stream";
}

}  // namespace

absl::StatusOr<SweepConfig> ExperimentsCore::Parse(const v1::SubmitSweepRequest& request,
                                                   std::string* stored) const {
  const int given = (request.has_config() ? 1 : 0) + (request.config_json().empty() ? 0 : 1) +
                    (request.preset().empty() ? 0 : 1);
  if (given != 1) {
    return absl::InvalidArgumentError(
        "SubmitSweep needs exactly one of config, config_json and preset (e.g. preset \"demo\")");
  }
  if (request.request_key().size() > kMaxRequestKey) {
    return absl::InvalidArgumentError("request_key is longer than 200 characters");
  }
  absl::StatusOr<SweepConfig> config;
  if (request.has_config()) {
    // The message is the schema itself: the same reader and rules as the JSON routes.
    config = SweepConfigFromProto(request.config());
  } else {
    std::string json;
    if (!request.preset().empty()) {
      auto preset = SweepPresetJson(request.preset());
      if (!preset.ok()) return absl::InvalidArgumentError(std::string(preset.status().message()));
      json = *std::move(preset);
    } else {
      if (request.config_json().size() > static_cast<size_t>(limits_.max_config_bytes)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "config_json is ", request.config_json().size(),
            " bytes; this server accepts at most ", limits_.max_config_bytes,
            " (--max-config-bytes)"));
      }
      json = request.config_json();
    }
    config = ParseSweepConfig(json);
  }
  // The same validation for every route in; what is stored is its full output.
  if (!config.ok()) {
    return absl::InvalidArgumentError(std::string(config.status().message()));
  }
  *stored = SweepConfigToJson(*config);
  if (stored->size() > static_cast<size_t>(limits_.max_config_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the configuration is ", stored->size(), " bytes; this server accepts at most ",
        limits_.max_config_bytes, " (--max-config-bytes)"));
  }
  return config;
}

absl::StatusOr<std::string> ExperimentsCore::ResolveConfig(
    const v1::SubmitSweepRequest& request) const {
  std::string stored;
  RETURN_IF_ERROR(Parse(request, &stored).status());
  return stored;
}

absl::StatusOr<v1::Experiment> ExperimentsCore::Submit(const v1::SubmitSweepRequest& request,
                                                       const Submitter& submitter) {
  std::string stored;
  absl::StatusOr<SweepConfig> config = Parse(request, &stored);
  if (!config.ok()) return config.status();
  if (config->data.csv) {
    // Refused now, not when the sweep starts: the data root and path rules.
    const DataFilePolicy policy = GetDataFilePolicy();
    for (const std::string& path : config->data.csv_data.paths) {
      absl::StatusOr<std::string> resolved = ResolveDataPath(path, policy);
      if (!resolved.ok()) {
        return absl::Status(resolved.status().code(),
                            absl::StrCat("data.csv.paths: ", resolved.status().message()));
      }
    }
  }
  if (limits_.memory_bytes > 0) {
    RETURN_IF_ERROR(CheckSweepMemory(*config, limits_.memory_bytes, limits_.arms_elsewhere));
  }
  // A request_key names a retry of the same client's submission; another client's
  // equal key is a different submission.
  const std::string key =
      request.request_key().empty() ? "" : absl::StrCat(submitter.client, "\x1f",
                                                         request.request_key());
  bool created = false;
  ASSIGN_OR_RETURN(ExperimentRecord record,
                   store_->Create(config->name, stored, key, &created, submitter));
  if (created) runner_->Enqueue(record.id);
  return Get(record.id);
}

absl::StatusOr<ExperimentRecord> ExperimentsCore::Visible(const std::string& id,
                                                          const Caller& caller) {
  RETURN_IF_ERROR(CheckId(id));
  ASSIGN_OR_RETURN(ExperimentRecord record, store_->Get(id));
  if (!caller.is_operator && record.client != caller.client) {
    // The same answer as for an id that does not exist: ids are sequential, and
    // another client's experiments are not this one's business.
    return absl::NotFoundError(
        absl::StrCat("no experiment '", id, "'; `flashtick sweep list` shows the ids"));
  }
  return record;
}

absl::StatusOr<v1::Experiment> ExperimentsCore::Get(const std::string& id, const Caller& caller) {
  ASSIGN_OR_RETURN(ExperimentRecord record, Visible(id, caller));
  ASSIGN_OR_RETURN(std::vector<ArmRecord> arms, store_->Arms(id));
  return ToProto(record, arms);
}

absl::StatusOr<v1::ListExperimentsResponse> ExperimentsCore::List(
    const v1::ListExperimentsRequest& request, const Caller& caller) {
  if (request.page_size() < 0 || request.page_size() > kMaxPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size must be between 0 (default ", kDefaultPageSize, ") and ",
                     kMaxPageSize));
  }
  int64_t before = 0;
  if (!request.page_token().empty() && !absl::SimpleAtoi(request.page_token(), &before)) {
    return absl::InvalidArgumentError("page_token is not one this server returned");
  }
  const int limit = request.page_size() > 0 ? request.page_size() : kDefaultPageSize;
  ASSIGN_OR_RETURN(std::vector<ExperimentRecord> records,
                   store_->List(static_cast<int>(request.state_filter()), before, limit + 1,
                                caller.is_operator ? nullptr : &caller.client));
  v1::ListExperimentsResponse out;
  for (size_t i = 0; i < records.size() && static_cast<int>(i) < limit; ++i) {
    ASSIGN_OR_RETURN(std::vector<ArmRecord> arms, store_->Arms(records[i].id));
    v1::Experiment* e = out.add_experiments();
    *e = ToProto(records[i], arms);
    e->clear_config_json();
  }
  if (static_cast<int>(records.size()) > limit) {
    out.set_next_page_token(absl::StrCat(records[limit - 1].seq));
  }
  return out;
}

absl::StatusOr<v1::Experiment> ExperimentsCore::Cancel(const std::string& id,
                                                       const Caller& caller) {
  RETURN_IF_ERROR(Visible(id, caller).status());
  RETURN_IF_ERROR(runner_->Cancel(id));
  return Get(id);
}

absl::Status ExperimentsCore::Delete(const std::string& id, const Caller& caller) {
  ASSIGN_OR_RETURN(ExperimentRecord record, Visible(id, caller));
  if (!IsTerminal(record.state)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "experiment ", id, " is ", ExpStateName(record.state),
        "; cancel it first (flashtick sweep cancel ", id, "), then delete it"));
  }
  RETURN_IF_ERROR(store_->Delete(id));
  // The directory is the store's own <root>/<id>; never a path from elsewhere.
  const fs::path dir = fs::path(store_->root()) / id;
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("experiment ", id,
                                            " was deleted but its directory was not: ",
                                            ec.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::GetReportResponse> ExperimentsCore::Report(const v1::GetReportRequest& request,
                                                             const Caller& caller) {
  RETURN_IF_ERROR(CheckId(request.id()));
  ASSIGN_OR_RETURN(v1::Experiment experiment, Get(request.id(), caller));
  const bool markdown = request.format() == v1::REPORT_FORMAT_MARKDOWN;
  const std::string dir = experiment.directory();
  const std::string path = dir + (markdown ? "/report.md" : "/report.json");
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "experiment ", request.id(), " is ",
        v1::ExperimentState_Name(experiment.state()),
        " and has no report yet; the report is written when the sweep ends (watch it with "
        "`flashtick sweep watch ", request.id(), "`)"));
  }
  v1::GetReportResponse out;
  out.set_id(request.id());
  out.set_format(markdown ? v1::REPORT_FORMAT_MARKDOWN : v1::REPORT_FORMAT_JSON);
  ASSIGN_OR_RETURN(std::string content, ReadFileToString(path));
  out.set_content(std::move(content));
  *out.mutable_verdict() = experiment.verdict();
  if (request.include_files()) {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      const bool wanted = absl::EndsWith(name, ".png") || name == "report.md" ||
                          name == "report.json" || name == "config.json";
      if (!entry.is_regular_file() || !wanted) continue;
      ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(entry.path().string()));
      v1::ReportFile* f = out.add_files();
      f->set_name(name);
      f->set_content_type(ContentType(name));
      f->set_content(std::move(bytes));
    }
  }
  return out;
}

absl::StatusOr<v1::ExperimentProgress> ExperimentsCore::Snapshot(const std::string& id,
                                                                 const Caller& caller) {
  ASSIGN_OR_RETURN(ExperimentRecord record, Visible(id, caller));
  auto last = hub_->Last(id);
  if (last.has_value() && !IsTerminal(record.state)) return *last;
  return StateEvent(record, absl::StrCat("experiment ", id, " is ", ExpStateName(record.state)));
}

absl::StatusOr<v1::PromoteArmResponse> ExperimentsCore::Promote(
    const v1::PromoteArmRequest& request, const Caller& caller) {
  RETURN_IF_ERROR(CheckId(request.experiment_id()));
  RETURN_IF_ERROR(ModelRepository::ValidateModelName(request.model_name()));
  ASSIGN_OR_RETURN(ExperimentRecord record, Visible(request.experiment_id(), caller));
  if (model_control_ == nullptr) {
    return absl::FailedPreconditionError(
        "this flashtickd has no model repository to promote into (--model-repository)");
  }
  const std::string& id = record.id;
  if (record.state != ExpState::kSucceeded) {
    return absl::FailedPreconditionError(absl::StrCat(
        "experiment ", id, " is ", ExpStateName(record.state),
        "; only a SUCCEEDED experiment's arm can be promoted",
        IsTerminal(record.state) ? "" : absl::StrCat(" (watch it: flashtick sweep watch ", id, ")")));
  }
  ASSIGN_OR_RETURN(v1::Experiment experiment, Get(id, caller));
  std::string arm_id = request.arm_id();
  if (arm_id.empty()) {
    int64_t best_context = 0;
    const nlohmann::json verdict =
        nlohmann::json::parse(record.verdict_json, nullptr, /*allow_exceptions=*/false);
    if (verdict.is_object() && verdict.contains("best_context") &&
        verdict["best_context"].is_number_integer()) {
      best_context = verdict["best_context"].get<int64_t>();
    }
    ASSIGN_OR_RETURN(arm_id, WinningArm(experiment, best_context));
  }
  std::vector<std::string> arm_ids;
  const v1::ArmStatus* arm = nullptr;
  for (const v1::ArmStatus& a : experiment.arms()) {
    arm_ids.push_back(a.arm_id());
    if (a.arm_id() == arm_id) arm = &a;
  }
  if (arm == nullptr) {
    return absl::NotFoundError(absl::StrCat("experiment ", id, " has no arm '", arm_id,
                                            "'; its arms: ", absl::StrJoin(arm_ids, ", ")));
  }
  if (arm->arm_state() != "done") {
    return absl::FailedPreconditionError(absl::StrCat(
        "arm ", arm_id, " of experiment ", id, " is ", arm->arm_state(),
        ", not done: it has no final weights to promote"));
  }
  // The arm's directory is the store's own; the id names an arm the store listed.
  const std::string arm_dir = (fs::path(record.dir) / "arms" / arm_id).string();
  ASSIGN_OR_RETURN(AddedVersion added,
                   model_control_->AddVersion(request.model_name(), [&](const std::string& dir) {
                     return ExportArmModel(arm_dir, dir);
                   }));
  v1::PromoteArmResponse out;
  out.set_model_name(request.model_name());
  out.set_version(added.version);
  out.set_arm_id(arm_id);
  out.set_path(added.path);
  return out;
}

}  // namespace flashtick
