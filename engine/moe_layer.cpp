#include "engine/moe_layer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace bubblescope::engine {
namespace {
constexpr double kInitStd = 0.02;  // GPT-2's initialiser, as the dense layers
const TraceContext kUntraced{};    // the all-to-alls' context without segments (ep 1: none run)

// A host view of `n` values of the layer's memory, for the loops the CPU
// runs: the memory itself on the host (bit for bit the in-place loops); on a
// device a host copy, downloaded when `read` (a synchronisation point), and
// uploaded whole by commit().
template <class S>
class HostView {
 public:
  static Result<HostView> of(const LayerOpsT<S>& ops, S* p, int64_t n, bool read) {
    HostView v(ops, p, n);
    if (ops.hostMemory()) return v;
    v.copy_.assign(static_cast<size_t>(n), S(0));
    if (read) BS_RETURN_IF_ERROR(ops.download(v.copy_.data(), p, n));
    v.host_ = v.copy_.data();
    return v;
  }
  S* data() { return host_; }
  void commit() {
    if (host_ != mem_) ops_->upload(mem_, host_, n_);
  }
  // The host copy (a device's), for keeping; empty on the host.
  std::vector<S> take() { return std::move(copy_); }

 private:
  HostView(const LayerOpsT<S>& ops, S* p, int64_t n) : ops_(&ops), mem_(p), host_(p), n_(n) {}
  const LayerOpsT<S>* ops_;
  S* mem_;
  S* host_;
  int64_t n_;
  std::vector<S> copy_;
};

}  // namespace

template <class S>
MoeFeedForwardT<S>::MoeFeedForwardT(const layout::ModelConfig& config, const std::string& prefix,
                                    double projStd, Allocator* allocator, LayerOpsT<S> ops,
                                    ExpertParallelGroup* ep)
    : config_(config),
      ops_(ops),
      ep_(ep != nullptr && ep->size() > 1 ? ep : nullptr),
      localExperts_(config.experts / (ep_ ? ep_->size() : 1)),
      firstExpert_(ep_ ? ep_->rank() * localExperts_ : 0),
      router_(prefix + ".moe.router.weight", {config.experts, config.hidden}, InitKind::kNormal,
              kInitStd, true, allocator) {
  const int64_t c = config.hidden, f = config.mlpHidden();
  for (int32_t e = firstExpert_; e < firstExpert_ + localExperts_; ++e) {
    const std::string name = prefix + ".moe.experts." + std::to_string(e) + ".";
    experts_.push_back(
        {ParameterT<S>(name + "fc.weight", {f, c}, InitKind::kNormal, kInitStd, true, allocator),
         ParameterT<S>(name + "fc.bias", {f}, InitKind::kZeros, 0, false, allocator),
         ParameterT<S>(name + "proj.weight", {c, f}, InitKind::kNormal, projStd, true, allocator),
         ParameterT<S>(name + "proj.bias", {c}, InitKind::kZeros, 0, false, allocator)});
    for (auto* p : {&experts_.back().fcWeight, &experts_.back().fcBias, &experts_.back().projWeight,
                    &experts_.back().projBias}) {
      p->expert = true;
    }
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
  if (ep_) {
    a.expertInput = make({e * cap, c});
    a.expertOutput = make({e * cap, c});
  }
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
  MoeGradKeepT<S> g{make({n, e}), make({e * cap, c}), make({e * cap, f}), make({e * cap, f}),
                    make({e * cap, c})};
  if (ep_) {
    g.dCombined = make({e * cap, c});
    g.dDispatched = make({e * cap, c});
  }
  return g;
}

template <class S>
int64_t MoeFeedForwardT<S>::expertOffset(const MoeActivationsT<S>& a, int64_t l) const {
  return l * epSize() * a.capacity;
}

template <class S>
int64_t MoeFeedForwardT<S>::expertRows(const MoeActivationsT<S>& a, int64_t l) const {
  int64_t rows = 0;
  for (int32_t s = 0; s < epSize(); ++s) rows += a.fromRank[s * localExperts_ + l];
  return rows;
}

template <class S>
int64_t MoeFeedForwardT<S>::expertRowsTotal(const MoeActivationsT<S>& a) const {
  int64_t rows = 0;
  for (int64_t l = 0; l < localExperts_; ++l) rows += expertRows(a, l);
  return rows;
}

template <class S>
Status MoeFeedForwardT<S>::exchangeCounts(MoeActivationsT<S>& a, const TraceContext& where) const {
  const int32_t p = epSize(), el = localExperts_;
  a.fromRank.assign(static_cast<size_t>(p * el), 0);
  if (!ep_) {
    for (int32_t l = 0; l < el; ++l) a.fromRank[l] = a.routed[l] - a.dropped[l];
    return Status::ok();
  }
  // Counts travel as floats: exact below 2^24 rows (cap rows per expert).
  std::vector<float> send(static_cast<size_t>(config_.experts)), recv(send.size());
  for (int32_t x = 0; x < config_.experts; ++x) {
    send[x] = static_cast<float>(a.routed[x] - a.dropped[x]);
  }
  const std::vector<int> counts(static_cast<size_t>(p), el);
  BS_RETURN_IF_ERROR(ep_->allToAll(send, recv, counts, counts, "moe_counts", where));
  for (size_t i = 0; i < recv.size(); ++i) a.fromRank[i] = static_cast<int64_t>(recv[i]);
  return Status::ok();
}

template <class S>
Status MoeFeedForwardT<S>::exchange(const S* from, S* to, int64_t width, bool toExperts,
                                    const MoeActivationsT<S>& a, const char* name,
                                    const TraceContext& where) const {
  if (!ep_) return Status::ok();  // one layout: `from` is `to`
  if constexpr (!std::is_same_v<S, float>) {
    return Status::unsupported("expert parallelism runs in float only");
  } else {
    const int32_t p = epSize(), el = localExperts_;
    const int64_t cap = a.capacity;
    // The local rows for rank r: its experts' kept rows, expert by expert.
    // The expert rows from rank s: each local expert's part from s.
    std::vector<int> localCounts(p, 0), expertCounts(p, 0);
    for (int32_t r = 0; r < p; ++r) {
      for (int32_t l = 0; l < el; ++l) {
        const int32_t x = r * el + l;
        localCounts[r] += static_cast<int>((a.routed[x] - a.dropped[x]) * width);
        expertCounts[r] += static_cast<int>(a.fromRank[r * el + l] * width);
      }
    }
    // Visits every exchanged block of rows in the packed order of the local
    // (rank r, expert r·El + l) or expert (rank s, local expert l) side.
    auto forEachBlock = [&](bool local, auto&& visit) {
      for (int32_t r = 0; r < p; ++r) {
        for (int32_t l = 0; l < el; ++l) {
          if (local) {
            const int32_t x = r * el + l;
            visit(x * cap, a.routed[x] - a.dropped[x]);
          } else {
            int64_t before = 0;
            for (int32_t s = 0; s < r; ++s) before += a.fromRank[s * el + l];
            visit(expertOffset(a, l) + before, a.fromRank[r * el + l]);
          }
        }
      }
    };
    // Rows move between the layer's memory and the host buffers the group
    // exchanges through the ops (in place on the host, staged on a device).
    Status copied = Status::ok();
    auto pack = [&](bool local, const S* rows, std::vector<float>& out) {
      forEachBlock(local, [&](int64_t row, int64_t n) {
        const size_t at = out.size();
        out.resize(at + static_cast<size_t>(n * width));
        if (copied.isOk() && n > 0)
          copied = ops_.download(out.data() + at, rows + row * width, n * width);
      });
    };
    auto unpack = [&](bool local, const std::vector<float>& in, S* rows) {
      size_t at = 0;
      forEachBlock(local, [&](int64_t row, int64_t n) {
        if (n > 0) ops_.upload(rows + row * width, in.data() + at, n * width);
        at += static_cast<size_t>(n * width);
      });
    };
    std::vector<float> send, recv;
    pack(toExperts, from, send);
    BS_RETURN_IF_ERROR(copied);
    recv.resize(std::accumulate(toExperts ? expertCounts.begin() : localCounts.begin(),
                                toExperts ? expertCounts.end() : localCounts.end(), size_t{0}));
    BS_RETURN_IF_ERROR(ep_->allToAll(send, recv, toExperts ? localCounts : expertCounts,
                                     toExperts ? expertCounts : localCounts, name, where));
    unpack(!toExperts, recv, to);
    return Status::ok();
  }
}

template <class S>
void MoeFeedForwardT<S>::route(MoeActivationsT<S>& a, const S* probs) const {
  const int64_t n = a.tokens, e = config_.experts, k = config_.topK, cap = a.capacity;
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
Status MoeFeedForwardT<S>::forward(S* y, const S* x, MoeActivationsT<S>& a,
                                   ComputeSegments* segments) const {
  if (ep_ && segments == nullptr) {
    return Status::invalidArgument("an expert-parallel MoE forward needs its trace segments");
  }
  const TraceContext& where = segments ? segments->trace() : kUntraced;
  const int64_t n = a.tokens, e = config_.experts, k = config_.topK;
  const int64_t c = config_.hidden, f = config_.mlpHidden();
  // Router in fp32 (never lower): logits (N, E), softmax over E per token
  // (max subtracted, the sum accumulated in double).
  if (ep_) segments->begin(2 * n * c * e);
  ops_.linearForward(a.probs.data(), x, router_.value.data(), nullptr, n, c, e);
  BS_ASSIGN_OR_RETURN(HostView<S> probsView, HostView<S>::of(ops_, a.probs.data(), n * e, true));
  S* probs = probsView.data();
  for (int64_t i = 0; i < n; ++i) {
    S* p = probs + i * e;
    const S top = *std::max_element(p, p + e);
    double sum = 0.0;
    for (int64_t j = 0; j < e; ++j) sum += std::exp(static_cast<double>(p[j] - top));
    for (int64_t j = 0; j < e; ++j)
      p[j] = static_cast<S>(std::exp(static_cast<double>(p[j] - top)) / sum);
  }
  probsView.commit();
  route(a, probs);
  // Dispatch: each kept assignment's token row into its expert's rows.
  for (int64_t i = 0; i < n * k; ++i) {
    if (a.row[i] >= 0) ops_.copy(a.input.data() + a.row[i] * c, x + (i / k) * c, c);
  }
  if (ep_) segments->end();
  BS_RETURN_IF_ERROR(exchangeCounts(a, where));
  S* expertIn = ep_ ? a.expertInput.data() : a.input.data();
  S* expertOut = ep_ ? a.expertOutput.data() : a.output.data();
  BS_RETURN_IF_ERROR(exchange(a.input.data(), expertIn, c, true, a, "moe_dispatch", where));
  if (ep_) segments->begin(4 * expertRowsTotal(a) * c * f);
  for (int64_t l = 0; l < localExperts_; ++l) {
    const int64_t rows = expertRows(a, l), off = expertOffset(a, l);
    if (rows == 0) continue;
    const Expert& ex = experts_[l];
    ops_.linearForward(a.hidden.data() + off * f, expertIn + off * c, ex.fcWeight.value.data(),
                       ex.fcBias.value.data(), rows, c, f);
    ops_.geluForward(a.act.data() + off * f, a.hidden.data() + off * f, rows * f);
    ops_.linearForward(expertOut + off * c, a.act.data() + off * f, ex.projWeight.value.data(),
                       ex.projBias.value.data(), rows, f, c);
  }
  if (ep_) segments->end();
  BS_RETURN_IF_ERROR(exchange(expertOut, a.output.data(), c, false, a, "moe_combine", where));
  if (ep_) segments->begin(0);
  // Combine: y_i = Σ_j gate_ij · out(row_ij), in choice order; dropped: 0.
  ops_.zero(y, n * c);
  for (int64_t i = 0; i < n * k; ++i) {
    if (a.row[i] >= 0) ops_.axpy(y + (i / k) * c, a.gate[i], a.output.data() + a.row[i] * c, c);
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
  a.probsHost = probsView.take();  // a device's host copy, for the backward
  return Status::ok();
}

template <class S>
Status MoeFeedForwardT<S>::backwardInput(S* dx, const S* dy, const MoeActivationsT<S>& a,
                                         MoeGradKeepT<S>& g, double lossScale,
                                         ComputeSegments* segments) const {
  if (ep_ && segments == nullptr) {
    return Status::invalidArgument("an expert-parallel MoE backward needs its trace segments");
  }
  const TraceContext& where = segments ? segments->trace() : kUntraced;
  const int64_t n = a.tokens, e = config_.experts, k = config_.topK;
  const int64_t c = config_.hidden, f = config_.mlpHidden();
  if (ep_) segments->begin(2 * n * c * e);
  const S* probs = ops_.hostMemory() ? a.probs.data() : a.probsHost.data();
  S* dCombinedMem = ep_ ? g.dCombined.data() : g.dOutput.data();
  S* dDispatched = ep_ ? g.dDispatched.data() : g.dInput.data();
  const int64_t rows = config_.experts * a.capacity;
  // The loops below run on the host: views of what they read and write.
  BS_ASSIGN_OR_RETURN(HostView<S> dLogitsView,
                      HostView<S>::of(ops_, g.dLogits.data(), n * e, false));
  BS_ASSIGN_OR_RETURN(HostView<S> dCombinedView,
                      HostView<S>::of(ops_, dCombinedMem, rows * c, true));
  BS_ASSIGN_OR_RETURN(HostView<S> dyView, HostView<S>::of(ops_, const_cast<S*>(dy), n * c, true));
  BS_ASSIGN_OR_RETURN(HostView<S> outputView,
                      HostView<S>::of(ops_, const_cast<S*>(a.output.data()), rows * c, true));
  S* dLogits = dLogitsView.data();  // first the gradient of the probabilities
  S* dCombined = dCombinedView.data();
  const S* dyHost = dyView.data();
  const S* output = outputView.data();
  std::fill(dLogits, dLogits + n * e, S(0));
  std::vector<S> dGate(static_cast<size_t>(n * k), S(0));
  // Combine backward: d out(row) = gate · dy_i; d gate = dy_i · out(row).
  for (int64_t i = 0; i < n * k; ++i) {
    if (a.row[i] < 0) continue;
    const S* dyi = dyHost + (i / k) * c;
    const S* o = output + a.row[i] * c;
    S* dOut = dCombined + a.row[i] * c;
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
  dLogitsView.commit();
  dCombinedView.commit();
  ops_.linearBackwardInput(dx, g.dLogits.data(), router_.value.data(), n, c, e);
  if (ep_) segments->end();
  BS_RETURN_IF_ERROR(
      exchange(dCombinedMem, g.dOutput.data(), c, true, a, "moe_dispatch_grad", where));
  if (ep_) segments->begin(4 * expertRowsTotal(a) * c * f);
  // Experts backward (input half), then scatter their input gradients back.
  for (int64_t l = 0; l < localExperts_; ++l) {
    const int64_t rows = expertRows(a, l), off = expertOffset(a, l);
    if (rows == 0) continue;
    const Expert& ex = experts_[l];
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
  if (ep_) segments->end();
  BS_RETURN_IF_ERROR(
      exchange(g.dInput.data(), dDispatched, c, false, a, "moe_combine_grad", where));
  if (ep_) segments->begin(0);
  for (int64_t i = 0; i < n * k; ++i) {
    if (a.row[i] >= 0) ops_.axpy(dx + (i / k) * c, S(1), dDispatched + a.row[i] * c, c);
  }
  return Status::ok();
}

template <class S>
void MoeFeedForwardT<S>::backwardWeight(const S* x, const MoeActivationsT<S>& a,
                                        const MoeGradKeepT<S>& g) {
  const int64_t n = a.tokens, e = config_.experts;
  const int64_t c = config_.hidden, f = config_.mlpHidden();
  const S* expertIn = ep_ ? a.expertInput.data() : a.input.data();
  for (int64_t l = 0; l < localExperts_; ++l) {
    const int64_t rows = expertRows(a, l), off = expertOffset(a, l);
    if (rows == 0) continue;
    Expert& ex = experts_[l];
    ops_.linearBackwardWeight(ex.projWeight.grad.data(), ex.projBias.grad.data(),
                              g.dOutput.data() + off * c, a.act.data() + off * f, rows, f, c);
    ops_.linearBackwardWeight(ex.fcWeight.grad.data(), ex.fcBias.grad.data(),
                              g.dHidden.data() + off * f, expertIn + off * c, rows, c, f);
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
