// `bubblescope-cli bench train`: training throughput of one process's
// RankTrainer on the chosen backend (the same backend `train` creates). On the
// CPU: against OpenBLAS sgemm on one thread for a matrix of the model's size,
// same run. On CUDA: MFU against the device's peak dense bf16 rate. With
// --torch: the same GPT shape trained eagerly by PyTorch
// (scripts/torch_gpt_bench.py) in the same run, on the same kind of device.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "cli/backend_option.h"
#include "cli/commands.h"
#include "engine/cpu_gemm.h"
#include "engine/parallel/rank_trainer.h"
#include "engine/trainer_options.h"

namespace bubblescope::cli {
namespace {

struct BenchTrainArgs {
  std::string model = "small";
  int64_t steps = 5;
  int64_t batchSize = 8;
  double gemmSeconds = 2.0;
  std::string backend = "cpu";
  double peakBf16Tflops = 0;  // 0: from the device table
  bool torch = false;
  std::string torchScript = BUBBLESCOPE_SOURCE_DIR "/scripts/torch_gpt_bench.py";
};

// Peak dense (no sparsity) bf16 tensor-core rate in TFLOP/s by device name,
// from NVIDIA's H100/H200 datasheets (H100 SXM5 and H200 SXM: 989.4 dense
// bf16; the sheets' 1979 figure is with 2:4 sparsity; H100 PCIe: 756).
std::optional<double> peakBf16TflopsOf(const std::string& device) {
  if (device.find("H100") != std::string::npos && device.find("PCIe") != std::string::npos) {
    return 756.0;
  }
  if (device.find("H200") != std::string::npos || device.find("H100") != std::string::npos) {
    return 989.0;
  }
  return std::nullopt;
}

// Runs `command` through the shell; its stdout and stderr together.
struct ShellResult {
  int exitCode = -1;
  std::string output;
};
ShellResult runShell(const std::string& command) {
  ShellResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string lastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// The value of the first "key: number" line of `text`, if any.
std::optional<double> keyValue(const std::string& text, const std::string& key) {
  const std::string prefix = key + ": ";
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? end : end - at);
    if (line.rfind(prefix, 0) == 0) {
      char* stop = nullptr;
      const double v = std::strtod(line.c_str() + prefix.size(), &stop);
      if (stop != line.c_str() + prefix.size()) return v;
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

// PyTorch's tokens/s for the same shape on `device` ("cpu" or "cuda"), or
// the line saying why there is none.
struct TorchRun {
  std::optional<double> tokensPerS;
  std::string why;
};
TorchRun runTorch(const BenchTrainArgs& args, const layout::ModelConfig& config,
                  const std::string& device) {
  const std::string check =
      device == "cuda"
          ? "import torch; assert torch.cuda.is_available(), 'no CUDA device for torch'"
          : "import torch";
  // The first python that has torch: PATH's, then the system's (Debian's
  // python3-torch lives there when PATH has another python, e.g. pyenv's).
  std::string python, why;
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    ShellResult probe = runShell(std::string(candidate) + " -c \"" + check + "\"");
    if (probe.exitCode == 0) {
      python = candidate;
      break;
    }
    if (why.empty()) why = probe.exitCode == 127 ? "python3 not found" : lastLine(probe.output);
  }
  if (python.empty()) {
    return {std::nullopt, "not available (" + (why.empty() ? "python3 failed" : why) + ")"};
  }
  // One thread on both sides: the engine trains on one (useSingleBlasThread).
  const std::string command =
      "OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 " + python + " '" +
      args.torchScript + "' --vocab " + std::to_string(config.vocabSize) + " --seq-len " +
      std::to_string(config.seqLen) + " --layers " + std::to_string(config.numLayers) +
      " --hidden " + std::to_string(config.hidden) + " --heads " + std::to_string(config.numHeads) +
      " --mlp-ratio " + std::to_string(config.mlpRatio) + " --batch-size " +
      std::to_string(args.batchSize) + " --steps " + std::to_string(args.steps) + " --device " +
      device + " --threads 1" +
      // The backend `bench train` creates runs its matmuls in fp32.
      " --precision fp32";
  ShellResult run = runShell(command);
  const std::optional<double> tps = keyValue(run.output, "tokens_per_s");
  if (run.exitCode != 0 || !tps) return {std::nullopt, "failed (" + lastLine(run.output) + ")"};
  return {tps, ""};
}

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
  auto device = resolveTrainingBackend(args.backend, engine::TrainingScope::kSingleProcess);
  if (!device.isOk()) {
    std::fprintf(stderr, "error: %s\n", device.status().message().c_str());
    return backendExitCode(device.status());
  }
  engine::TrainerOptions options;
  options.model = *config;
  options.batchSize = args.batchSize;
  options.schedule.warmupSteps = 0;
  options.schedule.totalSteps = args.steps + 1;
  auto backend = engine::createBackend(device->device, device->gpuIndex);
  if (!backend.isOk()) {
    std::fprintf(stderr, "error: %s\n", backend.status().message().c_str());
    return 1;
  }
  const bool onGpu = device->device == engine::Device::kCuda;
  const std::string deviceDescription = (*backend)->description();
  auto trainer = engine::RankTrainer::create(options, {.backend = std::move(*backend)});
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
  std::optional<TorchRun> torch;
  if (args.torch) torch = runTorch(args, *config, onGpu ? "cuda" : "cpu");
  std::printf("model: %s\n", config->preset.c_str());
  std::printf("backend: %s\n", engine::deviceName(device->device));
  if (onGpu) std::printf("device: %s\n", deviceDescription.c_str());
  std::printf("parameters: %lld\n", static_cast<long long>(config->parameterCount()));
  std::printf("tokens_per_step: %lld\n", static_cast<long long>((*trainer)->tokensPerStep()));
  std::printf("timed_steps: %lld\n", static_cast<long long>(args.steps));
  std::printf("step_ms: %.2f\n", static_cast<double>(ns) / 1e6 / static_cast<double>(args.steps));
  std::printf("tokens_per_s: %.1f\n", tokensPerS);
  std::printf("model_flop_per_token: %.4g\n", config->trainingFlopsPerToken());
  std::printf("model_gflop_per_s: %.3f\n", modelGflops);
  if (onGpu) {
    const std::optional<double> peak = args.peakBf16Tflops > 0
                                           ? std::optional<double>(args.peakBf16Tflops)
                                           : peakBf16TflopsOf(deviceDescription);
    if (peak) {
      std::printf("peak_bf16_tflops: %.1f\n", *peak);
      std::printf("mfu: %.4f\n", modelGflops / (*peak * 1e3));
    } else {
      std::printf("peak_bf16_tflops: unknown\n");
      std::printf("mfu: unknown (give --peak-bf16-tflops)\n");
    }
  } else {
    // The model's dominant GEMM shape: (B*T, C) x (C, 4C), the MLP's first layer.
    const int64_t m = args.batchSize * config->seqLen, k = config->hidden, n = config->mlpHidden();
    const double sgemmGflops = engine::measureSgemmGflops(m, n, k, args.gemmSeconds);
    std::printf("sgemm_shape: %lldx%lldx%lld\n", static_cast<long long>(m),
                static_cast<long long>(n), static_cast<long long>(k));
    std::printf("sgemm_gflop_per_s: %.3f\n", sgemmGflops);
    std::printf("gemm_efficiency: %.3f\n", modelGflops / sgemmGflops);
  }
  if (torch) {
    if (torch->tokensPerS) {
      std::printf("torch_tokens_per_s: %.1f\n", *torch->tokensPerS);
      std::printf("ratio_to_torch: %.3f\n", tokensPerS / *torch->tokensPerS);
    } else {
      std::printf("torch: %s\n", torch->why.c_str());
    }
  }
  return 0;
}

}  // namespace

void addBenchTrain(Command bench, CommandRunner& runner) {
  auto args = std::make_shared<BenchTrainArgs>();
  Command cmd = bench.subcommand(
      "train", "Training throughput (cpu: against sgemm of the model's size; cuda: MFU)");
  cmd.option("--model", args->model, "Model preset").showDefault();
  cmd.option("--steps", args->steps, "Timed steps (after one warm-up step)").showDefault();
  cmd.option("--batch-size", args->batchSize, "Sequences per step").showDefault();
  cmd.option("--gemm-seconds", args->gemmSeconds, "Time spent measuring sgemm").showDefault();
  cmd.option("--backend", args->backend, kBackendHelp).showDefault();
  cmd.option("--peak-bf16-tflops", args->peakBf16Tflops,
             "Device peak dense bf16 TFLOP/s for mfu (cuda; default: from the device name)")
      .positive();
  cmd.flag("--torch", args->torch,
           "Also train the same shape eagerly in PyTorch (scripts/torch_gpt_bench.py)");
  cmd.option("--torch-script", args->torchScript, "Path of torch_gpt_bench.py").showDefault();
  cmd.callback([args, &runner] { runner = [args] { return runBenchTrain(*args); }; });
}

}  // namespace bubblescope::cli
