// Keyed cue: a planted long-range signal that a transformer retrieves by content,
// at any distance (docs/research/protocol.md, "Keyed cue").
//   event of family f (lag L_f), key κ ∈ [0, K), sign δ, at cue step c:
//     cue   spread[c] = r(κ)·spread,  flow[c] = δ·A     the key, and the sign
//     go    spread[g] = r(κ)·spread,  g = c + L_f − 1   the same key, no sign
//     move  return[g+1] += δ'·b·k                       one jump after the go
//   r(κ) = 2 + s·κ (s = key_spread_step, 0.5 by default: 2, 2.5, ..., in units of the
//   normal spread; a wider step makes keys easier to tell apart); δ' = δ, or for the
//   null twin an independent fair coin (the same cues, keys, go markers and moves).
// Why keys: the go-marker generator (research/sweep/go_cue.h) names only the lag
// family, so a model must find the cue by counting exactly L − 1 steps back among
// hundreds of other bursts, which no model here learned past L ≈ 40. A key turns the
// task into associative recall (the induction-head pattern, Olsson et al. 2022;
// multi-query associative recall, Arora et al. 2023 "Zoology"): the go step's query
// matches the one cue whose spread carries the same key, wherever it lies, and reads
// its sign from the flow. Distance no longer enters what must be learned; only
// whether the cue is inside the window does, which is the question the sweep asks.
// Uniqueness: no two events of one key are placed so that one's cue lies in the
// `key_window` steps ending at the other's go (for the sweep, the longest context),
// so every window of any arm holds at most the event's own cue of that key, or
// none. A context of N therefore calls an event of lag L iff N ≥ L (the cue is
// inside), and otherwise sees no cue of that key at all: a coin.
// Why a jump: a drift over k steps lets a model that missed the cue ride the rest of
// the move from its first step, in the null twin too; a single jump leaves nothing
// to ride, so only the cue pays.
// Events stay inside their day (cue and go in one session); lags and the key window
// are measured on the concatenated grid, so windows longer than a day see the days
// before.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "research/synthetic/planted_cue.h"

namespace flashtick {

struct KeyedCueConfig {
  PlantedCueConfig base;  // days, steps, lags, horizon k, σ, drift b, A, noise, seed, null twin
  std::vector<int64_t> events_per_family;  // per day; empty: base.events_per_lag_per_day each
  int keys = 16;                           // K
  int64_t key_window = 0;                  // W; 0: the longest lag
  double key_spread_step = 0.5;            // s in r(κ) = 2 + s·κ
  // The cue's key sits key_lead steps before its sign (spread[c − key_lead] = r(κ)·spread;
  // the go keeps its key at g). 0: key and sign at the cue step, as above. With 1 the go
  // step no longer matches a step that holds the sign and its own key at once — itself
  // included: the induction-head arrangement (Olsson et al. 2022: match the step after
  // the previous occurrence), where a key match at offset 0 finds the go step itself,
  // which holds no sign (docs/sweeps/keyed.md, sixth session). An arm then sees an
  // event iff L + key_lead ≤ N (the key inside the window too).
  int64_t key_lead = 0;
  // The cue's key level is shifted by this many normal spreads against the go's:
  // spread[c − key_lead] = (r(κ) + cue_key_shift)·spread, spread[g] = r(κ)·spread. With a
  // shift past the key range (≥ s·K) no go step carries a cue's level, so a query that
  // matches its own level finds no cue — it must match the shifted one. On Fourier
  // inputs (docs/model.md) a shift by a constant is a fixed rotation of each sin/cos
  // pair, which a linear query map holds exactly: the go's query rotated by the shift
  // peaks on its cue's key and not on itself, straight from the embedding
  // (docs/sweeps/keyed.md, seventh session). 0: cue and go share one level.
  double cue_key_shift = 0.0;
  // Where the cue's sign lives. 0: in its flow (flow[c] = δ·A, as above). R > 0: the
  // flow is a buy burst +A at every cue, whatever its sign, and the sign is a price jump
  // return[c] += δ·R bp at the cue step. Why: with the sign in the flow's sign, nothing
  // linear in a step's inputs says "this step is a cue" (|flow| needs an MLP), so a head
  // that matches keys finds the go step itself first — the perfect match at offset 0,
  // where no rotary pair has turned, and a step with no sign (docs/sweeps/keyed.md,
  // sixth session: missed families put 0.88–1.00 of the call step's weight on itself).
  // A burst of one sign at every cue is a linear feature a query can prefer at any
  // distance, so the cue beats the go's self-match from the first layer, for every key
  // and lag at once. The jump is kept out of every go's label window (like the moves),
  // so it changes no call's label; the null twin keeps it (its δ is the cue's).
  double cue_sign_return_bps = 0.0;
};

// The spread ratio r(κ) = 2 + step·κ that carries key κ (exposed for tests and the report).
double KeySpreadRatio(int key, double step = 0.5);

// InvalidArgument for impossible configurations (a lag that leaves no room for the
// go's label in a day, K < 1, reservations that cannot fit a day); ResourceExhausted when random
// placement cannot fit the events under the reservations (fewer events per day, more
// keys or more days).
// Each event's key is in PlantedEvent::key.
absl::StatusOr<PlantedCueData> GenerateKeyedCue(const KeyedCueConfig& cfg);

}  // namespace flashtick
