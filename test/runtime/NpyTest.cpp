//===- NpyTest.cpp - .npy read/write ---------------------------------------===//
#include "TestUtil.h"
#include "oflow_rt/FileUtil.h"
#include "oflow_rt/Npy.h"

#include <cstring>
#include <fstream>

using namespace oflow_rt;
using oflow_rt::test::expectError;
using oflow_rt::test::TempDir;

namespace {
template <typename T>
HostTensor make(DType dtype, std::vector<int64_t> dims, std::vector<T> values) {
  HostTensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.data.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

// A hand-made image with the given header dict and data bytes.
std::string image(const std::string &dict, const std::string &data,
                  char major = 1) {
  std::string h = dict;
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string s = std::string("\x93NUMPY", 6) + major + '\0';
  if (major == 1) {
    s += static_cast<char>(h.size() & 0xff);
    s += static_cast<char>(h.size() >> 8);
  } else {
    uint32_t n = static_cast<uint32_t>(h.size());
    s.append(reinterpret_cast<const char *>(&n), 4);
  }
  return s + h + data;
}
} // namespace

TEST(Npy, RoundTripsEveryTrainingDType) {
  TempDir dir;
  std::vector<HostTensor> cases = {
      make<float>(DType::F32, {2, 3}, {1.5f, -2, 3, 4, 5, 1e-30f}),
      make<int64_t>(DType::I64, {4}, {0, -1, INT64_MAX, INT64_MIN}),
      make<int32_t>(DType::I32, {1, 2, 1}, {7, -7}),
      make<uint8_t>(DType::Bool, {3}, {1, 0, 1}),
      make<double>(DType::F64, {}, {3.25}),
      make<float>(DType::F32, {0, 5}, {}),
  };
  for (const HostTensor &t : cases) {
    std::string path = dir.path + "/t.npy";
    writeNpy(path, t);
    std::string bytes = readFile(path);
    EXPECT_EQ((bytes.size() - t.data.size()) % 64, 0u) << "data not aligned";
    HostTensor back = readNpy(path);
    EXPECT_EQ(back.dtype, t.dtype);
    EXPECT_EQ(back.dims, t.dims);
    EXPECT_EQ(back.data, t.data);
  }
}

TEST(Npy, ReadsVersion2AndPythonSpellings) {
  float v[2] = {1, 2};
  std::string data(reinterpret_cast<char *>(v), 8);
  HostTensor t = parseNpy(
      image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data, 2),
      "v2.npy");
  EXPECT_EQ(t.dims, std::vector<int64_t>{2});
  t = parseNpy(image("{'descr':'<f4','fortran_order':False,'shape':(1L, 2L)}", data),
               "py2.npy");
  EXPECT_EQ(t.dims, (std::vector<int64_t>{1, 2}));
}

TEST(Npy, RejectsBadFiles) {
  std::string f8(8, '\0');
  expectError([&] { parseNpy("NUMPY\x01\x00\x00\x00", "a.npy"); },
              "a.npy: not a valid .npy file: bad magic");
  expectError([&] { parseNpy("short", "b.npy"); }, "b.npy: not a valid .npy file");
  expectError(
      [&] {
        parseNpy(image("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", f8),
                 "c.npy");
      },
      "c.npy: unsupported dtype '<c8'");
  expectError(
      [&] {
        parseNpy(image("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f8),
                 "d.npy");
      },
      "d.npy: big-endian");
  expectError(
      [&] {
        parseNpy(image("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", f8),
                 "e.npy");
      },
      "e.npy: Fortran-order");
  expectError(
      [&] {
        parseNpy(image("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f8),
                 "f.npy");
      },
      "f.npy: truncated or oversized: shape [3] of f32 needs 12 bytes of data, the file has 8");
  expectError(
      [&] { parseNpy(image("{'descr': '<f4', 'shape': (2,), }", f8), "g.npy"); },
      "g.npy: not a valid .npy file: header lacks");
  expectError(
      [&] {
        parseNpy(image("{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }", f8),
                 "h.npy");
      },
      "bad shape");
  std::string cut = image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f8);
  expectError([&] { parseNpy(cut.substr(0, 30), "i.npy"); }, "truncated header");
  expectError([&] { readNpy("/nonexistent/x.npy"); }, "/nonexistent/x.npy: cannot open");
  TempDir dir;
  expectError([&] { readNpy(dir.path); }, dir.path + ": cannot read: is a directory");
}

TEST(Npy, FileNamesForTensorNames) {
  EXPECT_EQ(fileNameFor("fc1.weight"), "fc1.weight");
  EXPECT_EQ(fileNameFor("/layer/MatMul:0"), "%2Flayer%2FMatMul:0");
  EXPECT_EQ(fileNameFor(".."), "%2E.");
  EXPECT_EQ(fileNameFor("a b"), "a%20b");
}
