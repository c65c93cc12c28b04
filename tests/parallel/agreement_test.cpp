// The agreement criterion (agreement.h) can fail: a NaN anywhere, on any one
// rank, fails it; a real bug injected into a dp 2 run (one bucket's gradient
// all-reduce scaled by 2, or skipped, every step) fails it, and so does one
// small tensor's gradient scaled by 2; and what rounding
// does (the noise-level elements moving ±lr the other way) passes it, as
// does the same run through a fault-free wrapper.
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

constexpr int kSteps = 5;

// A dp group whose float all-reduce of one bucket goes wrong: the
// `target`-th float all-reduce of the run picks the bucket (its buffer and
// length), and every all-reduce of that bucket, step after step, is scaled
// by `scale` after the sum, or not reduced at all when `skip`. Every rank of
// the group issues the same collectives in the same order, so all ranks
// fault the same call.
class FaultyCommunicator final : public Communicator {
 public:
  struct Fault {
    int target = -1;  // -1: none (a transparent wrapper)
    double scale = 1.0;
    bool skip = false;
  };

  FaultyCommunicator(Communicator& inner, Fault fault)
      : Communicator(inner.dim(), inner.worldRanks(), inner.rank()), inner_(inner), fault_(fault) {}

  int faulted() const { return faulted_; }

 protected:
  Result<std::unique_ptr<PendingComm>> launch(const CommOp& op, bool blocking) override {
    (void)blocking;
    const bool floatSum = op.kind == CollectiveKind::kAllReduce && op.type == ElementType::kFloat32;
    if (floatSum && calls_++ == fault_.target) {
      bucket_ = op.recv;
      bucketCount_ = op.count;
    }
    const bool hit =
        floatSum && bucket_ != nullptr && op.recv == bucket_ && op.count == bucketCount_;
    faulted_ += hit ? 1 : 0;
    if (hit && fault_.skip) return std::unique_ptr<PendingComm>(std::make_unique<Done>());
    BS_ASSIGN_OR_RETURN(CommHandle handle, inner_.start(op));
    auto pending = std::make_unique<Forwarded>(inner_, std::move(handle));
    if (hit) pending->scale(static_cast<float*>(op.recv), op.count, fault_.scale);
    return std::unique_ptr<PendingComm>(std::move(pending));
  }

 private:
  struct Done : PendingComm {
    Status wait(CommTimes& times) override {
      const int64_t now = tracer::hostNowNs();
      times = {now, now, now};
      return Status::ok();
    }
  };
  struct Forwarded : PendingComm {
    Forwarded(Communicator& inner, CommHandle handle) : inner_(inner), handle_(std::move(handle)) {}
    void scale(float* data, int64_t count, double by) {
      data_ = data;
      count_ = count;
      by_ = by;
    }
    Status wait(CommTimes& times) override {
      BS_RETURN_IF_ERROR(inner_.wait(handle_, &times));
      for (int64_t i = 0; i < count_; ++i) data_[i] = static_cast<float>(data_[i] * by_);
      times.endNs = tracer::hostNowNs();
      return Status::ok();
    }
    Communicator& inner_;
    CommHandle handle_;
    float* data_ = nullptr;
    int64_t count_ = 0;
    double by_ = 1.0;
  };

  Communicator& inner_;
  Fault fault_;
  int calls_ = 0;
  void* bucket_ = nullptr;
  int64_t bucketCount_ = 0;
  int faulted_ = 0;
};

// dp 2 (two groups side by side), buckets of 1000 elements (a block holds
// 12,704 parameters), through a FaultyCommunicator.
std::vector<std::string> dpRunDisagreements(FaultyCommunicator::Fault fault,
                                            const std::string& what) {
  auto inner = dpGroup(2);
  FaultyCommunicator comm(*inner, fault);
  const RunResult got =
      runParallel({.dp = 2, .zero = 0, .overlap = true, .bucketElements = 1000}, comm, kSteps);
  if (fault.target >= 0) {
    EXPECT_EQ(comm.faulted(), kSteps) << what << ": one bucket per step";
  }
  return disagreements(worstOverRanks(compare(got, reference(2, kSteps)), what));
}

TEST(AgreementTest, FaultFreeWrapperAgrees) {
  const auto lines = dpRunDisagreements({}, "dp 2 through the wrapper");
  EXPECT_TRUE(lines.empty()) << ::testing::PrintToString(lines);
}

TEST(AgreementTest, OneBucketScaledTwiceFails) {
  const auto lines = dpRunDisagreements({.target = 3, .scale = 2.0}, "dp 2, one bucket x 2");
  EXPECT_FALSE(lines.empty());
}

TEST(AgreementTest, OneBucketNotReducedFails) {
  const auto lines = dpRunDisagreements({.target = 3, .skip = true}, "dp 2, one bucket skipped");
  EXPECT_FALSE(lines.empty());
}

// What rounding may do: every key-bias element (zero gradient in exact
// arithmetic: hidden per layer) moved the other way, 2 · Σ lr apart, and
// the bulk off by 1e-6 · lr. The criterion passes it; a max-abs bound
// would not.
TEST(AgreementTest, NoiseLevelElementsFlippingPass) {
  const RunResult& ref = reference(1, kSteps);
  RunResult got = ref;
  const int64_t hidden = perRankOptions().model.hidden;
  int flipped = 0;
  for (auto& [name, values] : got.params) {
    for (float& x : values) x += static_cast<float>(1e-6 * ref.lrSum);
    if (name.find("attn.qkv.bias") == std::string::npos) continue;
    ASSERT_EQ(static_cast<int64_t>(values.size()), 3 * hidden) << name;
    for (int64_t k = hidden; k < 2 * hidden; ++k, ++flipped) values[k] += 2 * ref.lrSum;
  }
  EXPECT_EQ(flipped, hidden * perRankOptions().model.numLayers);
  const Agreement a = compare(got, ref);
  EXPECT_GT(a.paramAbs, 1e-2);
  EXPECT_TRUE(disagreements(a).empty()) << ::testing::PrintToString(disagreements(a));
}

// A small tensor's gradient scaled by 2 (ln_f.bias: 32 of 42,880 elements)
// moves the global norm by far less than its tolerance and AdamW's update
// not at all; the per-tensor gradient comparison catches it, at step 0 and
// at the later steps.
TEST(AgreementTest, OneSmallGradientScaledFails) {
  const RunResult& ref = reference(1, kSteps);
  ASSERT_EQ(ref.grads.size(), static_cast<size_t>(kSteps));
  for (size_t from : {size_t{0}, size_t{1}}) {
    RunResult got = ref;
    for (size_t s = from; s < got.grads.size(); ++s) {
      for (GradientSlice& g : got.grads[s]) {
        if (g.name != "ln_f.bias") continue;
        for (float& x : g.values) x *= 2.0f;
      }
    }
    const auto lines = disagreements(compare(got, ref));
    ASSERT_FALSE(lines.empty()) << "scaled from step " << from;
    for (const std::string& line : lines) {
      EXPECT_NE(line.find("gradient tensor"), std::string::npos) << line;  // nothing else sees it
    }
  }
}

// NaN on one rank only, in a loss, a gradient norm, a parameter, or the
// reference itself: every rank's verdict fails (MPI_MAX alone may drop a NaN).
TEST(AgreementTest, NanOnOneRankFailsEverywhere) {
  const RunResult& ref = reference(1, kSteps);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<std::string, void (*)(RunResult&, double)>> cases = {
      {"loss", [](RunResult& r, double x) { r.losses[2] = x; }},
      {"gradient norm", [](RunResult& r, double x) { r.gradNorms[4] = x; }},
      {"parameter", [](RunResult& r, double x) { r.params[5].second[7] = static_cast<float>(x); }},
      {"infinite parameter",
       [](RunResult& r, double) {
         r.params[0].second[0] = std::numeric_limits<float>::infinity();
       }},
  };
  for (const auto& [what, poison] : cases) {
    RunResult got = ref;
    if (worldRank() == 1) poison(got, nan);
    const Agreement local = compare(got, ref);
    EXPECT_EQ(disagreements(local).empty(), worldRank() != 1) << what;
    EXPECT_FALSE(disagreements(worstOverRanks(local, "NaN " + what)).empty()) << what;
    RunResult badRef = ref;
    if (worldRank() == 1) poison(badRef, nan);
    EXPECT_FALSE(disagreements(worstOverRanks(compare(ref, badRef), "NaN ref " + what)).empty())
        << what;
  }
}

TEST(AgreementTest, MissingParameterOrLrSumFails) {
  const RunResult& ref = reference(1, kSteps);
  RunResult got = ref;
  got.params.pop_back();
  EXPECT_FALSE(disagreements(compare(got, ref)).empty());
  RunResult noLr = ref;
  noLr.lrSum = 0.0;
  EXPECT_FALSE(disagreements(compare(ref, noLr)).empty());
}

}  // namespace
}  // namespace bubblescope::engine::testing
