// Choosing and making a rank's compute backend (engine/backend.h).
//
// Contract:
// - probeGpu() is the single device probe: any CUDA error or zero devices
//   means "no GPU", with the reason in words; a build without CUDA says so.
//   It never fails and never exits (a machine without a driver still runs).
//   It initialises the CUDA runtime, so it is only called when a layout or
//   flag asks for cuda or auto.
// - chooseBackend() turns the requested cpu | cuda | auto into the device a
//   rank trains on, with at most one line for the user (`note`). A single
//   process (RankTrainer without groups) runs on CUDA
//   (kCudaSingleProcessWired), and so do parallel ranks (kCudaModelWired:
//   their groups through engine/parallel/device_groups.h; every layout,
//   what the CPU computes on host buffers staged through the backend:
//   engine/parallel/rank_trainer.h). With a switch off, cuda fails honestly
//   even with a GPU and auto runs on the CPU and says why. A kCuda choice carries the probe's
//   device count, from which selectDevice() (engine/device_selection.h) picks the rank's GPU.
// - createBackend() makes the backend of a device (the GPU `gpuIndex` for
//   kCuda, made current on the calling thread) at a precision: bf16 is the
//   CudaBackend's mixed precision (docs/gpu.md); the CPU backend computes in
//   fp32 and refuses bf16 in one line.
// Library engine_backends: links engine_cuda when built with CUDA.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "engine/backend.h"
#include "engine/layout/layout.h"

namespace bubblescope::engine {

// Whether parallel ranks (RankTrainer with process groups) run on a CUDA
// backend (`run`, `train --layout`: cli/train_layout.cpp).
inline constexpr bool kCudaModelWired = true;
// Whether a single process (`train` without --layout) does.
inline constexpr bool kCudaSingleProcessWired = true;

// Who asks: a single process or a (possibly one-rank) parallel job.
enum class TrainingScope { kParallel, kSingleProcess };

struct GpuProbe {
  bool cudaBuilt = false;  // this binary has the CUDA backend
  int deviceCount = 0;     // usable devices (0: no GPU)
  std::string reason;      // why there is none ("" when deviceCount > 0)
  std::string firstGpu;    // "NVIDIA H200 (sm_90, 139 GiB)" when deviceCount > 0
  bool haveGpu() const { return deviceCount > 0; }
};
GpuProbe probeGpu();

struct BackendChoice {
  Device device = Device::kHost;
  std::string note;        // one line to tell the user ("" when nothing to say)
  int visibleDevices = 0;  // kCuda: the probe's device count (for selectDevice)
};
// Uses `probe` (tests give a fake one).
Result<BackendChoice> chooseBackend(layout::Backend requested, const GpuProbe& probe,
                                    TrainingScope scope = TrainingScope::kParallel);
// Probes only when requested is cuda or auto.
Result<BackendChoice> chooseBackend(layout::Backend requested,
                                    TrainingScope scope = TrainingScope::kParallel);

Result<std::unique_ptr<Backend>> createBackend(
    Device device, int gpuIndex = 0, layout::Precision precision = layout::Precision::kFp32);
// The refusal of bf16 on the CPU (ok otherwise): what createBackend says, and
// what `run` says before it starts a job.
Status checkPrecision(Device device, layout::Precision precision);

}  // namespace bubblescope::engine
