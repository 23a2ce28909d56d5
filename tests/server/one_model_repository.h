// A model repository holding one random CPU model (width 32, 4 heads, 2 KV heads,
// max_context 1024) as version 1 of `name`, for server tests that run InferenceCore
// without files on disk.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "kernels/backend.h"
#include "model/transformer.h"
#include "server/model_repository.h"

namespace flashtick::testing_server {

inline ModelConfig SmallServedConfig() {
  ModelConfig config;
  config.width = 32;
  config.heads = 4;
  config.kv_heads = 2;
  config.max_context = 1024;
  return config;
}

inline absl::StatusOr<std::unique_ptr<ModelRepository>> OneModelRepository(const std::string& name,
                                                                            Backend* backend) {
  const ModelConfig config = SmallServedConfig();
  ASSIGN_OR_RETURN(std::unique_ptr<Transformer> model, Transformer::InitRandom(config, 7, backend));
  auto entry = std::make_unique<ModelEntry>();
  entry->name = name;
  entry->version = 1;
  entry->model = std::move(model);
  entry->features = config.features;
  entry->classes = config.classes;
  entry->max_context = config.max_context;
  std::vector<std::unique_ptr<ModelEntry>> entries;
  entries.push_back(std::move(entry));
  return ModelRepository::FromEntries(std::move(entries));
}

}  // namespace flashtick::testing_server
