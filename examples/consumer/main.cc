// The smallest embedding of kvchaos::core: uses the public headers and the library, prints a line.
#include <iostream>

#include "core/common/rng.h"
#include "core/common/status.h"
#include "core/common/version.h"

int main() {
  kvchaos::Rng rng(1);
  kvchaos::Status status = kvchaos::Status::NotFound("block 00ff… is not cached");
  std::cout << "kvchaos " << kvchaos::kVersion << " linked; sample status: " << status.ToString()
            << "; rng draw " << rng.Uniform(100) << "\n";
  return status.code() == kvchaos::StatusCode::kNotFound ? 0 : 1;
}
