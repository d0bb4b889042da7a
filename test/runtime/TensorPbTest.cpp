//===- TensorPbTest.cpp - ONNX TensorProto files ---------------------------===//
#include "TestUtil.h"
#include "oflow_rt/FileUtil.h"
#include "oflow_rt/TensorPb.h"

#include <onnx/onnx_pb.h>

#include <cstring>

using namespace oflow_rt;
using oflow_rt::test::expectError;
using oflow_rt::test::TempDir;

namespace {
void writeProto(const std::string &path, const onnx::TensorProto &p) {
  std::string s = p.SerializeAsString();
  writeFileAtomic(path, s.data(), s.size());
}
} // namespace

TEST(TensorPb, RoundTripsRawData) {
  TempDir dir;
  HostTensor t;
  t.dtype = DType::I64;
  t.dims = {2, 2};
  int64_t v[4] = {1, -2, 3, 1LL << 40};
  t.data.assign(reinterpret_cast<uint8_t *>(v), reinterpret_cast<uint8_t *>(v) + 32);
  writeTensorPb(dir.path + "/t.pb", "out:0", t);
  HostTensor back = readTensorPb(dir.path + "/t.pb");
  EXPECT_EQ(back.dtype, DType::I64);
  EXPECT_EQ(back.dims, t.dims);
  EXPECT_EQ(back.data, t.data);
  onnx::TensorProto p;
  ASSERT_TRUE(p.ParseFromString(readFile(dir.path + "/t.pb")));
  EXPECT_EQ(p.name(), "out:0");
}

TEST(TensorPb, ReadsTypedFields) {
  TempDir dir;
  onnx::TensorProto f;
  f.set_data_type(onnx::TensorProto::FLOAT);
  f.add_dims(3);
  for (float x : {1.0f, 2.5f, -3.0f})
    f.add_float_data(x);
  writeProto(dir.path + "/f.pb", f);
  HostTensor t = readTensorPb(dir.path + "/f.pb");
  ASSERT_EQ(t.data.size(), 12u);
  float got[3];
  std::memcpy(got, t.data.data(), 12);
  EXPECT_EQ(got[1], 2.5f);

  // int8 and bool values arrive one per int32 and must be narrowed.
  onnx::TensorProto i8;
  i8.set_data_type(onnx::TensorProto::INT8);
  i8.add_dims(2);
  i8.add_int32_data(-5);
  i8.add_int32_data(7);
  writeProto(dir.path + "/i8.pb", i8);
  t = readTensorPb(dir.path + "/i8.pb");
  EXPECT_EQ(t.dtype, DType::I8);
  ASSERT_EQ(t.data.size(), 2u);
  EXPECT_EQ(static_cast<int8_t>(t.data[0]), -5);
  EXPECT_EQ(t.data[1], 7);
}

TEST(TensorPb, RejectsBadFiles) {
  TempDir dir;
  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_dims(1);
  s.add_string_data("hi");
  writeProto(dir.path + "/s.pb", s);
  expectError([&] { readTensorPb(dir.path + "/s.pb"); }, "unsupported tensor element type STRING");

  onnx::TensorProto shortData;
  shortData.set_data_type(onnx::TensorProto::FLOAT);
  shortData.add_dims(4);
  shortData.set_raw_data(std::string(8, '\0'));
  writeProto(dir.path + "/short.pb", shortData);
  expectError([&] { readTensorPb(dir.path + "/short.pb"); },
              "short.pb: shape [4] of f32 needs 16 bytes of data, the file has 8");

  std::string junk = "\xff\xff\xff\xff garbage";
  writeFileAtomic(dir.path + "/junk.pb", junk.data(), junk.size());
  expectError([&] { readTensorPb(dir.path + "/junk.pb"); }, "not a valid ONNX TensorProto");
}
