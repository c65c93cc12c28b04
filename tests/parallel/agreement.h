// Agreement of a parallel run with the single-rank run on the same global
// batch (docs/design.md, the engine's correctness rule): the criterion every tests/parallel
// suite applies, NaN-aware, with bounds from the maths rather than from one
// machine's rounding.
//
// Why not a max-abs bound on the parameters. AdamW moves an element by
// lr · m̂ / (√v̂ + eps) per step: about ±lr whatever the gradient's size. An
// element whose gradient is at the rounding-noise level gets a move whose
// sign the noise decides: the attention key bias (softmax is invariant to a
// shift of every score, so ∂loss/∂b_k = 0 exactly) and the weights of an
// MLP unit that barely fires (its fc row and proj column: measured, unit 82
// of h.1 in dp 2 × tp 2). A parallel run sums the same products in another
// order (tp partial sums, dp buckets, the BLAS kernel's blocking, FMA,
// vector width), so those elements may differ by up to 2 · Σ lr: measured
// 5.01e-5 (4.6e-3 · Σ lr) on an AMD EPYC with OPENBLAS_CORETYPE=Haswell,
// over a bound of 5e-5. A bound on the worst element measures the kernel,
// not the engine.
//
// The criterion (every part must hold; Σ lr = the sum of the schedule's
// learning rates over the steps run, the farthest AdamW can move an element):
// 1. Per step, the loss and the global gradient norm agree to
//    kLossRelTolerance relative (docs/design.md; float32 sums of a few thousand
//    terms carry ~1e-6). The norm sees every gradient: a tensor whose
//    gradient is scaled by s changes the norm² by (s² − 1)·f² where f is its
//    share of the norm, and a skipped reduction leaves a rank's local
//    gradient, whose norm differs from the mean's.
//    Where the run's gradients are whole on each rank (ZeRO 0, tp slices
//    included: not ZeRO 1-3 or pipelines), every gradient tensor (as AdamW
//    used it, after clipping) agrees with the reference's, relative to its
//    norm (floored at kGradFloor of the global norm: the key bias's gradient
//    is rounding noise around 0): to kGradRelTolerance at step 0, where both
//    runs start from bit-identical weights (measured 4.3e-7 at worst), and to
//    kLaterGradRelTolerance at later steps, whose weights already differ by
//    the noise-level elements' AdamW moves of 3 (measured: those shift every
//    gradient of dp 2 x tp 2 by ~2e-5 at step 1, 1.5e-4 at worst). This sees
//    what the norm and AdamW hide: a small tensor's gradient scaled wrong
//    barely moves the global norm, and AdamW's update is invariant to the
//    gradient's scale; the later bound catches gradients that leak between
//    steps.
// 2. No loss, norm or parameter is NaN or infinite, in either run; a
//    missing or misnamed parameter counts the same.
// 3. At most kOffFraction of the elements are "off": off by more than
//    kOffElementLr · Σ lr. A healthy element's error is about lr times its
//    gradient's relative rounding error (~1e-6), 1000× below that bound; only
//    the noise-level elements above may exceed it (the key biases alone are
//    hidden per layer, 0.15% of tiny; measured: 2 of 42,880 elements, in no
//    kernel more). A bug in a reduction or an optimizer slice moves whole
//    buckets or tensors by ~lr: thousands of elements (agreement_test: one
//    1000-element bucket scaled by 2 puts 6.9% off, skipped 42%).
// 4. The root mean square error of the elements that are not off is at most
//    kBulkRmsLr · Σ lr: a systematic small error (a learning rate or weight
//    decay off by 0.1%) that leaves every element under the bound of 3.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/tensor_shard.h"

namespace bubblescope::engine::testing {

// One tensor's gradient after a step as this rank holds it: its tp slice
// `shard` of the full tensor, or all of it.
struct GradientSlice {
  std::string name;
  std::vector<int64_t> fullShape;
  TensorShard shard;
  std::vector<float> values;
};

struct RunResult {
  std::vector<double> losses;
  std::vector<double> gradNorms;
  std::vector<std::pair<std::string, std::vector<float>>> params;
  double lrSum = 0.0;  // Σ of the learning rates of the steps run (set on references)
  std::vector<std::vector<GradientSlice>> grads;  // per step, where recorded
};

inline constexpr double kLossRelTolerance = 1e-5;  // docs/design.md
inline constexpr double kOffElementLr = 1e-3;
inline constexpr double kOffFraction = 1e-2;
inline constexpr double kBulkRmsLr = 1e-4;
inline constexpr double kGradRelTolerance = 1e-4;
inline constexpr double kLaterGradRelTolerance = 1e-2;
inline constexpr double kGradFloor = 1e-4;

struct Agreement {
  double lossRel = 0.0;       // max over steps of |loss − ref| / |ref| (+inf when NaN)
  double normRel = 0.0;       // the same for the gradient norm
  double gradRel = 0.0;       // step 0: max over tensors of |g − ref| / max(|ref|, floor)
  double laterGradRel = 0.0;  // the same over the later steps
  double paramAbs = 0.0;      // max |param − ref| over every element (reported only)
  double offElements = 0;     // elements off by more than kOffElementLr · Σ lr
  double bulkSquares = 0;     // Σ (param − ref)² over the elements not off
  double elements = 0;        // elements compared
  double broken = 0;          // non-finite values and missing or misnamed parameters
  double lrSum = 0.0;

  double offFraction() const { return elements > 0 ? offElements / elements : 0.0; }
  double bulkRms() const {
    const double bulk = elements - offElements;
    return bulk > 0 ? std::sqrt(bulkSquares / bulk) : 0.0;
  }
};

// max() that keeps a NaN: a NaN becomes +inf, which every later max keeps
// and every bound refuses (std::max(acc, NaN) would return acc).
inline double worse(double acc, double x) {
  return std::isnan(x) ? std::numeric_limits<double>::infinity() : std::max(acc, x);
}

inline double relativeError(double got, double ref) {
  return std::fabs(got - ref) / std::fabs(ref);  // NaN when either is NaN
}

inline void compareSeries(const std::vector<double>& got, const std::vector<double>& ref,
                          double& worst, double& broken) {
  if (got.size() != ref.size()) ++broken;
  for (size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(ref[i])) ++broken;
    worst = worse(worst, relativeError(got[i], ref[i]));
  }
}

// Per step, each gradient slice `got` recorded against the same slice of
// the reference's full tensor.
inline void compareGradients(const RunResult& got, const RunResult& ref, Agreement& a) {
  if (got.grads.empty()) return;  // not recorded: sharded gradients
  if (got.grads.size() != ref.grads.size()) ++a.broken;
  for (size_t s = 0; s < std::min(got.grads.size(), ref.grads.size()); ++s) {
    double squares = 0.0;
    for (const GradientSlice& r : ref.grads[s]) {
      for (float x : r.values) squares += static_cast<double>(x) * x;
    }
    const double floor = kGradFloor * std::sqrt(squares);
    for (const GradientSlice& g : got.grads[s]) {
      const auto r = std::find_if(ref.grads[s].begin(), ref.grads[s].end(),
                                  [&](const GradientSlice& x) { return x.name == g.name; });
      if (r == ref.grads[s].end() || r->fullShape != g.fullShape) {
        ++a.broken;
        continue;
      }
      std::vector<float> want = r->values;  // replicated: all of it
      if (g.shard.sharded()) {
        want.resize(g.values.size());
        copyShardFromFull(r->values.data(), r->fullShape, g.shard, want.data());
      }
      if (want.size() != g.values.size()) {
        ++a.broken;
        continue;
      }
      double diff = 0.0, norm = 0.0;
      for (size_t k = 0; k < want.size(); ++k) {
        const double d = static_cast<double>(g.values[k]) - want[k];
        diff += d * d;
        norm += static_cast<double>(want[k]) * want[k];
      }
      double& worst = s == 0 ? a.gradRel : a.laterGradRel;
      worst = worse(worst, std::sqrt(diff) / std::max(std::sqrt(norm), floor));
    }
  }
}

// This rank's agreement; `ref` holds the same parameters in the same order
// (and ref.lrSum > 0).
inline Agreement compare(const RunResult& got, const RunResult& ref) {
  Agreement a;
  a.lrSum = ref.lrSum;
  compareSeries(got.losses, ref.losses, a.lossRel, a.broken);
  compareSeries(got.gradNorms, ref.gradNorms, a.normRel, a.broken);
  compareGradients(got, ref, a);
  if (got.params.size() != ref.params.size()) ++a.broken;
  const double offBound = kOffElementLr * ref.lrSum;
  for (size_t i = 0; i < std::min(got.params.size(), ref.params.size()); ++i) {
    const auto& g = got.params[i].second;
    const auto& f = ref.params[i].second;
    if (got.params[i].first != ref.params[i].first || g.size() != f.size()) ++a.broken;
    for (size_t k = 0; k < std::min(g.size(), f.size()); ++k) {
      const double err = std::fabs(static_cast<double>(g[k]) - f[k]);
      a.elements += 1;
      a.paramAbs = worse(a.paramAbs, err);
      if (!std::isfinite(err)) {
        a.broken += 1;
        a.offElements += 1;
      } else if (err > offBound) {
        a.offElements += 1;
      } else {
        a.bulkSquares += err * err;
      }
    }
  }
  return a;
}

// The worst over every rank of MPI_COMM_WORLD (maxima of the errors, sums of
// the counts), printed once by rank 0. NaNs are already +inf (MPI_MAX may
// drop a NaN).
inline Agreement worstOverRanks(const Agreement& a, const std::string& what) {
  double maxima[5] = {a.lossRel, a.normRel, a.paramAbs, a.gradRel, a.laterGradRel}, worst[5] = {};
  double counts[4] = {a.offElements, a.bulkSquares, a.elements, a.broken}, total[4] = {};
  MPI_Allreduce(maxima, worst, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(counts, total, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  Agreement w{worst[0], worst[1], worst[3], worst[4], worst[2],
              total[0], total[1], total[2], total[3], a.lrSum};
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf(
        "[ agreement ] %-36s loss %.1e | norm %.1e | grads %.1e, %.1e | off %.0f/%.0f | bulk rms "
        "%.1e lr "
        "| max %.1e "
        "lr | broken %.0f\n",
        what.c_str(), w.lossRel, w.normRel, w.gradRel, w.laterGradRel, w.offElements, w.elements,
        w.bulkRms() / w.lrSum, w.paramAbs / w.lrSum, w.broken);
  }
  return w;
}

// Every part of the criterion `a` fails, one line each (empty: agreement).
inline std::vector<std::string> disagreements(const Agreement& a) {
  std::vector<std::string> out;
  auto check = [&](bool ok, const std::string& line) {
    if (!ok) out.push_back(line);
  };
  check(a.lossRel <= kLossRelTolerance, "loss off by " + std::to_string(a.lossRel) + " relative");
  check(a.normRel <= kLossRelTolerance,
        "gradient norm off by " + std::to_string(a.normRel) + " relative");
  check(a.gradRel <= kGradRelTolerance,
        "a gradient tensor of step 0 off by " + std::to_string(a.gradRel) + " of its norm");
  check(a.laterGradRel <= kLaterGradRelTolerance,
        "a gradient tensor off by " + std::to_string(a.laterGradRel) + " of its norm");
  check(a.broken == 0, std::to_string(a.broken) + " non-finite or missing values");
  check(a.lrSum > 0 && std::isfinite(a.lrSum), "no learning-rate sum on the reference");
  check(a.offFraction() <= kOffFraction,
        std::to_string(a.offElements) + " of " + std::to_string(a.elements) +
            " elements off by more than " + std::to_string(kOffElementLr) + " x sum lr");
  check(a.bulkRms() <= kBulkRmsLr * a.lrSum,
        "bulk rms error " + std::to_string(a.bulkRms() / a.lrSum) + " x sum lr");
  return out;
}

// Fails the test (one failure per violated part) unless `got` agrees with
// `ref` on every rank.
inline void expectAgreement(const RunResult& got, const RunResult& ref, const std::string& what) {
  for (const std::string& line : disagreements(worstOverRanks(compare(got, ref), what))) {
    ADD_FAILURE() << what << ": " << line;
  }
}

}  // namespace bubblescope::engine::testing
