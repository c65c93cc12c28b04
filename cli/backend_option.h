// `--backend cpu|cuda|auto` of the training commands (train, run, bench
// train) and what a command does with it.
//
// Contract: resolveTrainingBackend() parses the name, probes the GPU only
// for cuda and auto (engine/backend_factory.h), prints the choice's note as
// one "note: ..." line on stderr, and returns the device to train on (for
// cuda, the GPU this process uses: selectDevice() of engine/device_selection.h
// from the launcher's environment, so a process started by mpirun or srun
// takes its local rank's GPU and a plain one GPU 0), or the error the command
// prints as its one "error: ..." line (exit code from backendExitCode()).
#pragma once

#include <string>

#include "cli/commands.h"
#include "common/result.h"
#include "engine/allocator.h"
#include "engine/backend_factory.h"

namespace bubblescope::cli {

// The option's help text, the same on every command.
inline constexpr const char* kBackendHelp =
    "Compute backend: cpu, cuda, or auto (cuda when a GPU is usable, else cpu)";
inline constexpr const char* kPrecisionHelp =
    "Matrix products: fp32, or bf16 operands with fp32 accumulation, master weights, gradients "
    "and optimizer state (cuda only)";

struct TrainingDevice {
  engine::Device device = engine::Device::kHost;
  int gpuIndex = 0;  // kCuda: the CUDA device index for createBackend
};

// `scope`: single-process `train` may run on CUDA; parallel jobs not yet.
Result<TrainingDevice> resolveTrainingBackend(
    const std::string& name, engine::TrainingScope scope = engine::TrainingScope::kParallel);
// 2 for a name that is not a backend, 1 for a machine that cannot run it.
ExitCode backendExitCode(const Status& status);

}  // namespace bubblescope::cli
