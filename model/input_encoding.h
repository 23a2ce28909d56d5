// The model's input encoding: the F tick features a client sends, as the embedding
// layer sees them. With ModelConfig::fourier_feature = j ≥ 0, column j is replaced by
// its Fourier features (docs/model.md, "Fourier input features"):
//   x_j  →  sin(2π·x_j/p_1), cos(2π·x_j/p_1), …, sin(2π·x_j/p_P), cos(2π·x_j/p_P)
// appended after the other F − 1 columns (kept in order), so a row is
// F − 1 + 2P wide (ModelConfig::input_width()).
// Why: a dot product of two such rows is Σ_p cos(2π(x − x')/p), a kernel of the
// difference that peaks at x = x' (Tancik et al. 2020, "Fourier Features Let Networks
// Learn High Frequency Functions in Low Dimensional Domains"; Rahimi and Recht 2007).
// Attention can then match two steps by the level of one scalar — a spread level, a
// price level — with q·k straight from the embedding, where a raw scalar only gives
// a bilinear x·x' that has no peak at equality. Each sin/cos pair has norm 1 whatever
// x is, so a large value does not swamp the row's LayerNorm the way the raw column
// does (a spread spike 40 σ high leaves nothing else in the normalised row).
// The encoding has no parameters: training and the HVP see it as part of the input.
// It runs on the host before the one copy of the inputs to the device (its cost, a
// sin/cos per period per row, is measured in docs/model.md).
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace flashtick {

// rows × config.features raw inputs → rows × config.input_width() encoded ones.
// With no Fourier feature configured the rows are copied unchanged.
void EncodeInputs(const ModelConfig& config, const float* in, int64_t rows, float* out);

// The rows the embedding reads for `rows` raw rows: `ticks` itself when no column is
// encoded, else their encoding written into *buffer (grown as needed). Every path that
// copies inputs to the device goes through it, and each keeps its buffer (the model for
// Predict and Step, the training graph for its batches), so no forward, decode step or
// training step allocates host memory for the encoding.
const float* InputRows(const ModelConfig& config, const float* ticks, int64_t rows,
                       std::vector<float>* buffer);

}  // namespace flashtick
