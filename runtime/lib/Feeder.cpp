//===- Feeder.cpp - one batch of every input per step ----------------------===//
#include "oflow_rt/Feeder.h"
#include "oflow_rt/Checkpoint.h"
#include "oflow_rt/Distributed.h"
#include "oflow_rt/Error.h"

#include <cmath>
#include <cstring>

namespace oflow_rt {

namespace {
// SplitMix64: tiny, fast, and specified exactly, so the stream is the same
// with every compiler and standard library (std:: distributions are not).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1], never 0 (Box-Muller takes its log).
  double unit() { return ((next() >> 11) + 1) * 0x1.0p-53; }
};

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (exp <= 0)
    return static_cast<uint16_t>(sign); // tiny values flush to zero
  if (exp >= 31)
    return static_cast<uint16_t>(sign | 0x7c00);
  uint32_t h = sign | (exp << 10) | (mant >> 13);
  if ((mant >> 12) & 1) // round half up
    ++h;
  return static_cast<uint16_t>(h);
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  x += 0x7fff + ((x >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

int64_t readInt(const uint8_t *p, DType t) {
  switch (t) {
  case DType::I64: { int64_t v; std::memcpy(&v, p, 8); return v; }
  case DType::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
  case DType::I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
  case DType::I8: return static_cast<int8_t>(*p);
  default: return *p; // u8, bool
  }
}

void writeInt(uint8_t *p, DType t, int64_t v) {
  switch (t) {
  case DType::I64: std::memcpy(p, &v, 8); break;
  case DType::I32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
  case DType::I16: { int16_t x = static_cast<int16_t>(v); std::memcpy(p, &x, 2); break; }
  default: *p = static_cast<uint8_t>(v); break;
  }
}
} // namespace

HostTensor prepareInputData(const InputRecord &in, HostTensor file,
                            const std::string &path, int64_t batch) {
  const std::string what = path + ": ";
  if (in.dims.empty())
    throw Error(what + "input '" + in.name +
                "' is a scalar; only batched inputs are fed from files");
  if (file.dtype != in.dtype) {
    bool intPair = (file.dtype == DType::I32 && in.dtype == DType::I64) ||
                   (file.dtype == DType::I64 && in.dtype == DType::I32);
    if (!intPair)
      throw Error(what + "dtype " + dtypeName(file.dtype) + ", but input '" +
                  in.name + "' is " + dtypeName(in.dtype) +
                  (isFloat(in.dtype) && isFloat(file.dtype)
                       ? " (convert it, e.g. numpy's astype)"
                       : ""));
    HostTensor conv;
    conv.dtype = in.dtype;
    conv.dims = file.dims;
    int64_t n = numElements(file.dims);
    conv.data.resize(n * dtypeSize(in.dtype));
    for (int64_t e = 0; e < n; ++e) {
      int64_t v = readInt(file.data.data() + e * dtypeSize(file.dtype), file.dtype);
      if (in.dtype == DType::I32 && (v < INT32_MIN || v > INT32_MAX))
        throw Error(what + "value " + std::to_string(v) +
                    " does not fit the i32 input '" + in.name + "'");
      writeInt(conv.data.data() + e * dtypeSize(in.dtype), in.dtype, v);
    }
    file = std::move(conv);
  }
  std::vector<int64_t> rowShape(in.dims.begin() + 1, in.dims.end());
  std::vector<int64_t> fileRowShape;
  if (!file.dims.empty())
    fileRowShape.assign(file.dims.begin() + 1, file.dims.end());
  if (file.dims.empty() || fileRowShape != rowShape) {
    std::string need = "[N";
    for (int64_t d : rowShape)
      need += "," + std::to_string(d);
    throw Error(what + "shape " + shapeText(file.dims) + ", but input '" +
                in.name + "' needs " + need + "] (rows of shape " +
                shapeText(rowShape) + ")");
  }
  if (file.rows() < batch)
    throw Error(what + std::to_string(file.rows()) +
                " rows, fewer than the batch of " + std::to_string(batch));
  if (!in.synthNormal && in.checked) {
    // Integer inputs index tables (embeddings, classes); a value outside the
    // range would read outside them.
    int64_t n = numElements(file.dims);
    int64_t perRow = n / file.rows();
    for (int64_t e = 0; e < n; ++e) {
      int64_t v = readInt(file.data.data() + e * dtypeSize(file.dtype), file.dtype);
      if ((v < in.lo || v >= in.hi) && v != in.ignore)
        throw Error(what + "row " + std::to_string(e / perRow) + " holds " +
                    std::to_string(v) + ", outside [" + std::to_string(in.lo) +
                    ", " + std::to_string(in.hi) + ") that input '" + in.name +
                    "' accepts");
    }
  }
  return file;
}

std::vector<int64_t> epochPermutation(uint64_t seed, uint64_t epoch,
                                      int64_t n) {
  std::vector<int64_t> p(n);
  for (int64_t i = 0; i < n; ++i)
    p[i] = i;
  SplitMix64 rng{seed * 0x9E3779B97F4A7C15ULL ^ (epoch + 1) * 0xD1B54A32D192ED03ULL};
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(i + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

Feeder::Feeder(const Manifest &m, std::map<std::string, HostTensor> files,
               std::optional<uint64_t> shuffleSeed, std::vector<int64_t> coords)
    : manifest(m), files(std::move(files)), seed(shuffleSeed),
      coords(coords.empty() ? meshCoords() : std::move(coords)) {}

int64_t Feeder::rowFor(int64_t step, int64_t i, int64_t rows, int64_t n) {
  int64_t g = step * rows + i;
  if (!seed)
    return g % n;
  uint64_t epoch = static_cast<uint64_t>(g / n);
  auto key = std::make_pair(n, epoch);
  auto it = perms.find(key);
  if (it == perms.end()) {
    if (perms.size() > 8)
      perms.clear();
    it = perms.emplace(key, epochPermutation(*seed, epoch, n)).first;
  }
  return it->second[g % n];
}

void Feeder::fill(int64_t step, uint8_t *io) {
  for (const InputRecord &in : manifest.inputs) {
    uint8_t *dst = io + in.offset;
    Block mine = localBlock(in.dims, in.sbp, manifest.mesh, coords);
    auto it = files.find(in.name);
    if (it == files.end()) {
      if (!in.sharded()) {
        synthesize(in, step, dst);
        continue;
      }
      std::vector<uint8_t> global(in.bytes());
      synthesize(in, step, global.data());
      copyOverlap(dtypeSize(in.dtype), global.data(), wholeBlock(in.dims), dst, mine);
      continue;
    }
    const HostTensor &t = it->second;
    int64_t rowBytes = t.rowBytes();
    int64_t rows = in.dims[0];
    // A row's own block: everything after dim 0, as this rank holds it.
    std::vector<int64_t> rowDims(in.dims.begin() + 1, in.dims.end());
    Block rowMine{std::vector<int64_t>(mine.offset.begin() + 1, mine.offset.end()),
                  std::vector<int64_t>(mine.size.begin() + 1, mine.size.end())};
    bool wholeRows = rowMine == wholeBlock(rowDims);
    int64_t localRowBytes = rowMine.elements() * dtypeSize(in.dtype);
    for (int64_t i = 0; i < mine.size[0]; ++i) {
      const uint8_t *src =
          t.data.data() + rowFor(step, mine.offset[0] + i, rows, t.rows()) * rowBytes;
      if (wholeRows)
        std::memcpy(dst + i * rowBytes, src, rowBytes);
      else
        copyOverlap(dtypeSize(in.dtype), src, wholeBlock(rowDims),
                    dst + i * localRowBytes, rowMine);
    }
  }
}

void Feeder::synthesize(const InputRecord &in, int64_t step,
                        uint8_t *dst) const {
  SplitMix64 rng{fnv1a64(in.name.data(), in.name.size()) ^
                 static_cast<uint64_t>(step) * 0xD1B54A32D192ED03ULL};
  int64_t n = numElements(in.dims);
  int64_t size = dtypeSize(in.dtype);
  for (int64_t e = 0; e < n; ++e) {
    uint8_t *p = dst + e * size;
    if (!in.synthNormal) {
      uint64_t span = static_cast<uint64_t>(in.hi - in.lo);
      writeInt(p, in.dtype, in.lo + static_cast<int64_t>(rng.next() % span));
      continue;
    }
    double u1 = rng.unit(), u2 = rng.unit();
    double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    float f = static_cast<float>(z);
    switch (in.dtype) {
    case DType::F64: std::memcpy(p, &z, 8); break;
    case DType::F16: { uint16_t h = floatToHalf(f); std::memcpy(p, &h, 2); break; }
    case DType::BF16: { uint16_t h = floatToBf16(f); std::memcpy(p, &h, 2); break; }
    default: std::memcpy(p, &f, 4); break;
    }
  }
}

std::vector<std::string> Feeder::synthesized() const {
  std::vector<std::string> r;
  for (const InputRecord &in : manifest.inputs)
    if (!files.count(in.name))
      r.push_back(in.name);
  return r;
}

int64_t Feeder::minRows() const {
  int64_t r = 0;
  for (const auto &[name, t] : files)
    if (r == 0 || t.rows() < r)
      r = t.rows();
  return r;
}

} // namespace oflow_rt
