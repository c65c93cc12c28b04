#include "engine/cuda/cuda_check.h"

#include <string>

namespace bubblescope::engine::cuda {
namespace {

std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " failed (" + file + ":" + std::to_string(line) + "): ";
}

}  // namespace

bool isNoGpuError(cudaError_t code) {
  return code == cudaErrorNoDevice || code == cudaErrorInsufficientDriver ||
         code == cudaErrorDevicesUnavailable || code == cudaErrorInitializationError ||
         code == cudaErrorStubLibrary || code == cudaErrorSystemDriverMismatch ||
         code == cudaErrorCompatNotSupportedOnDevice;
}

Status cudaError(cudaError_t code, const char* call, const char* file, int line) {
  // Clear the runtime's last-error slot (non-sticky errors such as out of
  // memory), so a later launch check does not report this error again.
  (void)cudaGetLastError();
  std::string message =
      where(call, file, line) + cudaGetErrorString(code) + " (" + cudaGetErrorName(code) + ")";
  if (isNoGpuError(code)) return Status::failedPrecondition(message + "; no usable GPU");
  return Status::internal(message);
}

Status cublasError(cublasStatus_t code, const char* call, const char* file, int line) {
  return Status::internal(where(call, file, line) + cublasGetStatusString(code) + " (" +
                          cublasGetStatusName(code) + ")");
}

}  // namespace bubblescope::engine::cuda
