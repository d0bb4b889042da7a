//===- Checkpoint.cpp - save and resume the state, sharded ----------------===//
#include "oflow_rt/Checkpoint.h"
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/FileUtil.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <set>
#include <sstream>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>

namespace oflow_rt {

namespace {
const char kIndexMagic[8] = {'O', 'F', 'L', 'O', 'W', 'C', 'K', '2'};
const char kShardMagic[8] = {'O', 'F', 'L', 'O', 'W', 'S', 'H', '1'};
const char kLegacyMagic[8] = {'O', 'F', 'L', 'O', 'W', 'C', 'K', '1'};

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

std::string shardName(int64_t step, uint64_t nonce, int64_t rank, int64_t n) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(nonce));
  return "ckpt-" + std::to_string(step) + "-" + hex + "-r" +
         std::to_string(rank) + "of" + std::to_string(n);
}

int64_t meshRanks(const Manifest &m) { return m.meshSize(); }

// Vars (by index) the rank at `coords` stores: those it holds a piece of
// that no lower rank duplicates.
std::vector<size_t> storedVars(const Manifest &m, const std::vector<int64_t> &coords) {
  std::vector<size_t> r;
  for (size_t i = 0; i < m.vars.size(); ++i)
    if (!isReplica(m.vars[i].sbp, coords))
      r.push_back(i);
  return r;
}

struct StoredPiece {
  size_t var = 0;
  Block block;
  uint64_t at = 0; // byte offset in the shard's payload
};
struct Shard {
  std::string file;
  uint64_t bytes = 0;
  std::vector<StoredPiece> pieces;
};
struct Index {
  int64_t step = 0;
  std::string table; // the var lines, as variableTable writes them
  std::vector<size_t> ranks; // of each var's pieces
  /// A var stored flat (a `store` line): the dims its pieces index.
  std::vector<std::vector<int64_t>> stored;
  std::vector<Shard> shards;
};

Index parseIndex(const std::string &path, const std::string &b) {
  auto bad = [&](const std::string &why) { return Error(path + ": " + why); };
  if (b.size() < 24 + 8)
    throw bad("truncated");
  uint64_t textBytes = readU64(b, 16);
  if (textBytes != b.size() - 32)
    throw bad("truncated or oversized: " + std::to_string(b.size()) + " bytes");
  if (fnv1a64(b.data(), b.size() - 8) != readU64(b, b.size() - 8))
    throw bad("checksum mismatch (the file is corrupted)");
  Index ix;
  ix.step = static_cast<int64_t>(readU64(b, 8));
  if (ix.step < 0)
    throw bad("bad step counter");
  std::istringstream text(b.substr(24, textBytes));
  std::string line, kind;
  while (std::getline(text, line)) {
    std::istringstream w(line);
    kind.clear();
    w >> kind;
    if (kind == "var" && line.size() > 4) {
      ix.table += line.substr(4) + "\n";
      std::string name, k, dt;
      size_t rank = 0;
      w >> name >> k >> dt >> rank;
      if (rank > 64)
        throw bad("bad index line '" + line + "'");
      ix.ranks.push_back(rank);
      ix.stored.emplace_back();
    } else if (kind == "store" && ix.shards.empty()) {
      // "store VAR RANK DIMS...": the pieces of var #VAR index these dims
      // (its stored view), not the table's.
      size_t var = 0, rank = 0;
      w >> var >> rank;
      if (var >= ix.ranks.size() || rank == 0 || rank > 64)
        throw bad("bad index line '" + line + "'");
      std::vector<int64_t> dims(rank);
      for (int64_t &d : dims)
        if (!(w >> d) || d < 0 || d > (int64_t(1) << 40))
          throw bad("bad index line '" + line + "'");
      ix.ranks[var] = rank;
      ix.stored[var] = std::move(dims);
    } else if (kind == "shard") {
      Shard s;
      w >> s.file >> s.bytes;
      if (s.file.find('/') != std::string::npos || s.file.rfind("ckpt-", 0) != 0)
        throw bad("bad shard name '" + s.file + "'");
      ix.shards.push_back(s);
    } else if (kind == "piece" && !ix.shards.empty()) {
      StoredPiece p;
      w >> p.var;
      if (p.var >= ix.ranks.size())
        throw bad("bad index line '" + line + "'");
      p.block.offset.resize(ix.ranks[p.var]);
      p.block.size.resize(ix.ranks[p.var]);
      for (int64_t &o : p.block.offset)
        w >> o;
      for (int64_t &z : p.block.size)
        w >> z;
      // Bounded, so that sizes and byte counts cannot overflow; the
      // program's shapes bound them further when pieces are matched.
      for (size_t d = 0; d < p.block.size.size(); ++d)
        if (p.block.offset[d] < 0 || p.block.size[d] < 0 ||
            p.block.offset[d] > (int64_t(1) << 40) ||
            p.block.size[d] > (int64_t(1) << 40))
          throw bad("bad index line '" + line + "'");
      long double elements = 1;
      for (int64_t z : p.block.size)
        elements *= static_cast<long double>(z);
      if (elements > static_cast<long double>(int64_t(1) << 50))
        throw bad("bad index line '" + line + "'");
      Shard &s = ix.shards.back();
      s.pieces.push_back(p);
    } else if (kind != "mesh") {
      throw bad("bad index line '" + line + "'");
    }
    if (w.fail())
      throw bad("bad index line '" + line + "'");
  }
  return ix;
}

// Dtype sizes per var index, from the program (tables were checked equal).
void placePieces(Index &ix, const Manifest &m) {
  for (Shard &s : ix.shards) {
    uint64_t at = 0;
    for (StoredPiece &p : s.pieces) {
      if (p.var >= m.vars.size())
        throw Error("checkpoint piece of var #" + std::to_string(p.var) +
                    " that the program lacks");
      p.at = at;
      at += p.block.elements() * dtypeSize(m.vars[p.var].dtype);
    }
    if (s.bytes != at + 24)
      throw Error(s.file + ": the checkpoint index gives " + std::to_string(s.bytes) +
                  " bytes for pieces of " + std::to_string(at));
  }
}

// The single-file format of one device ("OFLOWCK1"): the whole state buffer.
int64_t readLegacy(const std::string &path, const std::string &b,
                   const Manifest &m, uint8_t *state) {
  auto bad = [&](const std::string &why) { return Error(path + ": " + why); };
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
  if (fnv1a64(b.data(), at + stateBytes) != readU64(b, at + stateBytes))
    throw bad("checksum mismatch (the file is corrupted)");
  if (!m.mesh.empty() && m.meshSize() > 1)
    throw bad("a checkpoint in the single-file format of one device; resume "
              "it on one device and save it again to reshard it");
  std::string legacyTable;
  for (const VarRecord &v : m.vars) {
    std::string line = escapeName(v.name) + " " + varKindName(v.kind) + " " +
                       dtypeName(v.dtype) + " " + std::to_string(v.shape().size());
    for (int64_t d : v.shape())
      line += " " + std::to_string(d);
    legacyTable += line + " " + std::to_string(v.offset) + "\n";
  }
  std::string table = b.substr(24, tableBytes);
  if (table != legacyTable)
    throw bad("does not match this program: " + firstDifference(table, legacyTable));
  if (stateBytes != static_cast<uint64_t>(m.stateBytes))
    throw bad("state is " + std::to_string(stateBytes) +
              " bytes, this program's is " + std::to_string(m.stateBytes));
  std::memcpy(state, b.data() + at, stateBytes);
  return step;
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
         dtypeName(v.dtype) + " " + std::to_string(v.shape().size());
    for (int64_t d : v.shape())
      t += " " + std::to_string(d);
    t += "\n";
  }
  return t;
}

std::string checkpointPath(const std::string &dir) { return dir + "/ckpt"; }

uint64_t checkpointNonce(const std::string &dir) {
  struct stat st;
  if (::stat(checkpointPath(dir).c_str(), &st) != 0)
    return 0;
  std::string b = readFile(checkpointPath(dir));
  return fnv1a64(b.data(), b.size());
}

void writeShard(const std::string &dir, const Manifest &m, const uint8_t *state,
                int64_t step, uint64_t nonce, const std::vector<int64_t> &coords) {
  std::vector<size_t> vars = storedVars(m, coords);
  if (vars.empty())
    return;
  int64_t rank = 0;
  for (size_t a = 0; a < coords.size(); ++a)
    rank = rank * m.mesh[a] + coords[a];
  std::string head = std::string(kShardMagic, 8) + u64Bytes(step);
  std::vector<oflow_rt::Piece> parts{{head.data(), head.size()}};
  uint64_t sum = fnv1a64(head.data(), head.size());
  for (size_t i : vars) {
    const VarRecord &v = m.vars[i];
    parts.push_back({state + v.offset, static_cast<uint64_t>(v.localBytes())});
    sum = fnv1a64(state + v.offset, v.localBytes(), sum);
  }
  std::string tail = u64Bytes(sum);
  parts.push_back({tail.data(), tail.size()});
  writeFileAtomic(dir + "/" + shardName(step, nonce, rank, meshRanks(m)),
                  parts.data(), static_cast<int>(parts.size()));
}

void writeCheckpointIndex(const std::string &dir, const Manifest &m,
                          int64_t step, uint64_t nonce) {
  std::string text = "mesh";
  for (int64_t d : m.mesh.empty() ? std::vector<int64_t>{1} : m.mesh)
    text += " " + std::to_string(d);
  text += "\n";
  std::string table = variableTable(m);
  std::istringstream lines(table);
  for (std::string l; std::getline(lines, l);)
    text += "var " + l + "\n";
  for (size_t i = 0; i < m.vars.size(); ++i) {
    const VarRecord &v = m.vars[i];
    if (v.view.empty())
      continue;
    text += "store " + std::to_string(i) + " " + std::to_string(v.dims.size());
    for (int64_t d : v.dims)
      text += " " + std::to_string(d);
    text += "\n";
  }
  std::set<std::string> keep;
  int64_t n = meshRanks(m);
  for (int64_t r = 0; r < n; ++r) {
    std::vector<int64_t> coords = meshCoordsOf(r, m.mesh);
    std::vector<size_t> vars = storedVars(m, coords);
    if (vars.empty())
      continue;
    uint64_t bytes = 24;
    std::string pieces;
    for (size_t i : vars) {
      const VarRecord &v = m.vars[i];
      Block b = localBlock(v.dims, v.sbp, m.mesh, coords);
      pieces += "piece " + std::to_string(i);
      for (int64_t o : b.offset)
        pieces += " " + std::to_string(o);
      for (int64_t s : b.size)
        pieces += " " + std::to_string(s);
      pieces += "\n";
      bytes += v.localBytes();
    }
    std::string file = shardName(step, nonce, r, n);
    keep.insert(file);
    text += "shard " + file + " " + std::to_string(bytes) + "\n" + pieces;
  }
  std::string head = std::string(kIndexMagic, 8) + u64Bytes(step) +
                     u64Bytes(text.size()) + text;
  head += u64Bytes(fnv1a64(head.data(), head.size()));
  writeFileAtomic(checkpointPath(dir), head.data(), head.size());
  // The new index is in place: the shards of earlier saves are garbage.
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind("ckpt-", 0) == 0 && !keep.count(name))
        ::unlink((dir + "/" + name).c_str());
    }
    ::closedir(d);
  }
}

int64_t readCheckpoint(const std::string &dir, const Manifest &m,
                       uint8_t *state, const std::vector<int64_t> &coords) {
  std::string path = checkpointPath(dir);
  std::string b = readFile(path);
  if (b.size() >= 8 && std::memcmp(b.data(), kLegacyMagic, 8) == 0)
    return readLegacy(path, b, m, state);
  if (b.size() < 8 || std::memcmp(b.data(), kIndexMagic, 8) != 0)
    throw Error(path + ": not an oflow checkpoint (bad magic)");
  Index ix = parseIndex(path, b);
  std::string now = variableTable(m);
  if (ix.table != now)
    throw Error(path + ": does not match this program: " +
                firstDifference(ix.table, now));
  placePieces(ix, m);
  // Every rank checks every shard's presence and size, so a missing or
  // truncated one is reported by each rank, not only by those that read it.
  for (const Shard &s : ix.shards) {
    struct stat st;
    std::string file = dir + "/" + s.file;
    if (::stat(file.c_str(), &st) != 0)
      throw Error(file + ": cannot open: " + errnoText() +
                  " (a shard of the checkpoint " + path + ")");
    if (static_cast<uint64_t>(st.st_size) != s.bytes)
      throw Error(file + ": truncated or oversized: " + std::to_string(st.st_size) +
                  " bytes, the checkpoint index says " + std::to_string(s.bytes));
  }
  std::vector<Block> mine;
  std::vector<int64_t> covered(m.vars.size(), 0);
  for (const VarRecord &v : m.vars)
    mine.push_back(localBlock(v.dims, v.sbp, m.mesh, coords));
  // The dims each var's pieces index: its stored view, or its shape.
  auto savedDims = [&](size_t var) -> const std::vector<int64_t> & {
    return ix.stored[var].empty() ? m.vars[var].shape() : ix.stored[var];
  };
  for (const Shard &s : ix.shards) {
    auto overlaps = [&](const StoredPiece &p) {
      const Block &q = mine[p.var];
      if (savedDims(p.var) != m.vars[p.var].dims)
        return true; // another view: compared element by element below
      for (size_t d = 0; d < q.size.size(); ++d)
        if (p.block.offset[d] >= q.offset[d] + q.size[d] ||
            q.offset[d] >= p.block.offset[d] + p.block.size[d])
          return false;
      return true;
    };
    bool needed = false;
    for (const StoredPiece &p : s.pieces)
      needed |= overlaps(p);
    if (!needed)
      continue;
    std::string file = dir + "/" + s.file;
    std::string data = readFile(file);
    if (data.size() != s.bytes || std::memcmp(data.data(), kShardMagic, 8) != 0)
      throw Error(file + ": not a shard of " + path + " (bad magic or size)");
    if (fnv1a64(data.data(), data.size() - 8) != readU64(data, data.size() - 8))
      throw Error(file + ": checksum mismatch (the file is corrupted)");
    if (static_cast<int64_t>(readU64(data, 8)) != ix.step)
      throw Error(file + ": a shard of step " + std::to_string(readU64(data, 8)) +
                  ", the index is of step " + std::to_string(ix.step));
    for (const StoredPiece &p : s.pieces) {
      const VarRecord &v = m.vars[p.var];
      const std::vector<int64_t> &saved = savedDims(p.var);
      int64_t elements = numElements(v.shape()); // a flat store pads past them
      if (saved != v.dims) {
        bool fits = numElements(saved) >= elements && p.block.offset.size() == saved.size();
        for (size_t d = 0; fits && d < saved.size(); ++d)
          fits = p.block.offset[d] + p.block.size[d] <= saved[d];
        if (!fits)
          throw Error(path + ": a piece of '" + v.name + "' outside its stored shape");
      }
      covered[p.var] += copyOverlapViews(
          dtypeSize(v.dtype), reinterpret_cast<const uint8_t *>(data.data()) + 16 + p.at,
          savedDims(p.var), p.block, state + v.offset, v.dims, mine[p.var], elements);
    }
  }
  for (size_t i = 0; i < m.vars.size(); ++i) {
    // A flat store's padding is in no checkpoint: it stays zero.
    int64_t held = blockElementsBelow(m.vars[i].dims, mine[i], numElements(m.vars[i].shape()));
    if (covered[i] != held)
      throw Error(path + ": the shards cover " + std::to_string(covered[i]) +
                  " of the " + std::to_string(held) + " elements of '" + m.vars[i].name +
                  "' this rank holds");
  }
  return ix.step;
}

/// Fault drills only (test/e2e/distributed.py, group `faults`):
/// OFLOW_TEST_SAVE_PAUSE=STEP:SECONDS stops each rank for SECONDS after its
/// shard of the save at STEP is durable, before the index names it, so that
/// a test can kill the job in the middle of a save.
static void pauseForFaultDrill(int64_t step) {
  const char *env = std::getenv("OFLOW_TEST_SAVE_PAUSE");
  long long at = 0;
  double seconds = 0;
  if (!env || std::sscanf(env, "%lld:%lf", &at, &seconds) != 2 || at != step)
    return;
  std::fprintf(stderr, "oflow: test hook: pausing %g s in the save of step %lld\n",
               seconds, at);
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

void saveCheckpoint(const std::string &dir, const Manifest &m,
                    const uint8_t *state, int64_t step) {
  makeDirectories(dir);
  uint64_t nonce = broadcastFromRoot(isRoot() ? checkpointNonce(dir) : 0);
  writeShard(dir, m, state, step, nonce, meshCoords());
  pauseForFaultDrill(step);
  // Every shard is durable before the index names it: a failing rank has
  // aborted the job by now, so the index is never written.
  barrier();
  if (isRoot())
    writeCheckpointIndex(dir, m, step, nonce);
}

int64_t loadCheckpoint(const std::string &dir, const Manifest &m,
                       uint8_t *state) {
  int64_t step = readCheckpoint(dir, m, state, meshCoords());
  // A rank that failed has aborted the job; agreeing here keeps the others
  // from starting a step before every rank is loaded.
  if (!allRanksOk(true) || maxOverRanks(step) != step)
    throw Error(checkpointPath(dir) + ": the ranks resumed at different steps");
  return step;
}

} // namespace oflow_rt
