#include "engine/moe_layer.h"

#include <algorithm>
#include <cmath>

namespace bubblescope::engine {
namespace {
constexpr double kInitStd = 0.02;  // GPT-2's initialiser, as the dense layers
}  // namespace

template <class S>
MoeFeedForwardT<S>::MoeFeedForwardT(const layout::ModelConfig& config, const std::string& prefix,
                                    double projStd, Allocator* allocator, LayerOpsT<S> ops)
    : config_(config),
      ops_(ops),
      router_(prefix + ".moe.router.weight", {config.experts, config.hidden}, InitKind::kNormal,
              kInitStd, true, allocator) {
  const int64_t c = config.hidden, f = config.mlpHidden();
  for (int32_t e = 0; e < config.experts; ++e) {
    const std::string name = prefix + ".moe.experts." + std::to_string(e) + ".";
    experts_.push_back(
        {ParameterT<S>(name + "fc.weight", {f, c}, InitKind::kNormal, kInitStd, true, allocator),
         ParameterT<S>(name + "fc.bias", {f}, InitKind::kZeros, 0, false, allocator),
         ParameterT<S>(name + "proj.weight", {c, f}, InitKind::kNormal, projStd, true, allocator),
         ParameterT<S>(name + "proj.bias", {c}, InitKind::kZeros, 0, false, allocator)});
  }
}

template <class S>
std::vector<ParameterT<S>*> MoeFeedForwardT<S>::parameters() {
  std::vector<ParameterT<S>*> all{&router_};
  for (auto& e : experts_) {
    for (auto* p : {&e.fcWeight, &e.fcBias, &e.projWeight, &e.projBias}) all.push_back(p);
  }
  return all;
}

template <class S>
MoeActivationsT<S> MoeFeedForwardT<S>::newActivations(int64_t n, Allocator* al) const {
  const int64_t e = config_.experts, c = config_.hidden, f = config_.mlpHidden();
  const int64_t cap = config_.expertCapacity(n), k = config_.topK;
  auto make = [al](Shape shape) {
    return TensorT<S>(std::move(shape), MemoryCategory::kActivations, al);
  };
  MoeActivationsT<S> a;
  a.tokens = n;
  a.capacity = cap;
  a.probs = make({n, e});
  a.input = make({e * cap, c});
  a.hidden = make({e * cap, f});
  a.act = make({e * cap, f});
  a.output = make({e * cap, c});
  a.expert.assign(static_cast<size_t>(n * k), 0);
  a.row.assign(static_cast<size_t>(n * k), -1);
  a.gate.assign(static_cast<size_t>(n * k), S(0));
  return a;
}

template <class S>
MoeGradKeepT<S> MoeFeedForwardT<S>::newGradKeep(int64_t n, Allocator* al) const {
  const int64_t e = config_.experts, c = config_.hidden, f = config_.mlpHidden();
  const int64_t cap = config_.expertCapacity(n);
  auto make = [al](Shape shape) {
    return TensorT<S>(std::move(shape), MemoryCategory::kActivations, al);
  };
  return {make({n, e}), make({e * cap, c}), make({e * cap, f}), make({e * cap, f}),
          make({e * cap, c})};
}

template <class S>
void MoeFeedForwardT<S>::route(MoeActivationsT<S>& a) const {
  const int64_t n = a.tokens, e = config_.experts, k = config_.topK, cap = a.capacity;
  const S* probs = a.probs.data();
  a.routed.assign(static_cast<size_t>(e), 0);
  a.dropped.assign(static_cast<size_t>(e), 0);
  a.firstChoice.assign(static_cast<size_t>(e), 0);
  for (int64_t i = 0; i < n; ++i) {
    const S* p = probs + i * e;
    // The k largest probabilities; ties go to the lower expert index.
    int32_t best = 0;
    for (int32_t x = 1; x < e; ++x) best = p[x] > p[best] ? x : best;
    a.expert[i * k] = best;
    ++a.firstChoice[best];
    if (k == 1) {
      a.gate[i * k] = p[best];  // Switch: the router probability itself
      continue;
    }
    int32_t second = best == 0 ? 1 : 0;
    for (int32_t x = 0; x < e; ++x) second = x != best && p[x] > p[second] ? x : second;
    a.expert[i * k + 1] = second;
    // GShard: the two probabilities renormalised to sum to 1.
    const double sum = static_cast<double>(p[best]) + p[second];
    a.gate[i * k] = static_cast<S>(p[best] / sum);
    a.gate[i * k + 1] = static_cast<S>(p[second] / sum);
  }
  // Capacity: first choices of all tokens in token order, then second
  // choices in token order; an assignment past an expert's cap rows drops.
  std::vector<int64_t> kept(static_cast<size_t>(e), 0);
  for (int64_t j = 0; j < k; ++j) {
    for (int64_t i = 0; i < n; ++i) {
      const int32_t x = a.expert[i * k + j];
      ++a.routed[x];
      if (kept[x] < cap) {
        a.row[i * k + j] = x * cap + kept[x]++;
      } else {
        a.row[i * k + j] = -1;
        ++a.dropped[x];
      }
    }
  }
}

template <class S>
void MoeFeedForwardT<S>::forward(S* y, const S* x, MoeActivationsT<S>& a) const {
  const int64_t n = a.tokens, e = config_.experts, k = config_.topK, cap = a.capacity;
  const int64_t c = config_.hidden, f = config_.mlpHidden();
  // Router in fp32 (never lower): logits (N, E), softmax over E per token
  // (max subtracted, the sum accumulated in double).
  S* probs = a.probs.data();
  ops_.linearForward(probs, x, router_.value.data(), nullptr, n, c, e);
  for (int64_t i = 0; i < n; ++i) {
    S* p = probs + i * e;
    const S top = *std::max_element(p, p + e);
    double sum = 0.0;
    for (int64_t j = 0; j < e; ++j) sum += std::exp(static_cast<double>(p[j] - top));
    for (int64_t j = 0; j < e; ++j)
      p[j] = static_cast<S>(std::exp(static_cast<double>(p[j] - top)) / sum);
  }
  route(a);
  // Dispatch: each kept assignment's token row into its expert's rows.
  for (int64_t i = 0; i < n * k; ++i) {
    if (a.row[i] >= 0)
      std::copy(x + (i / k) * c, x + (i / k + 1) * c, a.input.data() + a.row[i] * c);
  }
  for (int64_t xe = 0; xe < e; ++xe) {
    const int64_t rows = a.routed[xe] - a.dropped[xe], off = xe * cap;
    if (rows == 0) continue;
    const Expert& ex = experts_[xe];
    ops_.linearForward(a.hidden.data() + off * f, a.input.data() + off * c,
                       ex.fcWeight.value.data(), ex.fcBias.value.data(), rows, c, f);
    ops_.geluForward(a.act.data() + off * f, a.hidden.data() + off * f, rows * f);
    ops_.linearForward(a.output.data() + off * c, a.act.data() + off * f,
                       ex.projWeight.value.data(), ex.projBias.value.data(), rows, f, c);
  }
  // Combine: y_i = Σ_j gate_ij · out(row_ij), in choice order; dropped: 0.
  std::fill(y, y + n * c, S(0));
  for (int64_t i = 0; i < n * k; ++i) {
    if (a.row[i] < 0) continue;
    const S g = a.gate[i];
    const S* o = a.output.data() + a.row[i] * c;
    S* yi = y + (i / k) * c;
    for (int64_t d = 0; d < c; ++d) yi[d] += g * o[d];
  }
  // Load balancing (Switch eq. 4): aux = E · Σ_e f_e · P_e, f_e the share of
  // tokens whose first choice is e, P_e the mean router probability of e.
  double aux = 0.0;
  for (int64_t xe = 0; xe < e; ++xe) {
    double meanProb = 0.0;
    for (int64_t i = 0; i < n; ++i) meanProb += static_cast<double>(probs[i * e + xe]);
    aux += static_cast<double>(a.firstChoice[xe]) / n * (meanProb / n);
  }
  a.auxLoss = static_cast<double>(e) * aux;
}

template <class S>
void MoeFeedForwardT<S>::backwardInput(S* dx, const S* dy, const MoeActivationsT<S>& a,
                                       MoeGradKeepT<S>& g, double lossScale) const {
  const int64_t n = a.tokens, e = config_.experts, k = config_.topK, cap = a.capacity;
  const int64_t c = config_.hidden, f = config_.mlpHidden();
  const S* probs = a.probs.data();
  S* dLogits = g.dLogits.data();  // first the gradient of the probabilities
  std::fill(dLogits, dLogits + n * e, S(0));
  std::vector<S> dGate(static_cast<size_t>(n * k), S(0));
  // Combine backward: d out(row) = gate · dy_i; d gate = dy_i · out(row).
  for (int64_t i = 0; i < n * k; ++i) {
    if (a.row[i] < 0) continue;
    const S* dyi = dy + (i / k) * c;
    const S* o = a.output.data() + a.row[i] * c;
    S* dOut = g.dOutput.data() + a.row[i] * c;
    S dot = 0;
    for (int64_t d = 0; d < c; ++d) {
      dOut[d] = a.gate[i] * dyi[d];
      dot += dyi[d] * o[d];
    }
    dGate[i] = dot;
  }
  // Gates to probabilities: top-1 g = p_e; top-2 g_j = p_j / (p_1 + p_2).
  const S auxScale = static_cast<S>(lossScale * config_.auxLossCoef * e / n);
  for (int64_t i = 0; i < n; ++i) {
    S* dp = dLogits + i * e;
    const S* p = probs + i * e;
    const int32_t e1 = a.expert[i * k];
    if (k == 1) {
      dp[e1] += dGate[i];
    } else {
      const int32_t e2 = a.expert[i * k + 1];
      const S s = p[e1] + p[e2], d = dGate[i * k] - dGate[i * k + 1];
      dp[e1] += d * p[e2] / (s * s);
      dp[e2] -= d * p[e1] / (s * s);
    }
    // Aux loss: ∂(E · Σ f_e · P_e)/∂p_ie = E · f_e / N (f_e counts, no gradient).
    for (int64_t xe = 0; xe < e; ++xe) {
      dp[xe] += auxScale * static_cast<S>(a.firstChoice[xe]) / static_cast<S>(n);
    }
    // Softmax backward: dz_e = p_e · (dp_e − Σ_j p_j dp_j).
    double dot = 0.0;
    for (int64_t xe = 0; xe < e; ++xe) dot += static_cast<double>(p[xe]) * dp[xe];
    for (int64_t xe = 0; xe < e; ++xe) dp[xe] = p[xe] * (dp[xe] - static_cast<S>(dot));
  }
  ops_.linearBackwardInput(dx, dLogits, router_.value.data(), n, c, e);
  // Experts backward (input half), then scatter their input gradients back.
  for (int64_t xe = 0; xe < e; ++xe) {
    const int64_t rows = a.routed[xe] - a.dropped[xe], off = xe * cap;
    if (rows == 0) continue;
    const Expert& ex = experts_[xe];
    ops_.zero(g.dAct.data() + off * f, rows * f);
    ops_.linearBackwardInput(g.dAct.data() + off * f, g.dOutput.data() + off * c,
                             ex.projWeight.value.data(), rows, f, c);
    ops_.zero(g.dHidden.data() + off * f, rows * f);
    ops_.geluBackward(g.dHidden.data() + off * f, a.hidden.data() + off * f,
                      g.dAct.data() + off * f, rows * f);
    ops_.zero(g.dInput.data() + off * c, rows * c);
    ops_.linearBackwardInput(g.dInput.data() + off * c, g.dHidden.data() + off * f,
                             ex.fcWeight.value.data(), rows, c, f);
  }
  for (int64_t i = 0; i < n * k; ++i) {
    if (a.row[i] >= 0) ops_.axpy(dx + (i / k) * c, S(1), g.dInput.data() + a.row[i] * c, c);
  }
}

template <class S>
void MoeFeedForwardT<S>::backwardWeight(const S* x, const MoeActivationsT<S>& a,
                                        const MoeGradKeepT<S>& g) {
  const int64_t n = a.tokens, e = config_.experts, cap = a.capacity;
  const int64_t c = config_.hidden, f = config_.mlpHidden();
  for (int64_t xe = 0; xe < e; ++xe) {
    const int64_t rows = a.routed[xe] - a.dropped[xe], off = xe * cap;
    if (rows == 0) continue;
    Expert& ex = experts_[xe];
    ops_.linearBackwardWeight(ex.projWeight.grad.data(), ex.projBias.grad.data(),
                              g.dOutput.data() + off * c, a.act.data() + off * f, rows, f, c);
    ops_.linearBackwardWeight(ex.fcWeight.grad.data(), ex.fcBias.grad.data(),
                              g.dHidden.data() + off * f, a.input.data() + off * c, rows, c, f);
  }
  ops_.linearBackwardWeight(router_.grad.data(), nullptr, g.dLogits.data(), x, n, c, e);
}

template <class S>
int64_t MoeFeedForwardT<S>::forwardFlops(int64_t n, int64_t rows) const {
  const int64_t c = config_.hidden, f = config_.mlpHidden();
  return 2 * n * c * config_.experts + 4 * rows * c * f;
}

template class MoeFeedForwardT<float>;
template class MoeFeedForwardT<double>;

}  // namespace bubblescope::engine
