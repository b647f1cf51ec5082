// The simulated disk (see the header).
#include "sim/sim_disk.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "faultfs/data_faults.h"
#include "faultfs/misdirected_reads.h"

namespace kvchaos::sim {
namespace {

// The parts of "a/b/c" one after another, without allocating (every open walks a path); empty
// parts (leading, doubled or trailing '/') are skipped.
class PathParts {
 public:
  explicit PathParts(std::string_view path) : rest_(path) {}
  // The next part into *part; false when there is none left.
  bool Next(std::string_view* part) {
    while (!rest_.empty()) {
      const size_t slash = rest_.find('/');
      const std::string_view head = rest_.substr(0, slash);
      rest_ = slash == std::string_view::npos ? std::string_view() : rest_.substr(slash + 1);
      if (!head.empty()) {
        *part = head;
        return true;
      }
    }
    return false;
  }

 private:
  std::string_view rest_;
};

constexpr std::string_view kFaultTag = "disk-fault";

}  // namespace

// ---- SimStorage -------------------------------------------------------------------------------

SimStorage::Node* SimStorage::Get(uint64_t inode) {
  auto it = nodes_.find(inode);
  return it == nodes_.end() ? nullptr : &it->second;
}

const SimStorage::Node* SimStorage::Get(uint64_t inode) const {
  auto it = nodes_.find(inode);
  return it == nodes_.end() ? nullptr : &it->second;
}

int SimStorage::ParentConst(std::string_view path, const Node** dir, std::string_view* name) const {
  PathParts parts(path);
  std::string_view part;
  if (!parts.Next(&part)) return EINVAL;  // the root has no parent
  const Node* node = Get(1);
  std::string_view next;
  while (parts.Next(&next)) {  // `part` is a directory on the way
    auto it = node->entries.find(part);
    if (it == node->entries.end()) return ENOENT;
    node = Get(it->second);
    if (!node->dir) return ENOTDIR;
    part = next;
  }
  *dir = node;
  *name = part;
  return 0;
}

void SimStorage::AddEntry(Node& dir, std::string_view name, uint64_t inode) {
  dir.entries.emplace(std::string(name), inode);
  dir.unsynced.insert_or_assign(std::string(name), inode);
  ++Get(inode)->links;
}

void SimStorage::EraseEntry(Node& dir, Entries::iterator it) {
  --Get(it->second)->links;
  dir.unsynced.insert_or_assign(it->first, std::nullopt);
  dir.entries.erase(it);
}

void SimStorage::Collect(uint64_t inode) {
  std::vector<uint64_t> todo{inode};
  while (!todo.empty()) {
    const uint64_t at = todo.back();
    todo.pop_back();
    auto it = nodes_.find(at);
    if (at == 1 || it == nodes_.end()) continue;
    const Node& node = it->second;
    if (node.links != 0 || node.durable_links != 0 || node.opens != 0) continue;
    // A freed directory's durable names can never be brought back (nothing durable names it).
    for (const auto& [name, child] : node.durable) {
      if (Node* c = Get(child)) {
        --c->durable_links;
        todo.push_back(child);
      }
    }
    nodes_.erase(it);
  }
}

void SimStorage::Hold(uint64_t inode) {
  if (Node* node = Get(inode)) ++node->opens;
}

void SimStorage::Release(uint64_t inode) {
  Node* node = Get(inode);
  if (node == nullptr || node->opens == 0) return;  // freed by a crash meanwhile
  --node->opens;
  Collect(inode);
}

int SimStorage::Parent(std::string_view path, Node** dir, std::string_view* name) {
  const Node* found = nullptr;
  const int err = ParentConst(path, &found, name);
  *dir = const_cast<Node*>(found);
  return err;
}

int SimStorage::Lookup(std::string_view path, uint64_t* inode, bool* is_dir) const {
  std::string_view first;
  if (!PathParts(path).Next(&first)) {
    *inode = 1;
    *is_dir = true;
    return 0;
  }
  const Node* dir = nullptr;
  std::string_view name;
  if (int err = ParentConst(path, &dir, &name)) return err;
  auto it = dir->entries.find(name);
  if (it == dir->entries.end()) return ENOENT;
  *inode = it->second;
  *is_dir = Get(it->second)->dir;
  return 0;
}

int SimStorage::CreateFile(std::string_view path, uint64_t* inode) {
  Node* dir = nullptr;
  std::string_view name;
  if (int err = Parent(path, &dir, &name)) return err;
  auto it = dir->entries.find(name);
  if (it != dir->entries.end()) {
    if (Get(it->second)->dir) return EISDIR;
    *inode = it->second;
    return 0;
  }
  *inode = next_inode_++;
  nodes_[*inode] = Node{};
  // `dir` stays valid: nodes_ is node-based, so inserting moves no Node.
  AddEntry(*dir, name, *inode);
  return 0;
}

int SimStorage::MakeDir(std::string_view path) {
  Node* dir = nullptr;
  std::string_view name;
  if (int err = Parent(path, &dir, &name)) return err;
  if (dir->entries.contains(name)) return EEXIST;
  const uint64_t inode = next_inode_++;
  nodes_[inode] = Node{.dir = true};
  AddEntry(*dir, name, inode);
  return 0;
}

int SimStorage::RemoveDir(std::string_view path) {
  Node* dir = nullptr;
  std::string_view name;
  if (int err = Parent(path, &dir, &name)) return err;
  auto it = dir->entries.find(name);
  if (it == dir->entries.end()) return ENOENT;
  Node* target = Get(it->second);
  if (!target->dir) return ENOTDIR;
  if (!target->entries.empty()) return ENOTEMPTY;
  const uint64_t inode = it->second;
  EraseEntry(*dir, it);
  Collect(inode);  // it lives on while a durable entry still names it (until a crash or sync)
  return 0;
}

int SimStorage::Unlink(std::string_view path) {
  Node* dir = nullptr;
  std::string_view name;
  if (int err = Parent(path, &dir, &name)) return err;
  auto it = dir->entries.find(name);
  if (it == dir->entries.end()) return ENOENT;
  if (Get(it->second)->dir) return EISDIR;
  const uint64_t inode = it->second;
  EraseEntry(*dir, it);
  Collect(inode);
  return 0;
}

int SimStorage::Rename(std::string_view from, std::string_view to) {
  Node* from_dir = nullptr;
  Node* to_dir = nullptr;
  std::string_view from_name;
  std::string_view to_name;
  if (int err = Parent(from, &from_dir, &from_name)) return err;
  if (int err = Parent(to, &to_dir, &to_name)) return err;
  auto it = from_dir->entries.find(from_name);
  if (it == from_dir->entries.end()) return ENOENT;
  const uint64_t inode = it->second;
  auto existing = to_dir->entries.find(to_name);
  uint64_t replaced = 0;
  if (existing != to_dir->entries.end()) {
    if (existing->second == inode) return 0;
    if (Get(existing->second)->dir != Get(inode)->dir) return Get(inode)->dir ? ENOTDIR : EISDIR;
    replaced = existing->second;
    EraseEntry(*to_dir, existing);
  }
  EraseEntry(*from_dir, it);
  AddEntry(*to_dir, to_name, inode);
  if (replaced != 0) Collect(replaced);
  return 0;
}

std::vector<uint8_t>& SimStorage::MutableData(Node& node) {
  if (!node.data) {
    node.data = std::make_shared<std::vector<uint8_t>>();
  } else if (node.data == node.synced) {
    node.data = std::make_shared<std::vector<uint8_t>>(*node.synced);
  }
  return *node.data;
}

int64_t SimStorage::Read(uint64_t inode, uint64_t offset, std::span<uint8_t> out) const {
  const Node* node = Get(inode);
  if (node == nullptr) return -ESTALE;
  if (node->dir) return -EISDIR;
  const size_t size = DataSize(*node);
  if (offset >= size) return 0;
  const size_t n = std::min<size_t>(out.size(), size - offset);
  std::memcpy(out.data(), node->data->data() + offset, n);
  return static_cast<int64_t>(n);
}

int SimStorage::Write(uint64_t inode, uint64_t offset, std::span<const uint8_t> data) {
  Node* node = Get(inode);
  if (node == nullptr) return ESTALE;
  if (node->dir) return EISDIR;
  std::vector<uint8_t>& bytes = MutableData(*node);
  if (offset > bytes.size()) bytes.resize(offset);  // a hole reads as zeros
  // Overwrite what exists, append the rest: appending does not zero the bytes it then copies
  // over (resize-then-copy showed as 4 % of a data-plane profile).
  const size_t overlap = std::min<size_t>(data.size(), bytes.size() - offset);
  if (overlap > 0) std::memcpy(bytes.data() + offset, data.data(), overlap);
  bytes.insert(bytes.end(), data.begin() + static_cast<std::ptrdiff_t>(overlap), data.end());
  return 0;
}

int SimStorage::Truncate(uint64_t inode, uint64_t size) {
  Node* node = Get(inode);
  if (node == nullptr) return ESTALE;
  if (size != DataSize(*node)) MutableData(*node).resize(size);
  return 0;
}

int SimStorage::Reserve(uint64_t inode, uint64_t offset, uint64_t length) {
  Node* node = Get(inode);
  if (node == nullptr) return ESTALE;
  if (offset + length > DataSize(*node)) MutableData(*node).resize(offset + length);
  return 0;
}

int SimStorage::Size(uint64_t inode, uint64_t* size) const {
  const Node* node = Get(inode);
  if (node == nullptr) return ESTALE;
  *size = DataSize(*node);
  return 0;
}

int SimStorage::Sync(uint64_t inode) {
  Node* node = Get(inode);
  if (node == nullptr) return ESTALE;
  if (node->dir) {
    std::vector<uint64_t> unnamed;  // inodes that lost a durable name: maybe nothing keeps them now
    for (auto& [name, now] : node->unsynced) {
      auto it = node->durable.find(name);
      if (it != node->durable.end()) {
        if (now && *now == it->second) continue;
        --Get(it->second)->durable_links;
        unnamed.push_back(it->second);
      }
      if (now) {
        ++Get(*now)->durable_links;
        if (it != node->durable.end()) {
          it->second = *now;
        } else {
          node->durable.emplace(name, *now);
        }
      } else if (it != node->durable.end()) {
        node->durable.erase(it);
      }
    }
    node->unsynced.clear();
    for (const uint64_t inode_unnamed : unnamed) Collect(inode_unnamed);
  } else {
    node->synced = node->data;  // shared, not copied: the next change copies (MutableData)
  }
  return 0;
}

void SimStorage::Crash() {
  // What a power loss leaves: from the root, the durable names only; files hold their synced bytes.
  std::unordered_map<uint64_t, Node> kept;
  std::vector<uint64_t> todo{1};
  while (!todo.empty()) {
    const uint64_t inode = todo.back();
    todo.pop_back();
    if (kept.contains(inode)) continue;  // two durable names of one file
    Node& node = nodes_[inode];
    Node after;
    after.dir = node.dir;
    after.opens = node.opens;  // a durable file open at the crash stays open
    if (node.dir) {
      after.entries = node.durable;
      after.durable = node.durable;
      for (const auto& [name, child] : node.durable) {
        if (nodes_.contains(child)) todo.push_back(child);
      }
    } else {
      after.data = node.synced;  // shared (see Bytes)
      after.synced = std::move(node.synced);
    }
    kept.emplace(inode, std::move(after));
  }
  // A durable name whose file was freed meanwhile cannot exist; drop such names.
  for (auto& [inode, node] : kept) {
    std::erase_if(node.entries, [&](const auto& e) { return !kept.contains(e.second); });
    node.durable = node.entries;
  }
  // Every name left is both the name now and the durable one.
  for (auto& [inode, node] : kept) {
    for (const auto& [name, child] : node.entries) {
      Node& c = kept.at(child);
      ++c.links;
      ++c.durable_links;
    }
  }
  nodes_ = std::move(kept);
}

size_t SimStorage::file_count() const {
  return static_cast<size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const auto& n) { return !n.second.dir; }));
}

std::vector<faultfs::FileEntry> SimStorage::FileEntries() const {
  std::vector<faultfs::FileEntry> out;
  for (std::string& path : FilePaths()) {
    uint64_t inode = 0;
    bool is_dir = false;
    uint64_t size = 0;
    if (Lookup(path, &inode, &is_dir) != 0 || Size(inode, &size) != 0) continue;
    out.push_back({std::move(path), size});
  }
  return out;
}

std::vector<std::string> SimStorage::FilePaths() const {
  std::vector<std::string> out;
  // Names sorted in each directory, so a depth-first walk lists paths in order (the hash's order
  // must not show: a misdirected read picks its source from this list).
  std::function<void(const Node&, const std::string&)> walk = [&](const Node& dir, const std::string& prefix) {
    std::vector<std::pair<std::string_view, uint64_t>> names(dir.entries.begin(), dir.entries.end());
    std::sort(names.begin(), names.end());
    for (const auto& [name, inode] : names) {
      const Node* node = Get(inode);
      if (node == nullptr) continue;
      if (node->dir) {
        walk(*node, prefix + std::string(name) + "/");
      } else {
        out.push_back(prefix + std::string(name));
      }
    }
  };
  walk(*Get(1), "");
  return out;
}

// ---- SimDisk ----------------------------------------------------------------------------------

SimDisk::SimDisk(SimRuntime& runtime, Rng rng, DiskLatency latency)
    : runtime_(runtime), rng_(rng), latency_(latency) {}

SimStorage& SimDisk::AddStorage(std::string name) {
  auto& slot = storages_[name];
  if (!slot) slot = std::make_unique<SimStorage>(storages_.size());
  return *slot;
}

void SimDisk::AddMount(std::string path, SimStorage& storage) {
  auto mount = std::make_unique<Mount>();
  mount->path = std::move(path);
  mount->storage = &storage;
  // Each mount's rule streams differ (the seed and the mount), as separate faultfs mounts' do.
  mount->rules = std::make_unique<faultfs::RuleEngine>(rng_.Split(mount->path).seed(), nullptr, runtime_);
  mounts_.push_back(std::move(mount));
}

SimDisk::Mount* SimDisk::mount(std::string_view path) {
  for (auto& m : mounts_) {
    if (m->path == path) return m.get();
  }
  return nullptr;
}

faultfs::RuleEngine& SimDisk::rules(std::string_view mount_path) {
  Mount* m = mount(mount_path);
  if (m == nullptr) throw std::out_of_range("no simulated mount '" + std::string(mount_path) + "'");
  return *m->rules;
}

SimStorage* SimDisk::storage(std::string_view name) {
  auto it = storages_.find(name);
  return it == storages_.end() ? nullptr : it->second.get();
}

std::vector<std::string> SimDisk::mount_paths() const {
  std::vector<std::string> out;
  for (const auto& m : mounts_) out.push_back(m->path);
  return out;
}

SimDisk::Mount* SimDisk::Resolve(std::string_view path, std::string* inside) {
  for (auto& m : mounts_) {
    if (path == m->path) {
      inside->clear();
      return m.get();
    }
    if (path.size() > m->path.size() && path.starts_with(m->path) && path[m->path.size()] == '/') {
      *inside = std::string(path.substr(m->path.size() + 1));
      return m.get();
    }
  }
  return nullptr;
}

Duration SimDisk::DrawLatency(int64_t ns) {
  const int64_t spread = static_cast<int64_t>(static_cast<double>(ns) * latency_.jitter);
  return Duration(ns + (spread > 0 ? rng_.UniformInt(0, spread) : 0));
}

// ---- SimFileOps -------------------------------------------------------------------------------

int SimFileOps::Fail(int err) {
  errno = err;
  return -1;
}

int SimFileOps::Enter(SimDisk::Mount& mount, faultfs::Op op, std::string_view inside, uint64_t offset, uint64_t size,
                      int64_t latency_ns, std::optional<faultfs::Hit>* action) {
  ++mount.calls;
  faultfs::RuleEngine& rules = *mount.rules;
  if (rules.Active()) {
    const faultfs::CallInfo call{op, inside, offset, size};
    faultfs::CallPlan plan = rules.Plan(call);
    SimRuntime& rt = disk_.runtime();
    for (const faultfs::Hit& hit : plan.delays) {
      rt.trace().Event(rt.true_now(), rt.current_node(), 0, kFaultTag, static_cast<int64_t>(op),
                       static_cast<int64_t>(hit.state->rule.action), hit.state->rule.id);
    }
    rules.RunDelays(plan, call);
    if (plan.action) {
      const faultfs::Rule& rule = plan.action->state->rule;
      rt.trace().Event(rt.true_now(), rt.current_node(), 0, kFaultTag, static_cast<int64_t>(op),
                       static_cast<int64_t>(rule.action), rule.id);
      if (rule.action == faultfs::ActionKind::kErrno) return rule.err;
      if (action != nullptr) *action = std::move(plan.action);
    }
  }
  disk_.runtime().SleepFor(disk_.DrawLatency(latency_ns));
  return 0;
}

int SimFileOps::EnterPath(const std::string& path, faultfs::Op op, SimDisk::Mount** mount, std::string* inside) {
  *mount = disk_.Resolve(path, inside);
  if (*mount == nullptr) return ENOENT;
  return Enter(**mount, op, *inside, 0, 0, disk_.latency().metadata_ns, nullptr);
}

SimFileOps::OpenFile* SimFileOps::File(int fd) {
  auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : &it->second;
}

int SimFileOps::Open(const std::string& path, int flags, mode_t mode) {
  (void)mode;
  std::string inside;
  SimDisk::Mount* mount = disk_.Resolve(path, &inside);
  if (mount == nullptr) return Fail(ENOENT);
  SimStorage& storage = *mount->storage;
  uint64_t inode = 0;
  bool is_dir = false;
  const int found = storage.Lookup(inside, &inode, &is_dir);
  const bool creates = found == ENOENT && (flags & O_CREAT) != 0;
  if (found != 0 && !creates) {
    // The lookup fails where it would on a real mount, after the call's time.
    if (int err = Enter(*mount, faultfs::Op::kLookup, inside, 0, 0, disk_.latency().metadata_ns, nullptr)) return Fail(err);
    return Fail(found);
  }
  const faultfs::Op op = creates ? faultfs::Op::kCreate : is_dir ? faultfs::Op::kOpendir : faultfs::Op::kOpen;
  // The inode found is the one opened, even if its name goes while the call takes its time.
  if (!creates) storage.Hold(inode);
  const auto fail = [&](int err) {
    if (!creates) storage.Release(inode);
    return Fail(err);
  };
  if (int err = Enter(*mount, op, inside, 0, 0, disk_.latency().metadata_ns, nullptr)) return fail(err);
  if (creates) {
    if (int err = storage.CreateFile(inside, &inode)) return Fail(err);
    storage.Hold(inode);
  } else if ((flags & O_EXCL) != 0 && (flags & O_CREAT) != 0) {
    return fail(EEXIST);
  }
  if ((flags & O_TRUNC) != 0 && !is_dir) storage.Truncate(inode, 0);
  const int fd = next_fd_++;
  fds_[fd] = OpenFile{mount, inside, inode, is_dir, (flags & O_DIRECT) != 0};
  return fd;
}

ssize_t SimFileOps::WriteAt(int fd, std::span<const uint8_t> data, off_t offset) {
  OpenFile* f = File(fd);
  if (f == nullptr) return Fail(EBADF);
  std::optional<faultfs::Hit> action;
  const DiskLatency& l = disk_.latency();
  const int64_t ns = l.io_base_ns + static_cast<int64_t>(static_cast<double>(data.size()) / l.bytes_per_ns);
  if (int err = Enter(*f->mount, faultfs::Op::kWrite, f->inside, static_cast<uint64_t>(offset), data.size(), ns, &action)) {
    return Fail(err);
  }
  f = File(fd);  // the table may have changed while the call slept
  if (f == nullptr) return Fail(EBADF);
  SimStorage& storage = *f->mount->storage;
  if (!action) {
    if (int err = storage.Write(f->inode, static_cast<uint64_t>(offset), data)) return Fail(err);
    if (!f->mount->bad_ranges.empty()) f->mount->bad_ranges.Heal(f->inode, static_cast<uint64_t>(offset), data.size());
    return static_cast<ssize_t>(data.size());
  }
  std::vector<uint8_t> copy(data.begin(), data.end());
  const faultfs::WriteDamage d = faultfs::DamageWrite(*action, copy, static_cast<uint64_t>(offset), f->direct);
  if (d.to_write > 0) {
    if (int err = storage.Write(f->inode, d.target, std::span<const uint8_t>(copy.data(), d.to_write))) return Fail(err);
    if (d.target == static_cast<uint64_t>(offset)) f->mount->bad_ranges.Heal(f->inode, d.target, d.to_write);
  }
  if (d.bad_length > 0) f->mount->bad_ranges.Mark(f->inode, static_cast<uint64_t>(offset), d.bad_length, action->state->rule.id);
  if (d.err != 0) return Fail(d.err);
  return static_cast<ssize_t>(d.reply);
}

ssize_t SimFileOps::ReadAt(int fd, std::span<uint8_t> out, off_t offset) {
  OpenFile* f = File(fd);
  if (f == nullptr) return Fail(EBADF);
  std::optional<faultfs::Hit> action;
  const DiskLatency& l = disk_.latency();
  const int64_t ns = l.io_base_ns + static_cast<int64_t>(static_cast<double>(out.size()) / l.bytes_per_ns);
  if (int err = Enter(*f->mount, faultfs::Op::kRead, f->inside, static_cast<uint64_t>(offset), out.size(), ns, &action)) {
    return Fail(err);
  }
  f = File(fd);
  if (f == nullptr) return Fail(EBADF);
  if (!f->mount->bad_ranges.empty() && f->mount->bad_ranges.Overlapping(f->inode, static_cast<uint64_t>(offset), out.size())) {
    return Fail(EIO);
  }
  if (action && action->state->rule.action == faultfs::ActionKind::kBadRange) {
    const faultfs::Rule& rule = action->state->rule;
    f->mount->bad_ranges.Mark(f->inode, static_cast<uint64_t>(offset), rule.length ? rule.length : out.size(), rule.id);
    return Fail(EIO);
  }
  if (action && action->state->rule.action == faultfs::ActionKind::kMisdirectedRead) {
    return MisdirectedRead(*f, out, static_cast<uint64_t>(offset), *action);
  }
  const int64_t n = f->mount->storage->Read(f->inode, static_cast<uint64_t>(offset), out);
  if (n < 0) return Fail(static_cast<int>(-n));
  if (!action) return static_cast<ssize_t>(n);
  return static_cast<ssize_t>(faultfs::DamageRead(*action, out.first(static_cast<size_t>(n))).returned);
}

ssize_t SimFileOps::MisdirectedRead(const OpenFile& f, std::span<uint8_t> out, uint64_t offset, faultfs::Hit& hit) {
  SimStorage& storage = *f.mount->storage;
  uint64_t own_size = 0;
  if (int err = storage.Size(f.inode, &own_size)) return Fail(err);
  const uint64_t needed_end = std::min<uint64_t>(offset + out.size(), std::max(own_size, offset));
  const std::optional<std::string> source =
      faultfs::PickMisdirectSource(hit.state->rule, f.inside, needed_end, storage.FileEntries(), hit.rng);
  uint64_t inode = f.inode;
  bool is_dir = false;
  if (source && storage.Lookup(*source, &inode, &is_dir) != 0) inode = f.inode;
  SimRuntime& rt = disk_.runtime();
  // The decision is an event of its own: which file the bytes came from is what a replay must show.
  rt.trace().Event(rt.true_now(), rt.current_node(), 0, "disk-misdirect", static_cast<int64_t>(offset),
                   static_cast<int64_t>(out.size()), source ? std::string_view(*source) : std::string_view("(own)"));
  if (source) ++f.mount->misdirected_reads;
  const int64_t n = storage.Read(inode, offset, out);
  if (n < 0) return Fail(static_cast<int>(-n));
  return static_cast<ssize_t>(n);
}

ssize_t SimFileOps::Pwrite(int fd, const void* buf, size_t len, off_t offset) {
  return WriteAt(fd, std::span<const uint8_t>(static_cast<const uint8_t*>(buf), len), offset);
}

ssize_t SimFileOps::Pread(int fd, void* buf, size_t len, off_t offset) {
  return ReadAt(fd, std::span<uint8_t>(static_cast<uint8_t*>(buf), len), offset);
}

ssize_t SimFileOps::Pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  // Gathered before the call's latency, as before: what a caller changes in its buffers meanwhile
  // is not written.
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  std::vector<uint8_t> gathered;
  gathered.reserve(total);
  for (int i = 0; i < iovcnt; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    gathered.insert(gathered.end(), p, p + iov[i].iov_len);
  }
  return WriteAt(fd, gathered, offset);
}

ssize_t SimFileOps::Preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  std::vector<uint8_t> buffer(total);
  const ssize_t n = ReadAt(fd, buffer, offset);
  if (n < 0) return n;
  size_t done = 0;
  for (int i = 0; i < iovcnt && done < static_cast<size_t>(n); ++i) {
    const size_t part = std::min(iov[i].iov_len, static_cast<size_t>(n) - done);
    std::memcpy(iov[i].iov_base, buffer.data() + done, part);
    done += part;
  }
  return n;
}

int SimFileOps::Fsync(int fd) {
  OpenFile* f = File(fd);
  if (f == nullptr) return Fail(EBADF);
  const faultfs::Op op = f->dir ? faultfs::Op::kFsyncdir : faultfs::Op::kFsync;
  if (int err = Enter(*f->mount, op, f->inside, 0, 0, disk_.latency().sync_ns, nullptr)) return Fail(err);
  f = File(fd);
  if (f == nullptr) return Fail(EBADF);
  if (int err = f->mount->storage->Sync(f->inode)) return Fail(err);
  return 0;
}

int SimFileOps::Fallocate(int fd, off_t offset, off_t len) {
  OpenFile* f = File(fd);
  if (f == nullptr) return Fail(EBADF);
  if (int err = Enter(*f->mount, faultfs::Op::kFallocate, f->inside, static_cast<uint64_t>(offset),
                      static_cast<uint64_t>(len), disk_.latency().metadata_ns, nullptr)) {
    return Fail(err);
  }
  f = File(fd);
  if (f == nullptr) return Fail(EBADF);
  if (int err = f->mount->storage->Reserve(f->inode, static_cast<uint64_t>(offset), static_cast<uint64_t>(len))) {
    return Fail(err);
  }
  return 0;
}

int SimFileOps::Close(int fd) {
  OpenFile* f = File(fd);
  if (f == nullptr) return Fail(EBADF);
  // The descriptor is gone whatever the flush answers, as close(2) promises.
  const OpenFile closed = *f;
  fds_.erase(fd);
  closed.mount->storage->Release(closed.inode);
  if (int err = Enter(*closed.mount, faultfs::Op::kFlush, closed.inside, 0, 0, disk_.latency().metadata_ns, nullptr)) {
    return Fail(err);
  }
  return 0;
}

int SimFileOps::Unlink(const std::string& path) {
  SimDisk::Mount* mount = nullptr;
  std::string inside;
  if (int err = EnterPath(path, faultfs::Op::kUnlink, &mount, &inside)) return Fail(err);
  if (int err = mount->storage->Unlink(inside)) return Fail(err);
  return 0;
}

int SimFileOps::Rename(const std::string& from, const std::string& to) {
  SimDisk::Mount* mount = nullptr;
  std::string inside;
  if (int err = EnterPath(from, faultfs::Op::kRename, &mount, &inside)) return Fail(err);
  std::string to_inside;
  SimDisk::Mount* to_mount = disk_.Resolve(to, &to_inside);
  if (to_mount == nullptr || to_mount->storage != mount->storage) return Fail(EXDEV);
  if (int err = mount->storage->Rename(inside, to_inside)) return Fail(err);
  return 0;
}

int SimFileOps::Mkdir(const std::string& path, mode_t mode) {
  (void)mode;
  SimDisk::Mount* mount = nullptr;
  std::string inside;
  if (int err = EnterPath(path, faultfs::Op::kMkdir, &mount, &inside)) return Fail(err);
  if (int err = mount->storage->MakeDir(inside)) return Fail(err);
  return 0;
}

int SimFileOps::Rmdir(const std::string& path) {
  SimDisk::Mount* mount = nullptr;
  std::string inside;
  if (int err = EnterPath(path, faultfs::Op::kRmdir, &mount, &inside)) return Fail(err);
  if (int err = mount->storage->RemoveDir(inside)) return Fail(err);
  return 0;
}

int SimFileOps::Stat(const std::string& path, bool* is_dir, off_t* size) {
  SimDisk::Mount* mount = nullptr;
  std::string inside;
  if (int err = EnterPath(path, faultfs::Op::kGetattr, &mount, &inside)) return Fail(err);
  uint64_t inode = 0;
  bool dir = false;
  if (int err = mount->storage->Lookup(inside, &inode, &dir)) return Fail(err);
  uint64_t bytes = 0;
  if (!dir) mount->storage->Size(inode, &bytes);
  if (is_dir != nullptr) *is_dir = dir;
  if (size != nullptr) *size = static_cast<off_t>(bytes);
  return 0;
}

int SimFileOps::FileId(const std::string& path, uint64_t* device, uint64_t* inode) {
  SimDisk::Mount* mount = nullptr;
  std::string inside;
  if (int err = EnterPath(path, faultfs::Op::kGetattr, &mount, &inside)) return Fail(err);
  bool is_dir = false;
  if (int err = mount->storage->Lookup(inside, inode, &is_dir)) return Fail(err);
  *device = mount->storage->device();
  return 0;
}

// ---- SimAioOps --------------------------------------------------------------------------------

struct SimAioOps::Context {
  explicit Context(SimRuntime& runtime) : mu(runtime), cv(runtime) {}
  int host = -1;
  int max_events = 0;
  Mutex mu;
  CondVar cv;  // a submission for the kernel threads, or a completion for io_getevents
  std::deque<struct iocb*> submitted;
  std::deque<struct io_event> completed;
  std::vector<Thread> kernel;
  int idle = 0;
  int running = 0;  // iocbs a kernel thread holds
  bool stopping = false;
};

SimAioOps::SimAioOps(SimRuntime& runtime, SimFileOps& files) : runtime_(runtime), files_(files) {}

SimAioOps::~SimAioOps() {
  for (auto& [id, context] : contexts_) {
    (void)id;
    {
      MutexLock lock(context->mu);
      context->stopping = true;
      context->cv.NotifyAll();
    }
    for (Thread& t : context->kernel) t.Join();
  }
}

SimAioOps::Context* SimAioOps::Find(io_context_t ctx) {
  auto it = contexts_.find(reinterpret_cast<uintptr_t>(ctx));
  return it == contexts_.end() ? nullptr : it->second.get();
}

int SimAioOps::Setup(int max_events, io_context_t* ctx) {
  if (max_events <= 0) return -EINVAL;
  const uint64_t id = next_context_++;
  auto context = std::make_unique<Context>(runtime_);
  context->host = runtime_.current_node();
  context->max_events = max_events;
  contexts_.emplace(id, std::move(context));
  *ctx = reinterpret_cast<io_context_t>(static_cast<uintptr_t>(id));
  return 0;
}

int SimAioOps::Submit(io_context_t ctx, long count, struct iocb** iocbs) {
  Context* context = Find(ctx);
  if (context == nullptr) return -EINVAL;
  MutexLock lock(context->mu);
  if (context->stopping) return -EINVAL;
  for (long i = 0; i < count; ++i) {
    const short op = iocbs[i]->aio_lio_opcode;
    if (op != IO_CMD_PREADV && op != IO_CMD_PWRITEV && op != IO_CMD_FDSYNC && op != IO_CMD_FSYNC) {
      return i > 0 ? static_cast<int>(i) : -EINVAL;
    }
    context->submitted.push_back(iocbs[i]);
  }
  // One kernel thread per iocb in flight, up to the context's events: a hung mount holds its own.
  const int wanted = std::min<int>(static_cast<int>(context->submitted.size()) + context->running, context->max_events);
  while (static_cast<int>(context->kernel.size()) < wanted && context->idle < static_cast<int>(context->submitted.size())) {
    context->kernel.push_back(
        runtime_.SpawnOn(context->host, "sim_kaio_" + std::to_string(context->kernel.size()), [this, context] {
          KernelLoop(context);
        }));
    ++context->idle;
  }
  context->cv.NotifyAll();
  return static_cast<int>(count);
}

void SimAioOps::KernelLoop(Context* context) {
  for (;;) {
    struct iocb* cb = nullptr;
    {
      MutexLock lock(context->mu);
      while (context->submitted.empty() && !context->stopping) context->cv.Wait(context->mu);
      if (context->submitted.empty()) return;
      cb = context->submitted.front();
      context->submitted.pop_front();
      --context->idle;
      ++context->running;
    }
    const int fd = cb->aio_fildes;
    const auto* iov = static_cast<const struct iovec*>(cb->u.c.buf);
    const int iovcnt = static_cast<int>(cb->u.c.nbytes);
    const off_t offset = static_cast<off_t>(cb->u.c.offset);
    long res = 0;
    if (cb->aio_lio_opcode == IO_CMD_PREADV) {
      res = files_.Preadv(fd, iov, iovcnt, offset);
    } else if (cb->aio_lio_opcode == IO_CMD_PWRITEV) {
      res = files_.Pwritev(fd, iov, iovcnt, offset);
    } else {
      res = files_.Fsync(fd);
    }
    if (res < 0) res = -errno;
    MutexLock lock(context->mu);
    --context->running;
    ++context->idle;
    struct io_event event {};
    event.data = cb->data;
    event.obj = cb;
    event.res = static_cast<unsigned long>(res);
    context->completed.push_back(event);
    context->cv.NotifyAll();
  }
}

int SimAioOps::GetEvents(io_context_t ctx, long min_nr, long max_nr, struct io_event* events, struct timespec* timeout) {
  Context* context = Find(ctx);
  if (context == nullptr) return -EINVAL;
  std::optional<MonoTime> deadline;
  if (timeout != nullptr) deadline = runtime_.Now() + std::chrono::seconds(timeout->tv_sec) + Duration(timeout->tv_nsec);
  MutexLock lock(context->mu);
  while (static_cast<long>(context->completed.size()) < min_nr) {
    if (!deadline) {
      context->cv.Wait(context->mu);
    } else if (!context->cv.WaitUntil(context->mu, *deadline)) {
      break;
    }
  }
  const long n = std::min<long>(max_nr, static_cast<long>(context->completed.size()));
  for (long i = 0; i < n; ++i) {
    events[i] = context->completed.front();
    context->completed.pop_front();
  }
  return static_cast<int>(n);
}

int SimAioOps::Destroy(io_context_t ctx) {
  Context* context = Find(ctx);
  if (context == nullptr) return -EINVAL;
  {
    MutexLock lock(context->mu);
    context->stopping = true;
    context->cv.NotifyAll();
  }
  for (Thread& t : context->kernel) t.Join();
  contexts_.erase(reinterpret_cast<uintptr_t>(ctx));
  return 0;
}

}  // namespace kvchaos::sim
