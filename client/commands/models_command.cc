// `flashtick models` (see models_command.h). The model list comes from Triton's
// RepositoryIndex extension (the KServe spec has no listing RPC).
#include "client/commands/models_command.h"

#include <cstdio>
#include <set>

#include <CLI/CLI.hpp>

#include "absl/strings/str_join.h"
#include "client/inference_client.h"

namespace flashtick {
namespace {

void PrintTensors(const char* kind,
                  const google::protobuf::RepeatedPtrField<
                      inference::ModelMetadataResponse::TensorMetadata>& tensors) {
  for (const auto& tensor : tensors) {
    std::printf("  %-7s %s %s [%s]\n", kind, tensor.name().c_str(), tensor.datatype().c_str(),
                absl::StrJoin(tensor.shape(), ", ").c_str());
  }
}

int RunModels(const ClientOptions& options) {
  InferenceClient client(options);
  auto server = client.ServerMetadata();
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 2;
  }
  std::printf("server %s %s at %s\n", server->name().c_str(), server->version().c_str(),
              options.server.c_str());
  auto index = client.RepositoryIndex();
  if (!index.ok()) {
    std::fprintf(stderr, "%s\n", index.status().ToString().c_str());
    return 2;
  }
  std::set<std::string> names;
  for (const auto& model : index->models()) names.insert(model.name());
  if (names.empty()) std::printf("no models loaded\n");
  for (const std::string& name : names) {
    auto metadata = client.ModelMetadata(name, "");
    if (!metadata.ok()) {
      std::fprintf(stderr, "%s\n", metadata.status().ToString().c_str());
      return 2;
    }
    std::printf("\nmodel %s  versions [%s]  platform %s\n", metadata->name().c_str(),
                absl::StrJoin(metadata->versions(), ", ").c_str(), metadata->platform().c_str());
    PrintTensors("input", metadata->inputs());
    PrintTensors("output", metadata->outputs());
  }
  return 0;
}

}  // namespace

void AddModelsCommand(CLI::App* app, const ClientOptions* options, int* exit_code) {
  CLI::App* cmd = app->add_subcommand("models", "Server metadata and every model's metadata.");
  cmd->callback([options, exit_code] { *exit_code = RunModels(*options); });
}

}  // namespace flashtick
