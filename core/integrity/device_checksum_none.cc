// device_checksum.h for builds without CUDA: every call says why no device path exists.
#include "core/integrity/device_checksum.h"

namespace kvchaos::integrity {
namespace {

constexpr const char* kWhy = "kvchaos was built without CUDA (KVCHAOS_CUDA=OFF or nvcc not found)";

}  // namespace

bool DeviceChecksumAvailable(std::string* why) {
  if (why != nullptr) *why = kWhy;
  return false;
}

Result<std::vector<int64_t>> ComputeOnDevice(const ChecksumComputer::Options&, std::span<const DeviceBlock>) {
  return Status::Unavailable(kWhy);
}

Result<std::vector<int64_t>> ComputeHostBlocksOnDevice(const ChecksumComputer::Options&, std::span<const Block>) {
  return Status::Unavailable(kWhy);
}

}  // namespace kvchaos::integrity
