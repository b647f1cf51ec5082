// Checksums computed on a CUDA device, for blocks whose IOVs live in GPU memory (the KV cache of
// an inference engine). Same algorithms and results as checksum.h, bit for bit; the CPU code is
// the reference the GPU tests compare against.
//
// Built from core/integrity/cuda/ when CMake finds nvcc (KVCHAOS_HAVE_CUDA); otherwise every call
// answers Unavailable with the reason, so a caller falls back to the CPU explicitly and never
// skips a checksum silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/integrity/checksum.h"

namespace kvchaos::integrity {

// One IOV in device memory.
struct DeviceIov {
  const void* ptr = nullptr;
  size_t size = 0;
};
using DeviceBlock = std::span<const DeviceIov>;

// True when this build has the CUDA kernels and a device is present; otherwise `why` says which
// of the two is missing.
bool DeviceChecksumAvailable(std::string* why);

// One checksum per block of device-resident IOVs.
Result<std::vector<int64_t>> ComputeOnDevice(const ChecksumComputer::Options& options,
                                             std::span<const DeviceBlock> blocks);

// Copies host blocks to the device, computes there, frees the copies: for tests and benchmarks.
Result<std::vector<int64_t>> ComputeHostBlocksOnDevice(const ChecksumComputer::Options& options,
                                                       std::span<const Block> blocks);

}  // namespace kvchaos::integrity
