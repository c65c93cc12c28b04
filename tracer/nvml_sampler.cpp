#include "tracer/nvml_sampler.h"

#include <dlfcn.h>

#include <string>

namespace bubblescope::tracer {
namespace {

// The few NVML entry points used, declared from the NVML API reference:
// every call returns nvmlReturn_t (0 = success).
using NvmlDevice = void*;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
using InitFn = int (*)();
using ShutdownFn = int (*)();
using HandleByNameFn = int (*)(const char*, NvmlDevice*);
using UtilFn = int (*)(NvmlDevice, NvmlUtilization*);
using MemFn = int (*)(NvmlDevice, NvmlMemory*);

}  // namespace

struct NvmlSampler::Api {
  void* library = nullptr;
  ShutdownFn shutdown = nullptr;
  UtilFn utilization = nullptr;
  MemFn memory = nullptr;
  NvmlDevice device = nullptr;
};

Result<std::unique_ptr<NvmlSampler>> NvmlSampler::open(const GpuIdentity& gpu) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return Status::unsupported("GPU samples need NVML: libnvidia-ml.so.1 is not installed");
  }
  auto api = std::make_unique<Api>();
  api->library = lib;
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto byBusId = reinterpret_cast<HandleByNameFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto byUuid = reinterpret_cast<HandleByNameFn>(dlsym(lib, "nvmlDeviceGetHandleByUUID"));
  api->shutdown = reinterpret_cast<ShutdownFn>(dlsym(lib, "nvmlShutdown"));
  api->utilization = reinterpret_cast<UtilFn>(dlsym(lib, "nvmlDeviceGetUtilizationRates"));
  api->memory = reinterpret_cast<MemFn>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  if (!init || !byBusId || !byUuid || !api->shutdown || !api->utilization || !api->memory) {
    dlclose(lib);
    return Status::unsupported("GPU samples need NVML: libnvidia-ml.so.1 lacks an entry point");
  }
  if (int rc = init(); rc != 0) {
    dlclose(lib);
    return Status::unsupported("NVML did not start (error " + std::to_string(rc) + ")");
  }
  auto lookup = [](HandleByNameFn fn) {
    return [fn](const std::string& name) -> Result<NvmlHandle> {
      NvmlDevice device = nullptr;
      if (int rc = fn(name.c_str(), &device); rc != 0) {
        return Status::notFound("NVML error " + std::to_string(rc));
      }
      return device;
    };
  };
  auto device = nvmlDeviceOf(gpu, {lookup(byBusId), lookup(byUuid)});
  if (!device.isOk()) {
    api->shutdown();
    dlclose(lib);
    return device.status();
  }
  api->device = *device;
  return std::unique_ptr<NvmlSampler>(new NvmlSampler(std::move(api)));
}

NvmlSampler::NvmlSampler(std::unique_ptr<Api> api) : api_(std::move(api)) {}

NvmlSampler::~NvmlSampler() {
  api_->shutdown();
  dlclose(api_->library);
}

std::vector<trace_model::Sample> NvmlSampler::sample(int32_t rank, int64_t nowNs) {
  std::vector<trace_model::Sample> out;
  NvmlUtilization util{};
  if (api_->utilization(api_->device, &util) == 0) {
    out.push_back({rank, "gpu_util", nowNs, util.gpu / 100.0});
    out.push_back({rank, "gpu_mem_util", nowNs, util.memory / 100.0});
  }
  NvmlMemory mem{};
  if (api_->memory(api_->device, &mem) == 0) {
    out.push_back({rank, "gpu_mem_used_bytes", nowNs, static_cast<double>(mem.used)});
  }
  return out;
}

}  // namespace bubblescope::tracer
