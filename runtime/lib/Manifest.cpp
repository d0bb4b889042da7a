//===- Manifest.cpp - the program's self-description ----------------------===//
#include "oflow_rt/Manifest.h"
#include "oflow_rt/Error.h"

#include <cerrno>
#include <cstdlib>
#include <set>
#include <sstream>

namespace oflow_rt {

namespace {
bool plainNameByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
         c == '/' || c == '-';
}

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

// Reads one line's tokens in order; every failure names the line.
class LineReader {
public:
  LineReader(int lineNo, const std::string &line) : lineNo(lineNo) {
    size_t p = 0;
    while (p <= line.size()) {
      size_t q = line.find(' ', p);
      if (q == std::string::npos)
        q = line.size();
      tokens.push_back(line.substr(p, q - p));
      p = q + 1;
    }
  }

  Error error(const std::string &why) const {
    return Error("manifest line " + std::to_string(lineNo) + ": " + why);
  }
  bool done() const { return pos == tokens.size(); }
  const std::string &word(const char *what) {
    if (done())
      throw error(std::string("missing ") + what);
    if (tokens[pos].empty())
      throw error("empty token (names and values are separated by one space)");
    return tokens[pos++];
  }
  int64_t integer(const char *what, int64_t lo = INT64_MIN) {
    const std::string &w = word(what);
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(w.c_str(), &end, 10);
    if (errno || *end || w.empty() || v < lo)
      throw error(std::string("bad ") + what + " '" + w + "'");
    return v;
  }
  double number(const char *what) {
    const std::string &w = word(what);
    errno = 0;
    char *end = nullptr;
    double v = std::strtod(w.c_str(), &end);
    if (errno || *end)
      throw error(std::string("bad ") + what + " '" + w + "'");
    return v;
  }
  std::string name() {
    const std::string &w = word("name");
    auto n = unescapeName(w);
    if (!n || n->empty())
      throw error("bad name escape in '" + w + "'");
    return *n;
  }
  DType dtype() {
    const std::string &w = word("dtype");
    auto t = parseDType(w);
    if (!t)
      throw error("unknown dtype '" + w + "'");
    return *t;
  }
  std::vector<int64_t> dims() {
    int64_t rank = integer("rank", 0);
    if (rank > 16)
      throw error("rank " + std::to_string(rank) + " is too large");
    std::vector<int64_t> d;
    long double elements = 1; // bounded, so byte counts cannot overflow
    for (int64_t i = 0; i < rank; ++i) {
      d.push_back(integer("dimension", 0));
      elements *= static_cast<long double>(d.back());
    }
    if (elements > static_cast<long double>(int64_t(1) << 56))
      throw error("a tensor of more than 2^56 elements");
    return d;
  }
  /// The optional trailing `sbp=...` token; each entry S<i> or B.
  Sbp sbp() {
    if (done() || tokens[pos].rfind("sbp=", 0) != 0)
      return {};
    std::string w = tokens[pos++];
    Sbp r;
    std::istringstream entries(w.substr(4));
    std::string e;
    while (std::getline(entries, e, ',')) {
      if (e == "B") {
        r.push_back(-1);
        continue;
      }
      char *end = nullptr;
      long axis = e.size() > 1 && e[0] == 'S' ? std::strtol(e.c_str() + 1, &end, 10) : -1;
      if (axis < 0 || *end)
        throw error("bad sbp entry '" + e + "' in '" + w + "' (want S<axis> or B" +
                    (e[0] == 'P' ? "; partial values never reach the runtime)" : ")"));
      r.push_back(static_cast<int>(axis));
    }
    if (r.empty() || w.back() == ',')
      throw error("bad '" + w + "'");
    return r;
  }
  /// The optional trailing `view=AxBxC` token: at most as many elements as
  /// `dims` (the rest is padding).
  std::vector<int64_t> view(const std::vector<int64_t> &dims) {
    if (done() || tokens[pos].rfind("view=", 0) != 0)
      return {};
    std::string w = tokens[pos++];
    std::vector<int64_t> shape;
    std::istringstream parts(w.substr(5));
    for (std::string part; std::getline(parts, part, 'x');) {
      char *end = nullptr;
      errno = 0;
      long long d = std::strtoll(part.c_str(), &end, 10);
      if (part.empty() || errno || *end || d < 0 || shape.size() == 16)
        throw error("bad '" + w + "'");
      shape.push_back(d);
    }
    if (shape.empty() || numElements(shape) > numElements(dims))
      throw error("'" + w + "' has more elements than the tensor's " +
                  std::to_string(numElements(dims)));
    return shape;
  }
  /// The optional trailing `init=KIND:a:b:seed` token of a var.
  std::optional<InitRecipe> recipe() {
    if (done() || tokens[pos].rfind("init=", 0) != 0)
      return std::nullopt;
    std::string w = tokens[pos++];
    auto r = parseInitRecipe(w.substr(5));
    if (!r)
      throw error("bad initializer recipe '" + w +
                  "' (want init=KIND:a:b:seed, KIND one of zeros, ones, constant, "
                  "normal, uniform, truncated_normal)");
    return r;
  }
  void end() {
    if (!done())
      throw error("unexpected '" + tokens[pos] + "'");
  }

  int lineNo;

private:
  std::vector<std::string> tokens;
  size_t pos = 0;
};

// Fills s.localDims from its sbp on `mesh`; errors name the line.
void layOut(const LineReader &r, TensorSlot &s, const std::vector<int64_t> &mesh) {
  if (!s.sbp.empty()) {
    if (mesh.empty())
      throw r.error("'" + s.name + "' has sbp=" + sbpText(s.sbp) +
                    " but the manifest has no mesh record");
    if (s.sbp.size() != mesh.size())
      throw r.error("'" + s.name + "' has sbp=" + sbpText(s.sbp) + " with " +
                    std::to_string(s.sbp.size()) + " entries for a mesh of " +
                    std::to_string(mesh.size()) + " axes");
    std::vector<int64_t> pieces(s.dims.size(), 1);
    for (size_t a = 0; a < mesh.size(); ++a) {
      if (s.sbp[a] < 0)
        continue;
      if (static_cast<size_t>(s.sbp[a]) >= s.dims.size())
        throw r.error("'" + s.name + "' of rank " + std::to_string(s.dims.size()) +
                      " is split along axis " + std::to_string(s.sbp[a]) +
                      " (sbp=" + sbpText(s.sbp) + ")");
      pieces[s.sbp[a]] *= mesh[a];
    }
    for (size_t d = 0; d < s.dims.size(); ++d)
      if (s.dims[d] % pieces[d] != 0)
        throw r.error("'" + s.name + "' dim " + std::to_string(d) + " (" +
                      std::to_string(s.dims[d]) + ") does not divide into " +
                      std::to_string(pieces[d]) + " pieces (sbp=" +
                      sbpText(s.sbp) + ")");
  }
  s.localDims = localDims(s.dims, s.sbp, mesh);
}

void checkSlot(const LineReader &r, const TensorSlot &s, int64_t bufferBytes,
               const char *buffer) {
  // 64 bytes, or the power of two that holds a smaller piece (the
  // compiler's oflow-bind-program-interface).
  int64_t align = 64;
  while (align / 2 >= std::max<int64_t>(s.localBytes(), dtypeSize(s.dtype)))
    align /= 2;
  if (s.offset % align != 0)
    throw r.error("offset " + std::to_string(s.offset) + " of '" + s.name +
                  "' is not a multiple of " + std::to_string(align));
  if (s.offset < 0 || s.offset + s.localBytes() > bufferBytes)
    throw r.error("'" + s.name + "' (" + std::to_string(s.localBytes()) +
                  " bytes at " + std::to_string(s.offset) + ") lies outside " +
                  buffer + " (" + std::to_string(bufferBytes) + " bytes)");
}
} // namespace

std::string escapeName(const std::string &name) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    if (plainNameByte(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::optional<std::string> unescapeName(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size())
        return std::nullopt;
      int hi = hexValue(text[i + 1]), lo = hexValue(text[i + 2]);
      if (hi < 0 || lo < 0)
        return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (plainNameByte(c)) {
      out += static_cast<char>(c);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

const char *varKindName(VarKind k) {
  switch (k) {
  case VarKind::Param: return "param";
  case VarKind::Buffer: return "buffer";
  case VarKind::Optimizer: return "optimizer";
  case VarKind::Constant: return "constant";
  }
  return "?";
}

int64_t Manifest::meshSize() const {
  int64_t n = 1;
  for (int64_t d : mesh)
    n *= d;
  return n;
}

std::string Manifest::meshText() const {
  std::string shape;
  for (int64_t d : mesh)
    shape += (shape.empty() ? "" : "x") + std::to_string(d);
  std::string n = std::to_string(meshSize());
  return mesh.size() > 1 ? n + " (" + shape + ")" : n;
}

bool Manifest::hasEntry(const std::string &e) const {
  for (const std::string &x : entries)
    if (x == e)
      return true;
  return false;
}

const InputRecord *Manifest::findInput(const std::string &name) const {
  for (const InputRecord &i : inputs)
    if (i.name == name)
      return &i;
  return nullptr;
}

const ScalarRecord *Manifest::findScalar(const std::string &name) const {
  for (const ScalarRecord &s : scalars)
    if (s.name == name)
      return &s;
  return nullptr;
}

const OutputRecord *Manifest::findOutput(const std::string &entry,
                                         const std::string &name) const {
  for (const OutputRecord &o : outputs)
    if (o.entry == entry && o.name == name)
      return &o;
  return nullptr;
}

std::vector<const OutputRecord *>
Manifest::outputsOf(const std::string &entry) const {
  std::vector<const OutputRecord *> r;
  for (const OutputRecord &o : outputs)
    if (o.entry == entry)
      r.push_back(&o);
  return r;
}

std::string Manifest::inputNames() const {
  std::string s;
  for (const InputRecord &i : inputs)
    s += (s.empty() ? "" : ", ") + i.name;
  return s.empty() ? "(none)" : s;
}

std::optional<double> Manifest::defaultLearningRate() const {
  if (const ScalarRecord *lr = findScalar("lr"); lr && lr->defaultValue)
    return lr->defaultValue;
  for (const std::string &line : info) {
    if (line.rfind("optimizer ", 0) != 0)
      continue;
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      if (w.rfind("lr=", 0) != 0)
        continue;
      errno = 0;
      char *end = nullptr;
      double v = std::strtod(w.c_str() + 3, &end);
      if (!errno && *end == '\0' && end != w.c_str() + 3)
        return v;
    }
  }
  return std::nullopt;
}

const OutputRecord *Manifest::lossOutput(const std::string &entry) const {
  if (const OutputRecord *o = findOutput(entry, "loss"))
    return o;
  return entry == "grads" ? findOutput("train", "loss") : nullptr;
}

Manifest parseManifest(const std::string &text) {
  Manifest m;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  bool sawHeader = false;
  // Slots are checked against the buffer sizes once every size is known.
  struct Pending {
    int line;
    TensorSlot slot;
    const char *buffer;
  };
  std::vector<Pending> pending;
  std::set<std::string> seen[5];

  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty() || line[0] == '#')
      continue;
    LineReader r(lineNo, line);
    std::string kind = r.word("record");
    if (!sawHeader) {
      if (kind != "oflow-manifest")
        throw r.error("expected 'oflow-manifest 1' first");
      m.version = static_cast<int>(r.integer("version"));
      if (m.version != 1)
        throw r.error("unsupported manifest version " +
                      std::to_string(m.version) + " (this runtime reads 1)");
      r.end();
      sawHeader = true;
      continue;
    }
    if (kind == "mode") {
      m.mode = r.word("mode");
      if (m.mode != "train" && m.mode != "infer")
        throw r.error("unknown mode '" + m.mode + "'");
    } else if (kind == "model") {
      // Informational: an empty or oddly escaped name is not worth failing.
      std::string rest = line.size() > 6 ? line.substr(6) : "";
      m.model = unescapeName(rest).value_or(rest);
      continue;
    } else if (kind == "weights") {
      m.weightsFile = r.name();
    } else if (kind == "mesh") {
      if (!m.mesh.empty())
        throw r.error("duplicate mesh record");
      while (!r.done())
        m.mesh.push_back(r.integer("mesh axis size", 1));
      if (m.mesh.empty())
        throw r.error("empty mesh (want mesh <n0> [<n1> ...])");
    } else if (kind == "batch") {
      m.batch = r.integer("batch", 0);
    } else if (kind == "state_bytes") {
      m.stateBytes = r.integer("size", 0);
    } else if (kind == "io_bytes") {
      m.ioBytes = r.integer("size", 0);
    } else if (kind == "arena_bytes") {
      m.arenaBytes = r.integer("size", 0);
    } else if (kind == "entry") {
      std::string e = r.word("entry");
      if (e != "train" && e != "grads" && e != "infer")
        throw r.error("unknown entry '" + e + "'");
      if (m.hasEntry(e))
        throw r.error("duplicate entry '" + e + "'");
      m.entries.push_back(e);
    } else if (kind == "var") {
      VarRecord v;
      v.name = r.name();
      std::string k = r.word("kind");
      if (k == "param") v.kind = VarKind::Param;
      else if (k == "buffer") v.kind = VarKind::Buffer;
      else if (k == "optimizer") v.kind = VarKind::Optimizer;
      else if (k == "constant") v.kind = VarKind::Constant;
      else throw r.error("unknown var kind '" + k + "'");
      v.dtype = r.dtype();
      v.dims = r.dims();
      v.offset = r.integer("state offset", 0);
      v.initOffset = r.integer("init offset", -1);
      v.sbp = r.sbp();
      v.view = r.view(v.dims);
      v.recipe = r.recipe();
      if (v.recipe && v.initOffset >= 0)
        throw r.error("var '" + v.name + "' has both stored bytes and a recipe");
      if (v.recipe && v.dtype != DType::F32 && v.dtype != DType::F64)
        throw r.error("var '" + v.name + "': recipes draw f32 or f64 values only");
      if (!seen[0].insert(v.name).second)
        throw r.error("duplicate var '" + v.name + "'");
      pending.push_back({lineNo, v, "state"});
      m.vars.push_back(v);
    } else if (kind == "input") {
      InputRecord i;
      i.name = r.name();
      i.dtype = r.dtype();
      i.dims = r.dims();
      i.offset = r.integer("io offset", 0);
      std::string synth = r.word("synth");
      if (synth == "normal") {
        if (!isFloat(i.dtype))
          throw r.error("synth 'normal' for integer input '" + i.name + "'");
      } else if (synth.rfind("int:", 0) == 0) {
        i.synthNormal = false;
        char *end = nullptr;
        errno = 0;
        i.lo = std::strtoll(synth.c_str() + 4, &end, 10);
        if (*end != ':')
          throw r.error("bad synth '" + synth + "'");
        char *end2 = nullptr;
        i.hi = std::strtoll(end + 1, &end2, 10);
        std::string suffix = end2;
        if (suffix == ":unchecked") {
          i.checked = false;
        } else if (suffix.rfind(":ignore=", 0) == 0) {
          char *end3 = nullptr;
          i.ignore = std::strtoll(suffix.c_str() + 8, &end3, 10);
          if (*end3 || end3 == suffix.c_str() + 8)
            throw r.error("bad synth '" + synth + "'");
        } else if (!suffix.empty()) {
          throw r.error("bad synth '" + synth + "'");
        }
        if (errno || end2 == end + 1 || i.hi <= i.lo)
          throw r.error("bad synth '" + synth + "' (want int:<lo>:<hi>, lo < hi)");
        if (isFloat(i.dtype))
          throw r.error("integer synth for float input '" + i.name + "'");
      } else {
        throw r.error("bad synth '" + synth + "'");
      }
      i.sbp = r.sbp();
      if (!seen[1].insert(i.name).second)
        throw r.error("duplicate input '" + i.name + "'");
      pending.push_back({lineNo, i, "io"});
      m.inputs.push_back(i);
    } else if (kind == "output") {
      OutputRecord o;
      o.entry = r.word("entry");
      if (o.entry != "train" && o.entry != "grads" && o.entry != "infer")
        throw r.error("unknown entry '" + o.entry + "'");
      o.name = r.name();
      o.dtype = r.dtype();
      o.dims = r.dims();
      o.offset = r.integer("io offset", 0);
      o.sbp = r.sbp();
      if (!seen[2].insert(o.entry + " " + o.name).second)
        throw r.error("duplicate output '" + o.name + "'");
      pending.push_back({lineNo, o, "io"});
      m.outputs.push_back(o);
    } else if (kind == "grad") {
      TensorSlot g;
      g.name = r.name();
      g.dtype = r.dtype();
      g.dims = r.dims();
      g.offset = r.integer("io offset", 0);
      g.sbp = r.sbp();
      g.view = r.view(g.dims);
      if (!seen[3].insert(g.name).second)
        throw r.error("duplicate grad '" + g.name + "'");
      pending.push_back({lineNo, g, "io"});
      m.grads.push_back(g);
    } else if (kind == "scalar") {
      ScalarRecord s;
      s.name = r.name();
      s.dtype = r.dtype();
      s.offset = r.integer("io offset", 0);
      if (!r.done())
        s.defaultValue = r.number("default");
      if (!seen[4].insert(s.name).second)
        throw r.error("duplicate scalar '" + s.name + "'");
      TensorSlot slot;
      slot.name = s.name;
      slot.dtype = s.dtype;
      slot.offset = s.offset;
      pending.push_back({lineNo, slot, "io"});
      m.scalars.push_back(s);
    } else if (kind == "optimizer" || kind == "schedule" || kind == "plan") {
      m.info.push_back(line);
      continue;
    } else {
      throw r.error("unknown record '" + kind + "'");
    }
    r.end();
  }
  if (!sawHeader)
    throw Error("manifest: empty (no 'oflow-manifest 1' line)");
  if (m.mode.empty())
    throw Error("manifest: no 'mode' record");
  for (Pending &p : pending) {
    LineReader r(p.line, "");
    layOut(r, p.slot, m.mesh);
    checkSlot(r, p.slot,
              std::string(p.buffer) == "state" ? m.stateBytes : m.ioBytes,
              p.buffer);
  }
  // The records got copies before the mesh was known: lay them out too.
  auto layOutAll = [&](auto &records) {
    for (TensorSlot &s : records)
      s.localDims = localDims(s.dims, s.sbp, m.mesh);
  };
  layOutAll(m.vars);
  layOutAll(m.inputs);
  layOutAll(m.outputs);
  layOutAll(m.grads);
  return m;
}

} // namespace oflow_rt
