// TrainCheckpoint: everything a training run needs to continue bit for bit — the
// weights, the optimizer state (m and v, or m and the Hessian EMA h), the probe RNG
// state, the step, the trainer options and the model config — in a directory:
//   params-<step>.safetensors     weights, tensor names of model/transformer.h
//   optimizer-<step>.safetensors  "m.<name>", "v.<name>" (AdamW) or "h.<name>" (Sophia-H)
//   manifest.json                 format, step, rng, options, config, and per file its
//                                 size and CRC-32 (trainer/crc32.h); optionally the
//                                 caller's attachment (below)
// Every file is written atomically (temporary file, fsync, rename, fsync of the
// directory; common/file_io.h), data files first and the manifest last, under new
// step-numbered names: a crash at any moment leaves the previous manifest and the files
// it names intact. Stale data files are removed after the manifest is in place, and
// the temporary files of writes killed before their rename at the start of the next Save.
// The attachment is JSON of the caller's own (a sweep arm keeps its counters there,
// research/sweep/arm_runner.h) written inside the manifest, so it is published by the
// same atomic write as the weights it belongs to: whoever loads the checkpoint reads
// the attachment of exactly that save, never one of an earlier or a later one.
// Loading checks the format, every file's size and CRC-32 and every tensor's shape,
// and refuses anything corrupted with a DataLoss error that names the file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "trainer/trainer.h"

namespace flashtick {

class TrainCheckpoint {
 public:
  static constexpr char kFormat[] = "flashtick-train-checkpoint";
  static constexpr int kVersion = 1;

  // attachment: stored with the checkpoint when not null (see above).
  static absl::Status Save(Trainer& trainer, const std::string& dir,
                           const nlohmann::json& attachment = nullptr);
  // Removes the temporary files (common/file_io.h: "<name>.tmp.<pid>.<random>") that
  // writes of Save's own files into `dir` left when killed before their rename (the
  // writer no longer runs: RemoveInterruptedAtomicWrites), and says so on stderr. Returns the names
  // removed. Save calls it first; nothing else in `dir` is touched.
  static std::vector<std::string> RemoveInterruptedWrites(const std::string& dir);
  // A trainer in the saved state, on `backend`, with the saved options.
  static absl::StatusOr<std::unique_ptr<Trainer>> Load(const std::string& dir, Backend* backend);
  // The attachment of the checkpoint in `dir`: null when it was saved without one,
  // NotFound when `dir` holds no checkpoint, DataLoss when its manifest is unreadable.
  static absl::StatusOr<nlohmann::json> LoadAttachment(const std::string& dir);
};

}  // namespace flashtick
