// Planted cue with a tag per lag family: the planted-cue days of
// research/synthetic/planted_cue.h (docs/research/protocol.md; a random
// walk, a 4-step flow motif [A,0,A,0] / [0,A,0,A] at c, a drift b·δ' over
// [c+L, c+L+k)) except that family f's motif has its own amplitude
// A_f = A·tag_ratio^f, so a cue says which lag it announces.
// Why a variant: with one motif for every family (research/synthetic/planted_cue.h) a
// model that sees a motif L_f − 1 steps back cannot tell whether it is family f's
// (a drift comes now) or another family's (nothing comes now): with F families the
// best a model can do at such a step is P(drift) = 1/F, and the signal left
// (~0.1 nats per candidate step for F = 3) is too faint for a tiny CPU model to learn
// in minutes. Tagged cues keep the question — a context of N can use a cue of lag L
// only if N ≥ L — and make each visible family fully predictable, so small CPU sweeps
// (the demo, the end-to-end tests) can show the ranking. The null twin draws every
// drift sign independently of its cue, as planted_cue's does.
// Events never overlap (rejection sampling over all families together).
#pragma once

#include "absl/status/statusor.h"
#include "research/synthetic/planted_cue.h"

namespace flashtick {

// cfg as for GeneratePlantedCue; family f's amplitude is cfg.motif_amplitude·ratio^f.
absl::StatusOr<PlantedCueData> GenerateTaggedCue(const PlantedCueConfig& cfg, double tag_ratio);

}  // namespace flashtick
