//===- Npy.cpp - NumPy .npy files ------------------------------------------===//
//
// Format: "\x93NUMPY", major, minor, header length (u16 in 1.0, u32 in 2.0
// and 3.0), then a Python dict literal {'descr': '<f4', 'fortran_order':
// False, 'shape': (8, 4), } padded with spaces and a '\n', then the data.
//
//===----------------------------------------------------------------------===//
#include "oflow_rt/Npy.h"
#include "oflow_rt/Error.h"
#include "oflow_rt/FileUtil.h"

#include <cstring>

namespace oflow_rt {

namespace {
const char kMagic[] = "\x93NUMPY";

struct Descr {
  const char *text;
  DType type;
};
// '=' (native) is little-endian on every target oflow supports; '|' marks
// one-byte types.
const Descr kDescrs[] = {
    {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16},
    {"<i8", DType::I64}, {"<i4", DType::I32}, {"<i2", DType::I16},
    {"|i1", DType::I8},  {"|u1", DType::U8},  {"|b1", DType::Bool},
};

std::optional<DType> descrType(std::string d) {
  if (!d.empty() && d[0] == '=')
    d[0] = '<';
  if (d == "<i1" || d == "<u1" || d == "<b1")
    d[0] = '|';
  for (const Descr &x : kDescrs)
    if (d == x.text)
      return x.type;
  return std::nullopt;
}

const char *typeDescr(DType t) {
  for (const Descr &x : kDescrs)
    if (x.type == t)
      return x.text;
  return nullptr;
}

// The value text after 'key': in the header dict, up to the matching end.
std::optional<std::string> dictValue(const std::string &h,
                                     const std::string &key) {
  for (const char *q : {"'", "\""}) {
    std::string k = q + key + q;
    size_t p = h.find(k);
    if (p == std::string::npos)
      continue;
    p = h.find(':', p + k.size());
    if (p == std::string::npos)
      return std::nullopt;
    ++p;
    while (p < h.size() && h[p] == ' ')
      ++p;
    if (p >= h.size())
      return std::nullopt;
    char open = h[p];
    size_t end;
    if (open == '\'' || open == '"')
      end = h.find(open, p + 1);
    else if (open == '(')
      end = h.find(')', p);
    else {
      end = h.find_first_of(",}", p);
      if (end == std::string::npos)
        return std::nullopt;
      while (end > p && h[end - 1] == ' ')
        --end;
      return h.substr(p, end - p);
    }
    if (end == std::string::npos)
      return std::nullopt;
    return h.substr(p, end - p + 1);
  }
  return std::nullopt;
}
} // namespace

HostTensor parseNpy(const std::string &bytes, const std::string &path) {
  auto fail = [&](const std::string &why) {
    return Error(path + ": not a valid .npy file: " + why);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    throw fail("bad magic (expected \\x93NUMPY)");
  int major = static_cast<unsigned char>(bytes[6]);
  uint64_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                static_cast<unsigned char>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      throw fail("truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= uint64_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    throw fail("unsupported format version " + std::to_string(major));
  }
  if (headerStart + headerLen > bytes.size())
    throw fail("truncated header");
  std::string h = bytes.substr(headerStart, headerLen);

  auto descr = dictValue(h, "descr");
  auto fortran = dictValue(h, "fortran_order");
  auto shape = dictValue(h, "shape");
  if (!descr || !fortran || !shape)
    throw fail("header lacks descr, fortran_order or shape");
  // The values are quoted strings and a parenthesized tuple (dictValue
  // keeps the delimiters); anything shorter is not a header numpy writes.
  if (descr->size() < 2 || shape->size() < 2 || (*shape)[0] != '(')
    throw fail("bad descr or shape in the header");
  std::string d = descr->substr(1, descr->size() - 2);
  auto type = descrType(d);
  if (!type) {
    if (!d.empty() && d[0] == '>')
      throw Error(path + ": big-endian data (" + d +
                  ") is not supported; save it little-endian");
    throw Error(path + ": unsupported dtype '" + d +
                "' (supported: float32, float64, float16, int64, int32, "
                "int16, int8, uint8, bool)");
  }
  if (*fortran == "True")
    throw Error(path + ": Fortran-order array; save it in C order "
                       "(numpy.ascontiguousarray)");
  if (*fortran != "False")
    throw fail("bad fortran_order " + *fortran);

  HostTensor t;
  t.dtype = *type;
  std::string s = shape->substr(1, shape->size() - 2);
  size_t p = 0;
  while (p < s.size()) {
    while (p < s.size() && (s[p] == ' ' || s[p] == ','))
      ++p;
    if (p >= s.size())
      break;
    size_t q = p;
    while (q < s.size() && s[q] >= '0' && s[q] <= '9')
      ++q;
    // Python 2 wrote long dimensions as "8L".
    if (q == p || (q < s.size() && s[q] != ',' && s[q] != ' ' && s[q] != 'L'))
      throw fail("bad shape (" + s + ")");
    if (q - p > 15)
      throw fail("dimension too large in shape (" + s + ")");
    t.dims.push_back(std::stoll(s.substr(p, q - p)));
    p = q + (q < s.size() && s[q] == 'L');
  }

  uint64_t dataStart = headerStart + headerLen;
  long double want = dtypeSize(t.dtype);
  for (int64_t dim : t.dims)
    want *= dim;
  uint64_t have = bytes.size() - dataStart;
  if (want > 1e18L || static_cast<uint64_t>(want) != have)
    throw Error(path + ": truncated or oversized: shape " +
                shapeText(t.dims) + " of " + dtypeName(t.dtype) + " needs " +
                (want > 1e18L ? std::string("over 10^18")
                              : std::to_string(static_cast<uint64_t>(want))) +
                " bytes of data, the file has " + std::to_string(have));
  t.data.assign(bytes.begin() + dataStart, bytes.end());
  return t;
}

HostTensor readNpy(const std::string &path) {
  return parseNpy(readFile(path), path);
}

std::string formatNpy(const HostTensor &t) {
  const char *descr = typeDescr(t.dtype);
  if (!descr)
    throw Error(std::string("cannot write ") + dtypeName(t.dtype) +
                " to .npy (NumPy has no such dtype)");
  std::string shape = "(";
  for (size_t i = 0; i < t.dims.size(); ++i)
    shape += std::to_string(t.dims[i]) + (t.dims.size() == 1 ? "," : i + 1 < t.dims.size() ? ", " : "");
  shape += ")";
  std::string h = std::string("{'descr': '") + descr +
                  "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary (NumPy >= 1.14 does).
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  out += h;
  out.append(reinterpret_cast<const char *>(t.data.data()), t.data.size());
  return out;
}

void writeNpy(const std::string &path, const HostTensor &t) {
  std::string bytes = formatNpy(t);
  writeFileAtomic(path, bytes.data(), bytes.size());
}

} // namespace oflow_rt
