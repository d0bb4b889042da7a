//===- Checkpoint.cpp - save and resume the state buffer ------------------===//
#include "oflow_rt/Checkpoint.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/FileUtil.h"

#include <cstring>
#include <sstream>

namespace oflow_rt {

namespace {
const char kMagic[8] = {'O', 'F', 'L', 'O', 'W', 'C', 'K', '1'};

uint64_t readU64(const std::string &b, uint64_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

std::string u64Bytes(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// The first line where two tables differ, for the error message.
std::string firstDifference(const std::string &saved, const std::string &now) {
  std::istringstream a(saved), b(now);
  std::string la, lb;
  while (true) {
    bool ga = static_cast<bool>(std::getline(a, la));
    bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb)
      return "tables differ";
    if (!ga)
      return "the program has var '" + lb + "' that the checkpoint lacks";
    if (!gb)
      return "the checkpoint has var '" + la + "' that the program lacks";
    if (la != lb)
      return "the checkpoint has var '" + la + "' where the program has '" +
             lb + "'";
  }
}
} // namespace

uint64_t fnv1a64(const void *data, uint64_t size, uint64_t hash) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  for (uint64_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string variableTable(const Manifest &m) {
  std::string t;
  for (const VarRecord &v : m.vars) {
    t += escapeName(v.name) + " " + varKindName(v.kind) + " " +
         dtypeName(v.dtype) + " " + std::to_string(v.dims.size());
    for (int64_t d : v.dims)
      t += " " + std::to_string(d);
    t += " " + std::to_string(v.offset) + "\n";
  }
  return t;
}

std::string checkpointPath(const std::string &dir) { return dir + "/ckpt"; }

void saveCheckpoint(const std::string &dir, const Manifest &m,
                    const uint8_t *state, int64_t step) {
  makeDirectories(dir);
  std::string table = variableTable(m);
  std::string head = std::string(kMagic, 8) + u64Bytes(step) +
                     u64Bytes(table.size()) + table +
                     u64Bytes(m.stateBytes);
  uint64_t sum = fnv1a64(head.data(), head.size());
  sum = fnv1a64(state, m.stateBytes, sum);
  std::string tail = u64Bytes(sum);
  Piece pieces[] = {{head.data(), head.size()},
                    {state, static_cast<uint64_t>(m.stateBytes)},
                    {tail.data(), tail.size()}};
  writeFileAtomic(checkpointPath(dir), pieces, 3);
}

int64_t loadCheckpoint(const std::string &dir, const Manifest &m,
                       uint8_t *state) {
  std::string path = checkpointPath(dir);
  std::string b = readFile(path);
  auto bad = [&](const std::string &why) {
    return Error(path + ": " + why);
  };
  if (b.size() < 8 || std::memcmp(b.data(), kMagic, 8) != 0)
    throw bad("not an oflow checkpoint (bad magic)");
  if (b.size() < 24 + 8 + 8)
    throw bad("truncated");
  int64_t step = static_cast<int64_t>(readU64(b, 8));
  uint64_t tableBytes = readU64(b, 16);
  if (tableBytes > b.size() - 24 - 16)
    throw bad("truncated (variable table)");
  uint64_t at = 24 + tableBytes;
  uint64_t stateBytes = readU64(b, at);
  at += 8;
  if (stateBytes > b.size() - at || b.size() - at - stateBytes != 8)
    throw bad("truncated or oversized: " + std::to_string(b.size()) +
              " bytes for a state of " + std::to_string(stateBytes));
  uint64_t want = readU64(b, at + stateBytes);
  if (fnv1a64(b.data(), at + stateBytes) != want)
    throw bad("checksum mismatch (the file is corrupted)");
  if (step < 0)
    throw bad("bad step counter");
  std::string table = b.substr(24, tableBytes);
  std::string now = variableTable(m);
  if (table != now)
    throw bad("does not match this program: " + firstDifference(table, now));
  if (stateBytes != static_cast<uint64_t>(m.stateBytes))
    throw bad("state is " + std::to_string(stateBytes) +
              " bytes, this program's is " + std::to_string(m.stateBytes));
  std::memcpy(state, b.data() + at, stateBytes);
  return step;
}

} // namespace oflow_rt
