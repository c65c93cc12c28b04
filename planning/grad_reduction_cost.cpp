#include "planning/grad_reduction_cost.h"

#include <algorithm>
#include <cmath>

#include "planning/formulas.h"
#include "planning/link_class.h"

namespace bubblescope::layout {
namespace {

constexpr double kInt8BlockElements = 1024;  // engine/parallel/reduced_types.h
constexpr double kInt8BlockBytes = 1028;     // the codes and one fp32 scale
constexpr double kIndexBytes = 4;            // Top-K's int32 indices

bool isAllReduce(const std::string& collective) {
  return collective == "allreduce";
}

// Ring steps of a collective over p ranks: 2(p-1) for an all-reduce, p-1 for
// a reduce-scatter or all-gather.
double ringSteps(const std::string& collective, double p) {
  return (isAllReduce(collective) ? 2.0 : 1.0) * (p - 1);
}

// The nccl-tests bus factor (docs/formulas.md).
double busFactor(const std::string& collective, double p) {
  return p <= 1 ? 0.0 : ringSteps(collective, p) / p;
}

class CostBuilder {
 public:
  CostBuilder(const GradReductionInput& in, const Calibration& c) : in_(in), c_(c) {}

  GradReductionCost run() {
    const double p = in_.group;
    const double n = std::round(in_.elements);
    cost_.uncompressedBytes = busFactor("allreduce", p) * kBytesPerElement * n;
    if (p <= 1 || n <= 0) return std::move(cost_);
    const std::vector<double> sizes = bucketSizes(n);
    const double buckets = static_cast<double>(sizes.size());
    const int32_t nodes = in_.link.nodes(in_.group);
    if (in_.algorithm == AllReduceAlgorithm::kHierarchical && nodes > 1) {
      if (in_.compression.compresses()) {
        warn("a hierarchical all-reduce runs uncompressed: grad compression " +
             in_.compression.toString() + " is not costed");
      }
      hierarchical(n, buckets, nodes);
      return std::move(cost_);
    }
    if (in_.algorithm == AllReduceAlgorithm::kHierarchical) {
      warn("hierarchical all-reduce on one node: costed as flat");
    }
    double sum = 0;  // per bucket: int8 blocks, Top-K's k
    switch (in_.compression.kind) {
      case GradCompression::kNone:
        flat("allreduce", kBytesPerElement * n, buckets);
        break;
      case GradCompression::kFp16:
      case GradCompression::kBf16:
        flat("allreduce", 2.0 * n, buckets);
        break;
      case GradCompression::kInt8:
        for (double nb : sizes) sum += std::ceil(nb / kInt8BlockElements);
        flat("allreduce", kInt8BlockBytes * sum, buckets);
        break;
      case GradCompression::kTopK:
        for (double nb : sizes) sum += std::ceil(in_.compression.ratio * nb);
        flat("all_gather", kIndexBytes * sum * p, buckets);
        flat("all_gather", kBytesPerElement * sum * p, buckets);
        break;
      case GradCompression::kPowerSgd:
        powerSgd(n, buckets);
        break;
    }
    if (in_.compression.compresses()) codec(n);
    return std::move(cost_);
  }

 private:
  // The engine's buckets (flat_layout.h planBuckets): full ones cut from the
  // end of the buffer, the rest first.
  std::vector<double> bucketSizes(double n) const {
    const double cap =
        in_.bucketElements > 0 ? std::min(n, static_cast<double>(in_.bucketElements)) : n;
    const double full = std::floor(n / cap);
    std::vector<double> sizes(static_cast<size_t>(full), cap);
    if (n - full * cap > 0) sizes.push_back(n - full * cap);
    return sizes;
  }

  void warn(std::string w) {
    if (std::find(cost_.warnings.begin(), cost_.warnings.end(), w) == cost_.warnings.end()) {
      cost_.warnings.push_back(std::move(w));
    }
  }

  // `calls` ring collectives over `p` ranks whose buffers total `bytes`
  // (the span's bytes: the full buffer, gathered for an all-gather) on
  // `link` ("same_host" or "other_host"), from the calibration's fit.
  double fittedNs(const std::string& collective, double bytes, double calls, double p,
                  const std::string& link) {
    if (p <= 1) return 0.0;
    // With no fit of its own a reduce-scatter or all-gather is scaled from
    // the all-reduce's (a reduce-scatter then an all-gather: half of it at
    // the same group size).
    const LinkFit* f = c_.linkFit("dp", collective, link);
    if (f == nullptr && !isAllReduce(collective)) f = c_.linkFit("dp", "allreduce", link);
    if (f == nullptr) {
      warn("no " + collective + " time measured (dim dp): taken as 0");
      return 0.0;
    }
    if (f->link != link) {
      warn("no " + link + " " + collective + " fit in the calibration: costed as " + f->link);
    }
    const double fitP = std::max(2, f->groupSize);
    const std::string& fitted = f->collective;
    const double alpha = f->alphaNs * ringSteps(collective, p) / ringSteps(fitted, fitP);
    const double beta = f->betaNsPerByte * busFactor(collective, p) / busFactor(fitted, fitP);
    return calls * alpha + beta * bytes;
  }

  // What the emulated link adds to `calls` ring collectives over p ranks of
  // `bytes` in all when ring steps cross nodes: per step the latency and
  // the chunk's transmission (link_pacer.h).
  double pacedNs(const std::string& collective, double bytes, double calls, double p) {
    if (!in_.link.emulated() || p <= 1) return 0.0;
    const double steps = ringSteps(collective, p);
    const double chunkBytes = bytes / p;  // one of the p chunks a ring step sends
    const double transmitNs =
        in_.link.interNodeGbps > 0 ? chunkBytes * 8.0 / in_.link.interNodeGbps : 0.0;
    return steps * (transmitNs + calls * in_.link.interNodeLatencyUs * 1e3);
  }

  // The link inside a node: between ranks that time-share its cores when
  // they do (core_sharing.h).
  std::string inNodeLink() const { return in_.sharedCores ? kSharedCores : kSameHost; }

  // A flat ring over the whole group, its buffers `bytes` in all.
  void flat(const std::string& collective, double bytes, double calls) {
    const double p = in_.group;
    const bool crosses = in_.link.nodes(in_.group) > 1;
    const std::string link = crosses && !in_.link.emulated() ? "other_host" : inNodeLink();
    cost_.commNs += fittedNs(collective, bytes, calls, p, link);
    if (crosses) cost_.commNs += pacedNs(collective, bytes, calls, p);
    const double bus = busFactor(collective, p) * bytes;
    cost_.sentBytes += bus;
    if (crosses) cost_.interNodeBytes += bus;
  }

  void hierarchical(double n, double buckets, int32_t nodes) {
    const double k = static_cast<double>(in_.group) / nodes;
    const double bytes = kBytesPerElement * n;
    const std::string inter = in_.link.emulated() ? inNodeLink() : "other_host";
    cost_.commNs += fittedNs("reduce_scatter", bytes, buckets, k, inNodeLink());
    cost_.commNs += fittedNs("allreduce", bytes / k, buckets, nodes, inter);
    cost_.commNs += pacedNs("allreduce", bytes / k, buckets, nodes);
    cost_.commNs += fittedNs("all_gather", bytes, buckets, k, inNodeLink());
    const double interBus = busFactor("allreduce", nodes) * bytes / k;
    cost_.sentBytes += 2 * busFactor("all_gather", k) * bytes + interBus;
    cost_.interNodeBytes += interBus;
  }

  // The tensors lie in `in_.tensors` order in the flat buffer; a matrix is
  // factorised when the rule allows and no bucket boundary cuts it. The Q
  // all-reduce runs in the buckets that factorise something.
  void powerSgd(double n, double buckets) {
    const double r = in_.compression.rank;
    double total = 0;
    for (const MatrixShape& t : in_.tensors) total += static_cast<double>(t.rows * t.cols);
    const double cap = in_.bucketElements > 0 ? static_cast<double>(in_.bucketElements) : total;
    double p = 0, q = 0, factorised = 0, at = 0;
    std::vector<bool> bucketHasQ;
    for (const MatrixShape& t : in_.tensors) {
      const double rows = static_cast<double>(t.rows), cols = static_cast<double>(t.cols);
      const double lo = at, hi = at + rows * cols;
      at = hi;
      // Element i is in bucket floor((total - 1 - i) / cap).
      const double first = std::floor((total - 1 - lo) / cap),
                   last = std::floor((total - hi) / cap);
      if (first != last || r > std::min(rows, cols) || r * (rows + cols) >= rows * cols) continue;
      p += rows * r;
      q += cols * r;
      factorised += rows * cols;
      if (bucketHasQ.size() <= first) bucketHasQ.resize(static_cast<size_t>(first) + 1, false);
      bucketHasQ[static_cast<size_t>(first)] = true;
    }
    const double rest = std::max(0.0, n - factorised);
    flat("allreduce", kBytesPerElement * (p + rest), buckets);
    const double qCalls =
        static_cast<double>(std::count(bucketHasQ.begin(), bucketHasQ.end(), true));
    if (q > 0) flat("allreduce", kBytesPerElement * q, qCalls);
  }

  // Per element: the calibration's cost (part "grad_compression", op the
  // kind's name, micro-batch size the PowerSGD rank, else 0) or the
  // measured constants, interpolated the same way.
  void codec(double n) {
    const GradCompression kind = in_.compression.kind;
    const char* name = gradCompressionKindName(kind);
    const int32_t r = kind == GradCompression::kPowerSgd ? in_.compression.rank : 0;
    if (auto ns = c_.opCostNs(kCodecPart, name, r, 1, in_.cpuTime)) {
      cost_.codecNs = *ns * n * in_.computeScale;
      const std::string reduce = std::string(name) + kCodecReduceSuffix;
      if (auto inside = c_.opCostNs(kCodecPart, reduce, r, 1, in_.cpuTime)) {
        const double ns = std::clamp(*inside * n * in_.computeScale, 0.0, cost_.codecNs);
        cost_.codecNs -= ns;
        cost_.commNs += ns;
      }
      return;
    }
    static const Calibration measured = measuredCodecCosts();
    cost_.codecNs =
        measured.opCostNs(kCodecPart, name, r, 1, false).value_or(0.0) * n * in_.computeScale;
    warn(std::string("no ") + name +
         " compression cost in the calibration: the constant measured with bench allreduce");
  }

  const GradReductionInput& in_;
  const Calibration& c_;
  GradReductionCost cost_;
};

}  // namespace

int32_t NodeLink::nodes(int32_t group) const {
  if (ranksPerNode <= 0 || ranksPerNode >= group || group % ranksPerNode != 0) return 1;
  return group / ranksPerNode;
}

GradReductionCost gradReductionCost(const GradReductionInput& in, const Calibration& c) {
  return CostBuilder(in, c).run();
}

GradReductionInput gradReductionInput(const Layout& l) {
  GradReductionInput in;
  in.compression = l.gradCompression;
  in.algorithm = l.allReduce;
  in.group = l.dp;
  // Emulated nodes of K world ranks hold whole tp x pp groups: K / (tp pp)
  // dp ranks each (layout.h).
  const int32_t inner = l.tp * l.pp;
  if (l.ranksPerNode > 0 && inner > 0 && l.ranksPerNode % inner == 0) {
    in.link.ranksPerNode = l.ranksPerNode / inner;
  }
  in.link.interNodeGbps = l.interNodeGbps;
  in.link.interNodeLatencyUs = l.interNodeLatencyUs;
  return in;
}

std::vector<MatrixShape> gradTensors(const ModelConfig& m, int32_t tp, int32_t firstLayer,
                                     int32_t layers, bool embedding, bool head) {
  const int64_t c = m.hidden, f = m.mlpHidden(), t = std::max(1, tp);
  std::vector<MatrixShape> out;
  if (embedding) {
    out.push_back({m.vocabSize, c});  // wte
    out.push_back({m.seqLen, c});     // wpe
  }
  for (int32_t i = firstLayer; i < firstLayer + layers; ++i) {
    out.push_back({c, 1});          // ln_1 weight
    out.push_back({c, 1});          // ln_1 bias
    out.push_back({3 * c / t, c});  // attn.qkv weight (rows split over tp)
    out.push_back({3 * c / t, 1});  // its bias
    out.push_back({c, c / t});      // attn.proj weight (columns split)
    out.push_back({c, 1});          // its bias
    out.push_back({c, 1});          // ln_2 weight
    out.push_back({c, 1});          // ln_2 bias
    if (m.isMoeBlock(i)) {          // router and experts: as one uncompressed piece
      const int64_t attention = 4 * c + 3 * c * c + 3 * c + c * c + c;
      out.push_back({m.blockParameterCount(i) - attention, 1});
      continue;
    }
    out.push_back({f / t, c});  // mlp.fc weight
    out.push_back({f / t, 1});  // its bias
    out.push_back({c, f / t});  // mlp.proj weight
    out.push_back({c, 1});      // its bias
  }
  if (head) {
    out.push_back({c, 1});            // ln_f weight
    out.push_back({c, 1});            // ln_f bias
    out.push_back({m.vocabSize, c});  // lm_head
  }
  return out;
}

Calibration measuredCodecCosts() {
  // `bench allreduce --ranks 2 --model small --iterations 10 --compression C`
  // (n = 3,323,392 elements, 2 cores at load average 11-16): (engine ms of C
  // - engine ms of none / C's compression ratio) / n, the least of four runs
  // (docs/parallel.md, "What compression costs in the cost model").
  Calibration c;
  c.name = "measured grad compression costs";
  auto add = [&](const char* op, int32_t rank, double nsPerElement) {
    c.ops.push_back({kCodecPart, op, rank, 1, nsPerElement, nsPerElement, 4});
  };
  add("fp16", 0, 118.5);
  add("bf16", 0, 44.7);
  add("int8", 0, 62.5);
  add("topk", 0, 101.3);
  add("powersgd", 1, 42.6);
  add("powersgd", 4, 90.2);
  return c;
}

double exposedOverlappedReductionNs(double reductionNs, double gradientBytes, double bucketBytes,
                                    double lastBackwardNs) {
  const double k = std::max(1.0, std::ceil(gradientBytes / std::max(1.0, bucketBytes)));
  return std::max(reductionNs / k, reductionNs - lastBackwardNs * (k - 1) / k);
}

}  // namespace bubblescope::layout
