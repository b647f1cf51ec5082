// CUDA kernels for both block checksums (device_checksum.h). Results equal the CPU reference bit
// for bit; the GPU tests compare the two.
//
// crc32_xor_int64: one thread per IOV computes the zlib CRC-32 of its sampled head and tail, then
// one thread per block folds its IOV CRCs in order (the fold is sequential by definition).
// crc64_full: every IOV is cut into chunks of kChunkBytes; one thread per chunk computes the
// CRC-64/XZ of its chunk, then one thread per block walks its IOVs in order, feeding the 8-byte
// length prefix and combining the chunk CRCs with crc(A||B) = Shift(crc(A), |B|) ^ crc(B)
// (crc_math.h), and finally the 8-byte IOV count.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/integrity/crc_math.h"
#include "core/integrity/device_checksum.h"

namespace kvchaos::integrity {
namespace {

namespace cm = crc_math;

constexpr size_t kChunkBytes = 1024;
constexpr int kThreads = 256;

__constant__ uint64_t c_x2n[64];

struct Tables {
  uint64_t crc64[256];
  uint32_t crc32[256];
  uint64_t x2n[64];
  Tables() {
    cm::FillByteTable64(crc64);
    cm::FillByteTable32(crc32);
    cm::FillX2nTable64(x2n);
  }
};

const Tables& HostTables() {
  static const Tables tables;
  return tables;
}

__global__ void Crc32SampleKernel(const uint64_t* iov_ptr, const uint64_t* iov_size, size_t n_iov, size_t width,
                                  const uint32_t* table_global, uint32_t* iov_crc) {
  __shared__ uint32_t table[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) table[i] = table_global[i];
  __syncthreads();
  const size_t j = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n_iov) return;
  const auto* p = reinterpret_cast<const uint8_t*>(iov_ptr[j]);
  const size_t size = iov_size[j];
  const size_t s = width < size / 2 ? width : size / 2;
  uint32_t crc = cm::Update32(table, 0, p, s);
  crc = cm::Update32(table, crc, p + size - s, s);
  iov_crc[j] = crc;
}

__global__ void FoldKernel(const uint32_t* iov_crc, const uint64_t* block_first, size_t n_blocks, int64_t* out) {
  const size_t b = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= n_blocks) return;
  uint64_t h = 0;
  for (uint64_t j = block_first[b]; j < block_first[b + 1]; ++j) h = cm::Fold(h, iov_crc[j]);
  out[b] = static_cast<int64_t>(h);
}

__global__ void Crc64ChunkKernel(const uint64_t* chunk_ptr, const uint32_t* chunk_len, size_t n_chunks,
                                 const uint64_t* table_global, uint64_t* chunk_crc) {
  __shared__ uint64_t table[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) table[i] = table_global[i];
  __syncthreads();
  const size_t c = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= n_chunks) return;
  chunk_crc[c] = cm::Update64(table, 0, reinterpret_cast<const uint8_t*>(chunk_ptr[c]), chunk_len[c]);
}

__device__ uint64_t FeedLe64(const uint64_t* table, uint64_t crc, uint64_t v) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(v >> (8 * i));
  return cm::Update64(table, crc, bytes, 8);
}

__global__ void Crc64CombineKernel(const uint64_t* iov_size, const uint64_t* iov_first_chunk,
                                   const uint64_t* block_first, size_t n_blocks, const uint64_t* chunk_crc,
                                   const uint32_t* chunk_len, uint64_t full_chunk_op, const uint64_t* table_global,
                                   int64_t* out) {
  __shared__ uint64_t table[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) table[i] = table_global[i];
  __syncthreads();
  const size_t b = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= n_blocks) return;
  uint64_t crc = 0;
  for (uint64_t j = block_first[b]; j < block_first[b + 1]; ++j) {
    crc = FeedLe64(table, crc, iov_size[j]);
    for (uint64_t c = iov_first_chunk[j]; c < iov_first_chunk[j + 1]; ++c) {
      const uint64_t op = chunk_len[c] == kChunkBytes ? full_chunk_op : cm::X8nMod64(c_x2n, chunk_len[c]);
      crc = cm::MulMod64(op, crc) ^ chunk_crc[c];
    }
  }
  crc = FeedLe64(table, crc, block_first[b + 1] - block_first[b]);
  out[b] = static_cast<int64_t>(crc);
}

Status CudaError(const char* what, cudaError_t err) {
  return Status::Unavailable(std::string("CUDA ") + what + " failed: " + cudaGetErrorString(err));
}

// Device memory freed when the scope ends.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  Status Alloc(size_t bytes) {
    const cudaError_t err = cudaMalloc(&ptr_, std::max<size_t>(bytes, 1));
    return err == cudaSuccess ? Status::Ok() : CudaError("cudaMalloc", err);
  }
  template <typename T>
  Status Upload(const std::vector<T>& host) {
    KVCHAOS_RETURN_IF_ERROR(Alloc(host.size() * sizeof(T)));
    if (host.empty()) return Status::Ok();
    const cudaError_t err = cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    return err == cudaSuccess ? Status::Ok() : CudaError("cudaMemcpy to device", err);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

unsigned GridFor(size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

Status Launched(const char* what) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  return err == cudaSuccess ? Status::Ok() : CudaError(what, err);
}

}  // namespace

bool DeviceChecksumAvailable(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    if (why != nullptr) {
      *why = err != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(err)
                                : std::string("no CUDA device present");
    }
    return false;
  }
  if (why != nullptr) why->clear();
  return true;
}

Result<std::vector<int64_t>> ComputeOnDevice(const ChecksumComputer::Options& options,
                                             std::span<const DeviceBlock> blocks) {
  if (options.algo == ChecksumAlgo::kUnspecified) {
    return Status::InvalidArgument("checksum algorithm is unspecified: set integrity.algo");
  }
  if (options.algo == ChecksumAlgo::kCrc32XorInt64 && options.sample_width == 0) {
    return Status::InvalidArgument("crc32_xor_int64: sample width must be > 0");
  }
  std::vector<int64_t> out(blocks.size());
  if (blocks.empty()) return out;
  const Tables& tables = HostTables();

  std::vector<uint64_t> iov_ptr, iov_size, block_first{0};
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (size_t i = 0; i < blocks[b].size(); ++i) {
      const DeviceIov& iov = blocks[b][i];
      if (options.algo == ChecksumAlgo::kCrc32XorInt64 && iov.size < 2) {
        return Status::InvalidArgument("block " + std::to_string(b) + ": crc32_xor_int64: IOV " + std::to_string(i) +
                                       " has " + std::to_string(iov.size) + " bytes; at least 2 are needed");
      }
      iov_ptr.push_back(reinterpret_cast<uint64_t>(iov.ptr));
      iov_size.push_back(iov.size);
    }
    block_first.push_back(iov_ptr.size());
  }

  DeviceBuffer d_iov_ptr, d_iov_size, d_block_first, d_out;
  KVCHAOS_RETURN_IF_ERROR(d_iov_ptr.Upload(iov_ptr));
  KVCHAOS_RETURN_IF_ERROR(d_iov_size.Upload(iov_size));
  KVCHAOS_RETURN_IF_ERROR(d_block_first.Upload(block_first));
  KVCHAOS_RETURN_IF_ERROR(d_out.Alloc(out.size() * sizeof(int64_t)));

  if (options.algo == ChecksumAlgo::kCrc32XorInt64) {
    DeviceBuffer d_table, d_iov_crc;
    KVCHAOS_RETURN_IF_ERROR(d_table.Upload(std::vector<uint32_t>(tables.crc32, tables.crc32 + 256)));
    KVCHAOS_RETURN_IF_ERROR(d_iov_crc.Alloc(iov_ptr.size() * sizeof(uint32_t)));
    if (!iov_ptr.empty()) {
      Crc32SampleKernel<<<GridFor(iov_ptr.size()), kThreads>>>(d_iov_ptr.as<uint64_t>(), d_iov_size.as<uint64_t>(),
                                                               iov_ptr.size(), options.sample_width,
                                                               d_table.as<uint32_t>(), d_iov_crc.as<uint32_t>());
      KVCHAOS_RETURN_IF_ERROR(Launched("crc32 sample kernel"));
    }
    FoldKernel<<<GridFor(blocks.size()), kThreads>>>(d_iov_crc.as<uint32_t>(), d_block_first.as<uint64_t>(),
                                                     blocks.size(), d_out.as<int64_t>());
    KVCHAOS_RETURN_IF_ERROR(Launched("crc32 fold kernel"));
  } else {
    std::vector<uint64_t> chunk_ptr, iov_first_chunk{0};
    std::vector<uint32_t> chunk_len;
    for (size_t j = 0; j < iov_ptr.size(); ++j) {
      for (uint64_t off = 0; off < iov_size[j]; off += kChunkBytes) {
        chunk_ptr.push_back(iov_ptr[j] + off);
        chunk_len.push_back(static_cast<uint32_t>(std::min<uint64_t>(kChunkBytes, iov_size[j] - off)));
      }
      iov_first_chunk.push_back(chunk_ptr.size());
    }
    cudaError_t err = cudaMemcpyToSymbol(c_x2n, tables.x2n, sizeof(tables.x2n));
    if (err != cudaSuccess) return CudaError("cudaMemcpyToSymbol", err);
    DeviceBuffer d_table, d_chunk_ptr, d_chunk_len, d_chunk_crc, d_iov_first_chunk;
    KVCHAOS_RETURN_IF_ERROR(d_table.Upload(std::vector<uint64_t>(tables.crc64, tables.crc64 + 256)));
    KVCHAOS_RETURN_IF_ERROR(d_chunk_ptr.Upload(chunk_ptr));
    KVCHAOS_RETURN_IF_ERROR(d_chunk_len.Upload(chunk_len));
    KVCHAOS_RETURN_IF_ERROR(d_iov_first_chunk.Upload(iov_first_chunk));
    KVCHAOS_RETURN_IF_ERROR(d_chunk_crc.Alloc(chunk_ptr.size() * sizeof(uint64_t)));
    if (!chunk_ptr.empty()) {
      Crc64ChunkKernel<<<GridFor(chunk_ptr.size()), kThreads>>>(d_chunk_ptr.as<uint64_t>(), d_chunk_len.as<uint32_t>(),
                                                                chunk_ptr.size(), d_table.as<uint64_t>(),
                                                                d_chunk_crc.as<uint64_t>());
      KVCHAOS_RETURN_IF_ERROR(Launched("crc64 chunk kernel"));
    }
    const uint64_t full_chunk_op = cm::X8nMod64(tables.x2n, kChunkBytes);
    Crc64CombineKernel<<<GridFor(blocks.size()), kThreads>>>(
        d_iov_size.as<uint64_t>(), d_iov_first_chunk.as<uint64_t>(), d_block_first.as<uint64_t>(), blocks.size(),
        d_chunk_crc.as<uint64_t>(), d_chunk_len.as<uint32_t>(), full_chunk_op, d_table.as<uint64_t>(),
        d_out.as<int64_t>());
    KVCHAOS_RETURN_IF_ERROR(Launched("crc64 combine kernel"));
  }
  const cudaError_t err = cudaMemcpy(out.data(), d_out.as<int64_t>(), out.size() * sizeof(int64_t), cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) return CudaError("cudaMemcpy to host", err);
  return out;
}

Result<std::vector<int64_t>> ComputeHostBlocksOnDevice(const ChecksumComputer::Options& options,
                                                       std::span<const Block> blocks) {
  size_t total = 0;
  for (const Block& block : blocks) {
    for (const Iov& iov : block) total += iov.size();
  }
  DeviceBuffer data;
  KVCHAOS_RETURN_IF_ERROR(data.Alloc(total));
  std::vector<std::vector<DeviceIov>> device_blocks(blocks.size());
  size_t off = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (const Iov& iov : blocks[b]) {
      auto* dst = data.as<std::byte>() + off;
      if (!iov.empty()) {
        const cudaError_t err = cudaMemcpy(dst, iov.data(), iov.size(), cudaMemcpyHostToDevice);
        if (err != cudaSuccess) return CudaError("cudaMemcpy to device", err);
      }
      device_blocks[b].push_back(DeviceIov{dst, iov.size()});
      off += iov.size();
    }
  }
  std::vector<DeviceBlock> views(device_blocks.begin(), device_blocks.end());
  return ComputeOnDevice(options, views);
}

}  // namespace kvchaos::integrity
