// AllFinite: whether a float array holds no NaN and no ±Inf, at memory speed.
// A served request's inputs are checked before a forward (the server, then the model),
// and eight day-long sequences are 1.1 M values: `std::isfinite` in a loop that returns
// at the first bad value does not vectorise (the early exit), and cost ~0.5–1 ms of the
// host time ahead of a batched forward. Here the IEEE 754 test is on the bits (a float is
// non-finite exactly when its exponent field is all ones) and OR-reduced without an
// exit, which the compiler vectorises; callers that need the position of a bad value
// look for it only after this says there is one.
#pragma once

#include <cstddef>

namespace flashtick {

bool AllFinite(const float* data, size_t n);

}  // namespace flashtick
