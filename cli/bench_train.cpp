// `bubblescope-cli bench train`: training throughput of the CPU engine against
// OpenBLAS sgemm on one thread for a matrix of the model's size, same run.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/backend_option.h"
#include "cli/commands.h"
#include "engine/cpu_gemm.h"
#include "engine/trainer.h"

namespace bubblescope::cli {
namespace {

struct BenchTrainArgs {
  std::string model = "small";
  int64_t steps = 5;
  int64_t batchSize = 8;
  double gemmSeconds = 2.0;
  std::string backend = "cpu";
};

ExitCode runBenchTrain(const BenchTrainArgs& args) {
  auto config = layout::modelPreset(args.model);
  if (!config.isOk()) {
    std::fprintf(stderr, "error: %s\n", config.status().message().c_str());
    return 2;
  }
  if (args.steps <= 0) {
    std::fprintf(stderr, "error: --steps must be positive, got %lld\n",
                 static_cast<long long>(args.steps));
    return 2;
  }
  auto device = resolveTrainingBackend(args.backend);
  if (!device.isOk()) {
    std::fprintf(stderr, "error: %s\n", device.status().message().c_str());
    return backendExitCode(device.status());
  }
  engine::TrainerOptions options;
  options.model = *config;
  options.batchSize = args.batchSize;
  options.schedule.warmupSteps = 0;
  options.schedule.totalSteps = args.steps + 1;
  auto trainer = engine::Trainer::create(options);
  if (!trainer.isOk()) {
    std::fprintf(stderr, "error: %s\n", trainer.status().message().c_str());
    return 2;
  }
  // One untimed step warms caches and page-faults the buffers in.
  if (auto r = (*trainer)->step(); !r.isOk()) {
    std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
    return 1;
  }
  int64_t tokens = 0, ns = 0;
  for (int64_t i = 0; i < args.steps; ++i) {
    auto r = (*trainer)->step();
    if (!r.isOk()) {
      std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
      return 1;
    }
    tokens += r->tokens;
    ns += r->endNs - r->startNs;
  }
  const double tokensPerS = static_cast<double>(tokens) / (static_cast<double>(ns) / 1e9);
  const double modelGflops = tokensPerS * config->trainingFlopsPerToken() / 1e9;
  // The model's dominant GEMM shape: (B*T, C) x (C, 4C), the MLP's first layer.
  const int64_t m = args.batchSize * config->seqLen, k = config->hidden, n = config->mlpHidden();
  const double sgemmGflops = engine::measureSgemmGflops(m, n, k, args.gemmSeconds);
  std::printf("model: %s\n", config->preset.c_str());
  std::printf("backend: %s\n", engine::deviceName(*device));
  std::printf("parameters: %lld\n", static_cast<long long>(config->parameterCount()));
  std::printf("tokens_per_step: %lld\n", static_cast<long long>((*trainer)->tokensPerStep()));
  std::printf("timed_steps: %lld\n", static_cast<long long>(args.steps));
  std::printf("step_ms: %.2f\n", static_cast<double>(ns) / 1e6 / static_cast<double>(args.steps));
  std::printf("tokens_per_s: %.1f\n", tokensPerS);
  std::printf("model_flop_per_token: %.4g\n", config->trainingFlopsPerToken());
  std::printf("model_gflop_per_s: %.3f\n", modelGflops);
  std::printf("sgemm_shape: %lldx%lldx%lld\n", static_cast<long long>(m), static_cast<long long>(n),
              static_cast<long long>(k));
  std::printf("sgemm_gflop_per_s: %.3f\n", sgemmGflops);
  std::printf("gemm_efficiency: %.3f\n", modelGflops / sgemmGflops);
  return 0;
}

}  // namespace

void addBenchTrain(CLI::App& bench, CommandRunner& runner) {
  auto args = std::make_shared<BenchTrainArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "train", "Training throughput against single-thread sgemm of the model's size");
  cmd->add_option("--model", args->model, "Model preset")->capture_default_str();
  cmd->add_option("--steps", args->steps, "Timed steps (after one warm-up step)")
      ->capture_default_str();
  cmd->add_option("--batch-size", args->batchSize, "Sequences per step")->capture_default_str();
  cmd->add_option("--gemm-seconds", args->gemmSeconds, "Time spent measuring sgemm")
      ->capture_default_str();
  cmd->add_option("--backend", args->backend, kBackendHelp)->capture_default_str();
  cmd->callback([args, &runner] { runner = [args] { return runBenchTrain(*args); }; });
}

}  // namespace bubblescope::cli
