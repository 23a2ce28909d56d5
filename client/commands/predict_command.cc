// `flashtick predict` (see predict_command.h).
#include "client/commands/predict_command.h"

#include <cstdio>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/inference_client.h"
#include "client/prediction_summary.h"
#include "client/tick_csv.h"
#include "common/status_macros.h"
#include "ticks/features.h"

namespace flashtick {
namespace {

struct PredictArgs {
  std::string model;
  std::string version;
  std::string csv;
  std::optional<uint64_t> synthetic_seed;
  int64_t synthetic_steps = kSessionSeconds;
  bool last_only = false;
  std::string output;
  std::string save_features;
};

// The only served model when --model is not given.
absl::StatusOr<std::string> DefaultModel(InferenceClient& client) {
  ASSIGN_OR_RETURN(auto index, client.RepositoryIndex());
  std::vector<std::string> names;
  for (const auto& model : index.models()) {
    if (names.empty() || names.back() != model.name()) names.push_back(model.name());
  }
  if (names.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the server serves ", names.size(), " models (", absl::StrJoin(names, ", "),
        "); choose one with --model"));
  }
  return names.front();
}

absl::Status WriteProbabilities(const std::string& path, const InferResult& result,
                                int64_t steps_sent) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  std::fprintf(file, "step,p_down,p_flat,p_up\n");
  const int64_t first_step = steps_sent - result.steps;  // last_only returns the final step
  for (int64_t t = 0; t < result.steps; ++t) {
    const float* p = &result.probs[t * result.classes];
    std::fprintf(file, "%lld,%.9g,%.9g,%.9g\n", static_cast<long long>(first_step + t), p[0],
                 p[1], p[2]);
  }
  if (std::fclose(file) != 0) return absl::DataLossError(absl::StrCat("writing ", path, " failed"));
  return absl::OkStatus();
}

absl::Status RunPredict(const ClientOptions& options, const PredictArgs& args) {
  TickTable table;
  std::string source;
  if (args.synthetic_seed.has_value()) {
    if (args.synthetic_steps < 1) return absl::InvalidArgumentError("--steps must be ≥ 1");
    SessionGrid day = SimpleSyntheticDay(*args.synthetic_seed, args.synthetic_steps);
    table.features = ComputeFeatures(day);
    table.steps = day.steps();
    source = absl::StrCat("synthetic day seed ", *args.synthetic_seed);
  } else {
    ASSIGN_OR_RETURN(table, ReadTickCsv(args.csv));
    source = args.csv;
    if (table.backfilled_steps > 0) {
      std::fprintf(stderr, "note: %lld steps before the first quote took the first quote\n",
                   static_cast<long long>(table.backfilled_steps));
    }
  }
  if (!args.save_features.empty()) {
    RETURN_IF_ERROR(WriteFeatureCsv(args.save_features, table.features, table.steps));
  }
  InferenceClient client(options);
  std::string model = args.model;
  if (model.empty()) {
    ASSIGN_OR_RETURN(model, DefaultModel(client));
  }
  // A whole day on a CPU backend takes tens of seconds; say so instead of silence.
  std::fprintf(stderr, "predicting %lld steps with %s on %s ...\n",
               static_cast<long long>(table.steps), model.c_str(), options.server.c_str());
  ASSIGN_OR_RETURN(InferResult result, client.Infer(model, args.version, table.features, 1,
                                                    table.steps, kNumFeatures, args.last_only));
  if (result.classes != 3) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model '", model, "' has ", result.classes, " classes; the summary expects down/flat/up"));
  }
  if (!args.output.empty()) RETURN_IF_ERROR(WriteProbabilities(args.output, result, table.steps));
  std::printf("source           %s\n", source.c_str());
  std::printf("%s", FormatSummary(Summarize(result, table.steps, model)).c_str());
  return absl::OkStatus();
}

}  // namespace

void AddPredictCommand(CLI::App* app, const ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd = app->add_subcommand(
      "predict", "Predict one trading day (CSV or synthetic) and print a summary.");
  auto* csv = cmd->add_option("--csv", args->csv,
                              "CSV with header timestamp,bid,ask,flow (raw ticks, seconds "
                              "since the open), the 6 feature columns (log_return,...,"
                              "session_start), or one day of dated quotes "
                              "(timestamp,bid,ask,bid_size,ask_size)");
  auto* synthetic =
      cmd->add_option("--synthetic-day", args->synthetic_seed, "predict SimpleSyntheticDay(SEED)");
  csv->excludes(synthetic);
  cmd->add_option("--steps", args->synthetic_steps, "steps of the synthetic day")
      ->capture_default_str();
  cmd->add_option("--model", args->model, "model name (default: the only served model)");
  cmd->add_option("--model-version", args->version, "model version (default: the latest)");
  cmd->add_flag("--last-only", args->last_only, "return only the last step's probabilities");
  cmd->add_option("--output", args->output, "write step,p_down,p_flat,p_up CSV here");
  cmd->add_option("--save-features", args->save_features,
                  "write the features sent as CSV (replay with --csv)");
  cmd->callback([options, exit_code, args, csv, synthetic] {
    if (csv->count() == 0 && synthetic->count() == 0) {
      std::fprintf(stderr, "predict: give --csv FILE or --synthetic-day SEED\n");
      *exit_code = 2;
      return;
    }
    absl::Status status = RunPredict(*options, *args);
    if (!status.ok()) {
      std::fprintf(stderr, "predict: %s\n", status.ToString().c_str());
      *exit_code = 1;
      return;
    }
    *exit_code = 0;
  });
}

}  // namespace flashtick
