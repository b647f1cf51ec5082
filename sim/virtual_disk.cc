#include "sim/virtual_disk.h"

#include "faultfs/rule_parser.h"

namespace kvchaos::sim {

VirtualDisk::VirtualDisk(int paths, bool shared, uint64_t seed)
    : runtime_(UnitTestOptions(seed)), disk_(runtime_, Rng(seed).Split("disk")), files_(disk_), aio_(runtime_, files_),
      seed_(seed) {
  runtime_.AddNode("host");
  for (int i = 0; i < paths; ++i) {
    paths_.push_back("/sim/p" + std::to_string(i));
    disk_.AddMount(paths_.back(), disk_.AddStorage(shared ? "shared" : "storage" + std::to_string(i)));
  }
}

store::PosixStoreDeps VirtualDisk::Deps() {
  store::PosixStoreDeps deps;
  deps.runtime = &runtime_;
  deps.file_ops = &files_;
  deps.aio_ops = &aio_;
  deps.probe_seed = seed_;
  return deps;
}

Status VirtualDisk::AddRule(int path, const std::string& yaml) {
  Result<faultfs::Rule> rule = faultfs::ParseRuleText(yaml, "rule");
  if (!rule.ok()) return rule.status();
  return disk_.rules(this->path(path)).Add({*rule});
}

Status VirtualDisk::RemoveRule(int path, const std::string& id) { return disk_.rules(this->path(path)).Remove(id); }

std::vector<std::string> VirtualDisk::Files(int path) {
  SimDisk::Mount* mount = disk_.mount(this->path(path));
  return mount == nullptr ? std::vector<std::string>{} : mount->storage->FilePaths();
}

}  // namespace kvchaos::sim
