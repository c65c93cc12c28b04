#include "cli/train_dumps.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/safetensors.h"

namespace bubblescope::cli {

Status writeBatchJson(const engine::TrainerOptions& options, int64_t step,
                      const std::string& path) {
  if (step < 0) {
    return Status::invalidArgument("--dump-batch: step must not be negative, got " +
                                   std::to_string(step));
  }
  std::string source;
  BS_ASSIGN_OR_RETURN(engine::DataLoader loader, engine::createDataLoader(options, source));
  nlohmann::json tokens = nlohmann::json::array(), targets = nlohmann::json::array();
  for (int32_t m = 0; m < options.microBatches; ++m) {
    const engine::Batch batch = loader.batch(step, m);
    nlohmann::json mt = nlohmann::json::array(), mg = nlohmann::json::array();
    for (int64_t i = 0; i < batch.batch; ++i) {
      const auto row = [&](const std::vector<int32_t>& v) {
        return std::vector<int32_t>(v.begin() + i * batch.seq, v.begin() + (i + 1) * batch.seq);
      };
      mt.push_back(row(batch.tokens));
      mg.push_back(row(batch.targets));
    }
    tokens.push_back(std::move(mt));
    targets.push_back(std::move(mg));
  }
  const nlohmann::json doc = {{"step", step},
                              {"seed", options.seed},
                              {"data", source},
                              {"micro_batches", options.microBatches},
                              {"batch_size", options.batchSize},
                              {"seq_len", options.model.seqLen},
                              {"tokens", std::move(tokens)},
                              {"targets", std::move(targets)}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << doc.dump() << '\n';
    if (!out.good()) return Status::ioError("--dump-batch: cannot write '" + path + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::ioError("--dump-batch: cannot write '" + path + "'");
  }
  return Status::ok();
}

Status writeGradients(engine::RankTrainer& trainer, const engine::StepResult& last,
                      const std::string& path) {
  if (trainer.backend().device() != engine::Device::kHost) {
    return Status::unsupported("--save-grads: only on the cpu backend");
  }
  std::vector<engine::SafetensorsTensorView> views;
  for (engine::Parameter* p : trainer.model().parameters()) {
    views.push_back({p->name, p->value.shape(), p->grad.span()});
  }
  const double clip = trainer.options().gradClip;
  const double scale =
      clip > 0.0 && last.gradNorm > clip ? static_cast<float>(clip / (last.gradNorm + 1e-6)) : 1.0;
  auto text = [](double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return std::string(buf);
  };
  return writeSafetensors(path, views,
                          {{"format", "bubblescope-gradients-v1"},
                           {"step", std::to_string(last.step)},
                           {"loss", text(last.loss)},
                           {"grad_norm", text(last.gradNorm)},
                           {"lr", text(last.lr)},
                           {"clip_scale", text(scale)}});
}

}  // namespace bubblescope::cli
