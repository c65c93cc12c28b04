// checkpoint_agreement GOT.safetensors REFERENCE.safetensors: whether a
// checkpoint (a parallel layout's, `run --save`) is the model of the
// reference (the single-process `train --save` on the same global batch
// after the same steps), by the parallel agreement criterion
// (tests/parallel/agreement.h, NaN-aware):
// - exactly: the same format, model shape, step, optimizer step count and
//   trainer settings (a resumed run continues alike from either);
// - parameters: at most kOffFraction of the elements off by more than
//   kOffElementLr · Σ lr and the others' rms error at most kBulkRmsLr · Σ lr
//   (Σ lr: the schedule's learning rates over the steps run);
// - AdamW moments, tensor by tensor relative to the tensor's norm (floored
//   at kGradFloor of all of that moment's norm): m is a weighted sum of the
//   steps' gradients, so within kLaterGradRelTolerance (gradients of steps
//   after the first, whose weights differ by noise-level moves); v sums their
//   squares, whose relative error doubles to first order (|a² − b²| =
//   |a − b|·|a + b|), so within twice that.
// Prints the figures and each failed part; exit 0 when they agree, 1 when
// not, 2 on unreadable input.
#include <cmath>
#include <cstdio>
#include <memory>

#include "engine/checkpoint.h"
#include "engine/trainer_options.h"
#include "tests/parallel/agreement.h"

namespace bubblescope::engine::testing {
namespace {

struct Loaded {
  std::unique_ptr<Allocator> allocator = std::make_unique<Allocator>();
  std::unique_ptr<GptModel> model;
  std::unique_ptr<AdamW> optimizer;
  CheckpointMeta meta;
};

Result<Loaded> load(const std::string& path) {
  Loaded l;
  BS_ASSIGN_OR_RETURN(Checkpoint ckpt, Checkpoint::read(path));
  l.meta = ckpt.meta();
  BS_ASSIGN_OR_RETURN(l.model, GptModel::create(l.meta.model, l.allocator.get()));
  l.optimizer = std::make_unique<AdamW>(l.model->parameters(), AdamWConfig{}, l.allocator.get());
  BS_RETURN_IF_ERROR(ckpt.restore(*l.model, *l.optimizer));
  return l;
}

// The parameters, and each AdamW moment as GradientSlices.
struct State {
  RunResult params;
  std::vector<GradientSlice> m, v;
};

State stateOf(Loaded& l) {
  State out;
  for (AdamW::State& s : l.optimizer->states()) {
    const Parameter& p = *s.param;
    out.params.params.emplace_back(
        p.name, std::vector<float>(p.value.span().begin(), p.value.span().end()));
    out.m.push_back({p.name, p.fullShape, {}, {s.m.span().begin(), s.m.span().end()}});
    out.v.push_back({p.name, p.fullShape, {}, {s.v.span().begin(), s.v.span().end()}});
  }
  return out;
}

// Worst tensor of one moment relative to its norm (floored at kGradFloor of
// the moment's whole norm): compareGradients() on a "later step" (index 1).
Agreement compareMoment(const std::vector<GradientSlice>& got,
                        const std::vector<GradientSlice>& ref) {
  RunResult g, r;
  g.grads = {{}, got};
  r.grads = {{}, ref};
  Agreement a;
  compareGradients(g, r, a);
  return a;
}

int check(const std::string& gotPath, const std::string& refPath) {
  auto got = load(gotPath);
  auto ref = load(refPath);
  if (!got.isOk() || !ref.isOk()) {
    std::fprintf(stderr, "error: %s\n",
                 (got.isOk() ? ref.status() : got.status()).message().c_str());
    return 2;
  }
  std::vector<std::string> failures;
  const CheckpointMeta& g = got->meta;
  const CheckpointMeta& r = ref->meta;
  if (!Checkpoint::read(gotPath)->checkModel(r.model).isOk()) failures.push_back("model shape");
  if (g.step != r.step)
    failures.push_back("step " + std::to_string(g.step) + " vs " + std::to_string(r.step));
  if (got->optimizer->stepCount() != ref->optimizer->stepCount()) {
    failures.push_back("optimizer step count " + std::to_string(got->optimizer->stepCount()) +
                       " vs " + std::to_string(ref->optimizer->stepCount()));
  }
  if (g.trainerJson != r.trainerJson) {
    failures.push_back("trainer settings " + g.trainerJson + " vs " + r.trainerJson);
  }
  TrainerOptions settings;
  if (!settings.applySettingsJson(r.trainerJson).isOk()) failures.push_back("reference settings");
  State gotState = stateOf(*got);
  State refState = stateOf(*ref);
  for (int64_t s = 0; s < r.step; ++s) refState.params.lrSum += settings.schedule.at(s);
  const Agreement a = compare(gotState.params, refState.params);
  for (const std::string& line : disagreements(a)) failures.push_back(line);
  const Agreement am = compareMoment(gotState.m, refState.m);
  const Agreement av = compareMoment(gotState.v, refState.v);
  std::printf(
      "%s vs %s: step %lld | params off %.0f/%.0f, bulk rms %.1e lr, max %.1e lr | m %.1e, v "
      "%.1e of their norm | broken %.0f\n",
      gotPath.c_str(), refPath.c_str(), static_cast<long long>(g.step), a.offElements, a.elements,
      a.bulkRms() / a.lrSum, a.paramAbs / a.lrSum, am.laterGradRel, av.laterGradRel,
      a.broken + am.broken + av.broken);
  if (!(am.laterGradRel <= kLaterGradRelTolerance) || am.broken > 0) {
    failures.push_back("an m tensor off by " + std::to_string(am.laterGradRel) + " of its norm");
  }
  if (!(av.laterGradRel <= 2 * kLaterGradRelTolerance) || av.broken > 0) {
    failures.push_back("a v tensor off by " + std::to_string(av.laterGradRel) + " of its norm");
  }
  for (const std::string& f : failures) std::printf("disagrees: %s\n", f.c_str());
  std::printf("%s\n", failures.empty() ? "checkpoints agree" : "checkpoints DISAGREE");
  return failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace bubblescope::engine::testing

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: checkpoint_agreement GOT.safetensors REFERENCE.safetensors\n");
    return 2;
  }
  return bubblescope::engine::testing::check(argv[1], argv[2]);
}
