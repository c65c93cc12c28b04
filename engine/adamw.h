// AdamW (decoupled weight decay, Loshchilov & Hutter) and global gradient-norm
// clipping over a list of parameters.
//
// Contract: AdamW keeps one (m, v) pair per parameter, in the parameter's
// shape, counted as MemoryCategory::kOptimizerState; the parameters must
// outlive it. adamwUpdate() works on any slice, so a ZeRO rank can update the
// shard it owns with exactly the arithmetic of the unsharded optimizer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "engine/parameter.h"

namespace bubblescope::engine {

class Backend;  // engine/backend.h

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weightDecay = 0.1;  // applied to parameters with weightDecay set
  Status validate() const;
};

// One AdamW update of a slice at (1-based) step t with learning rate lr.
void adamwUpdate(std::span<float> param, std::span<const float> grad, std::span<float> m,
                 std::span<float> v, const AdamWConfig& config, double lr, int64_t t, bool decay);

class AdamW {
 public:
  struct State {
    Parameter* param;
    Tensor m;  // first moment, param's shape
    Tensor v;  // second moment, param's shape
  };

  AdamW(std::vector<Parameter*> params, const AdamWConfig& config, Allocator* allocator);

  // Applies one update with learning rate lr to every parameter.
  void step(double lr);
  // The same update through backend.adamwUpdate, per parameter (parameters,
  // gradients and state in the backend's memory; bit for bit step() on a
  // CpuBackend).
  void step(double lr, Backend& backend);
  int64_t stepCount() const { return t_; }  // updates applied so far
  void setStepCount(int64_t t) { t_ = t; }  // for checkpoint restore
  std::vector<State>& states() { return states_; }
  const AdamWConfig& config() const { return config_; }

 private:
  AdamWConfig config_;
  std::vector<State> states_;
  int64_t t_ = 0;
};

// Sum of squared gradient elements over params (double accumulation). The
// global norm of a sharded model is sqrt of the sum of every rank's value.
double gradSquaredSum(const std::vector<Parameter*>& params);
// Multiplies every gradient by factor.
void scaleGradients(const std::vector<Parameter*>& params, float factor);
// Clips the global L2 norm of the gradients to maxNorm (maxNorm <= 0: no
// clipping). Returns the norm before clipping.
double clipGradNorm(const std::vector<Parameter*>& params, double maxNorm);
// gradSquaredSum() and scaleGradients() on the backend's memory. A backend
// in host memory synchronises and runs the host functions (one running sum,
// bit for bit what clipGradNorm() computes); a device sums
// backend.squaredSum per parameter and scales with backend.scale. Errors are
// the backend's (squaredSum is a synchronisation point).
Result<double> gradSquaredSum(const std::vector<Parameter*>& params, Backend& backend);
void scaleGradients(const std::vector<Parameter*>& params, float factor, Backend& backend);

}  // namespace bubblescope::engine
