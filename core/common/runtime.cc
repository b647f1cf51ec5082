#include "core/common/runtime.h"

#include "core/common/real_runtime.h"

namespace kvchaos {

Runtime& Runtime::Real() {
  static RealRuntime* runtime = new RealRuntime();  // never destroyed: threads may outlive main
  return *runtime;
}

}  // namespace kvchaos
