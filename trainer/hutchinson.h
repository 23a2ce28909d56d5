// Hutchinson's estimator of the Hessian diagonal (Hutchinson 1989; Bekas, Kokiopoulou
// & Saad 2007): for probes u with E[u uᵀ] = I, E[u∘(∇²L·u)] = diag(∇²L). We draw u
// Rademacher (±1, the minimum-variance choice; Sophia-H's paper draws N(0, I)) and
// average S samples. Each sample is one exact Hessian-vector product through the
// training graph (reverse over reverse), after the graph's Forward and Backward on the
// batch. The probe is drawn and the product u∘(Hu) accumulated on the parameters'
// device (kRademacher and kProbeProduct, kernels/ops/hutchinson.h): a refresh moves
// nothing parameter-sized through the host and waits for the device nowhere. Each
// probe's Philox key is one draw of the trainer's TrainRng, so a resumed run draws the
// same probes.
// Data parallel: every replica draws the same u, and ∇²L·u is summed over replicas
// (bucketed, overlapped with the HVP's last sweep) before the product, so hhat is the
// estimate for the union of the replicas' batches, identical on each.
#pragma once

#include "absl/status/status.h"
#include "trainer/gradient_all_reducer.h"
#include "trainer/param_store.h"
#include "trainer/train_rng.h"
#include "trainer/transformer_graph.h"

namespace flashtick {

// hhat (a flat buffer of the store) = scale·(1/S)·Σ_s u_s∘(∇²L·u_s); with a reducer,
// ∇²L·u_s is summed over the replicas first. hhat may be store.hv() itself (the trainer
// does that): it is written after the last product has been read.
absl::Status EstimateHessianDiagonal(TransformerGraph& graph, ParamStore& store, TrainRng& rng,
                                     int samples, double scale, const TensorView& hhat,
                                     GradientAllReducer* reducer = nullptr);

}  // namespace flashtick
