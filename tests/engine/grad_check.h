// Finite-difference helpers for the engine's gradient tests (double precision).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/rng.h"

namespace bubblescope::engine::testing {

inline std::vector<double> randomVector(size_t n, uint64_t seed, double scale = 1.0) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) x = scale * rng.normal();
  return v;
}

// Central difference of `loss` with respect to x[i], restoring x[i].
inline double numericGrad(const std::function<double()>& loss, double* x, double eps = 1e-5) {
  const double saved = *x;
  *x = saved + eps;
  const double plus = loss();
  *x = saved - eps;
  const double minus = loss();
  *x = saved;
  return (plus - minus) / (2 * eps);
}

// Checks analytic[i] against the finite difference for every element of x
// (or every `stride`-th). Tolerance: |a - n| <= absTol + relTol * |n|. Also
// requires that the gradient is not identically ~0 (the check would be void).
inline void expectGradientsMatch(const std::string& what, const std::function<double()>& loss,
                                 double* x, const double* analytic, size_t n, size_t stride = 1,
                                 double absTol = 1e-7, double relTol = 1e-5) {
  double maxAbs = 0.0;
  int failures = 0;
  for (size_t i = 0; i < n; i += stride) {
    const double num = numericGrad(loss, x + i);
    maxAbs = std::max(maxAbs, std::abs(num));
    if (std::abs(analytic[i] - num) > absTol + relTol * std::abs(num) && failures++ < 5) {
      ADD_FAILURE() << what << "[" << i << "]: analytic " << analytic[i] << " numeric " << num;
    }
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " mismatching elements";
  EXPECT_GT(maxAbs, 1e-4) << what << ": gradient is ~0, the check proves nothing";
}

}  // namespace bubblescope::engine::testing
