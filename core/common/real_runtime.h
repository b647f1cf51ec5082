// RealRuntime: kvchaos::Runtime on the operating system (std::chrono clocks, std::thread,
// std::mutex). Never buggifies. Use Runtime::Real() for the process-wide instance.
#pragma once

#include "core/common/runtime.h"

namespace kvchaos {

class RealRuntime final : public Runtime {
 public:
  MonoTime Now() override;
  WallTime WallNow() override;
  void SleepUntil(MonoTime deadline) override;
  Thread Spawn(std::string name, std::function<void()> fn) override;
  std::unique_ptr<MutexImpl> NewMutex() override;
  std::unique_ptr<CondVarImpl> NewCondVar() override;
};

}  // namespace kvchaos
