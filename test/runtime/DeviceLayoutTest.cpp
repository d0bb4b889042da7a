//===- DeviceLayoutTest.cpp - host-side logic of the device runtimes ------===//
//
// What the CUDA runtime computes on the host and can be checked without a
// GPU: which io bytes move per call (Device.h), the strided copies that turn
// NCCL's native collective layouts into abi.h's (CommLayout.h, checked here
// against abi.h's formulas on simulated group members), and the lazy GPU
// module registry behind mgpuModuleLoad/GetFunction (ModuleRegistry.h).
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/CommLayout.h"
#include "../../runtime/lib/ModuleRegistry.h"
#include "oflow_rt/Device.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <stdexcept>

using namespace oflow_rt;

TEST(Device, MergeRangesSortsMergesAndDropsEmpty) {
  ByteRanges r = mergeRanges({{640, 1}, {0, 128}, {128, 64}, {300, 0}, {448, 4}}, 0);
  EXPECT_EQ(r, (ByteRanges{{0, 192}, {448, 4}, {640, 1}}));
  r = mergeRanges({{640, 1}, {0, 128}, {128, 64}, {448, 4}}, 4096);
  EXPECT_EQ(r, (ByteRanges{{0, 641}}));
  r = mergeRanges({{0, 100}, {50, 10}}, 0); // contained
  EXPECT_EQ(r, (ByteRanges{{0, 100}}));
}

TEST(Device, IoTransfersMoveInputsAndScalarsInOutputsAndGradsOut) {
  Manifest m = parseManifest("oflow-manifest 1\nmode train\nbatch 8\n"
                             "state_bytes 64\nio_bytes 1024\narena_bytes 64\n"
                             "entry train\nentry grads\n"
                             "var w param f32 1 4 0 0\n"
                             "input x f32 2 8 4 0 normal\n"
                             "input y f32 1 8 192 normal\n"
                             "output train loss f32 0 256\n"
                             "grad w f32 1 4 512\n"
                             "scalar lr f32 448\n"
                             "scalar step i64 768\n");
  IoTransfers train = ioTransfers(m, "train", 0);
  EXPECT_EQ(train.toDevice, (ByteRanges{{0, 128}, {192, 32}, {448, 4}, {768, 8}}));
  EXPECT_EQ(train.toHost, (ByteRanges{{256, 4}, {448, 4}, {768, 8}}));
  IoTransfers grads = ioTransfers(m, "grads", 0);
  EXPECT_EQ(grads.toDevice, train.toDevice);
  EXPECT_EQ(grads.toHost, (ByteRanges{{256, 4}, {448, 4}, {512, 16}, {768, 8}}));
  // The default gap merges small holes into one copy.
  EXPECT_EQ(ioTransfers(m, "grads").toHost, (ByteRanges{{256, 520}}));
}

TEST(Device, DeviceOptionsFromFlagAndEnvironment) {
  unsetenv("OFLOW_ALLOW_TF32");
  EXPECT_FALSE(deviceOptions(false).allowTf32);
  EXPECT_TRUE(deviceOptions(true).allowTf32);
  setenv("OFLOW_ALLOW_TF32", "1", 1);
  EXPECT_TRUE(deviceOptions(false).allowTf32);
  setenv("OFLOW_ALLOW_TF32", "0", 1);
  EXPECT_FALSE(deviceOptions(false).allowTf32);
  unsetenv("OFLOW_ALLOW_TF32");

  unsetenv("OFLOW_CUDA_GRAPH");
  EXPECT_TRUE(deviceOptions(false).cudaGraphs);
  EXPECT_FALSE(deviceOptions(false, /*noCudaGraphFlag=*/true).cudaGraphs);
  setenv("OFLOW_CUDA_GRAPH", "0", 1);
  EXPECT_FALSE(deviceOptions(false).cudaGraphs);
  setenv("OFLOW_CUDA_GRAPH", "1", 1);
  EXPECT_TRUE(deviceOptions(false).cudaGraphs);
  unsetenv("OFLOW_CUDA_GRAPH");
}

namespace {
using Buf = std::vector<int32_t>;

Buf iota(int64_t n, int32_t base) {
  Buf b(n);
  std::iota(b.begin(), b.end(), base);
  return b;
}

Buf apply(const std::vector<Copy2D> &c, const Buf &src, int64_t dstElems) {
  Buf dst(dstElems, -1);
  applyCopies(c, reinterpret_cast<const uint8_t *>(src.data()),
              reinterpret_cast<uint8_t *>(dst.data()));
  return dst;
}
} // namespace

TEST(CommLayout, AllGatherUnpackGivesAbiLayout) {
  for (int64_t n : {1, 2, 3, 4})
    for (int64_t outer : {1, 3})
      for (int64_t chunk : {1, 5}) {
        std::vector<Buf> in;
        Buf native; // NCCL: member p's whole buffer at p
        for (int64_t p = 0; p < n; ++p) {
          in.push_back(iota(outer * chunk, 1000 * int32_t(p)));
          native.insert(native.end(), in[p].begin(), in[p].end());
        }
        Buf out = apply(allGatherUnpack(n, outer, chunk * 4), native, n * outer * chunk);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t p = 0; p < n; ++p)
            for (int64_t k = 0; k < chunk; ++k)
              ASSERT_EQ(out[o * n * chunk + p * chunk + k], in[p][o * chunk + k])
                  << "n " << n << " outer " << outer << " chunk " << chunk;
      }
}

TEST(CommLayout, ReduceScatterPackGivesAbiLayout) {
  for (int64_t n : {1, 2, 3, 4})
    for (int64_t outer : {1, 3})
      for (int64_t chunk : {1, 5}) {
        std::vector<Buf> in, packed;
        for (int64_t p = 0; p < n; ++p) {
          in.push_back(iota(outer * n * chunk, 100000 * int32_t(p + 1)));
          packed.push_back(apply(reduceScatterPack(n, outer, chunk * 4), in[p],
                                 n * outer * chunk));
        }
        for (int64_t c = 0; c < n; ++c) {
          // NCCL: member c gets the sum of every member's block c.
          for (int64_t j = 0; j < outer * chunk; ++j) {
            int64_t got = 0, want = 0;
            for (int64_t p = 0; p < n; ++p)
              got += packed[p][c * outer * chunk + j];
            int64_t o = j / chunk, k = j % chunk;
            for (int64_t p = 0; p < n; ++p)
              want += in[p][o * n * chunk + c * chunk + k];
            ASSERT_EQ(got, want) << "n " << n << " outer " << outer;
          }
        }
      }
}

TEST(CommLayout, AllToAllPackAndUnpackGiveAbiLayout) {
  const int64_t shapes[][5] = {{2, 4, 3, 2, 2}, {1, 6, 1, 4, 3}, {3, 2, 2, 6, 1},
                               {1, 12, 1, 12, 1}};
  for (const auto &d : shapes)
    for (int s : {1, 3})
      for (int64_t n : {1, 2}) {
        if (d[s] % n)
          continue;
        int64_t total = d[0] * d[1] * d[2] * d[3] * d[4], chunk = total / n;
        std::vector<Buf> in, send;
        for (int64_t p = 0; p < n; ++p) {
          in.push_back(iota(total, 10000 * int32_t(p)));
          send.push_back(apply(allToAllPack(d, s, n, 4), in[p], total));
        }
        int g = 4 - s;
        int64_t od[5] = {d[0], d[1], d[2], d[3], d[4]};
        od[s] /= n;
        od[g] *= n;
        for (int64_t c = 0; c < n; ++c) {
          Buf recv(total); // NCCL send/recv: block p of c's receive = block c of p's send
          for (int64_t p = 0; p < n; ++p)
            std::copy(send[p].begin() + c * chunk, send[p].begin() + (c + 1) * chunk,
                      recv.begin() + p * chunk);
          Buf out = apply(allToAllUnpack(d, s, n, 4), recv, total);
          // abi.h: out[.. g: p*d_g + x .. s: y ..] = in_p[.. g: x .. s: c*(d_s/n) + y ..]
          int64_t i[5];
          for (i[0] = 0; i[0] < od[0]; ++i[0])
            for (i[1] = 0; i[1] < od[1]; ++i[1])
              for (i[2] = 0; i[2] < od[2]; ++i[2])
                for (i[3] = 0; i[3] < od[3]; ++i[3])
                  for (i[4] = 0; i[4] < od[4]; ++i[4]) {
                    int64_t j[5] = {i[0], i[1], i[2], i[3], i[4]};
                    int64_t p = i[g] / d[g];
                    j[g] = i[g] % d[g];
                    j[s] = c * (d[s] / n) + i[s];
                    int64_t oi = (((i[0] * od[1] + i[1]) * od[2] + i[2]) * od[3] + i[3]) * od[4] + i[4];
                    int64_t ii = (((j[0] * d[1] + j[1]) * d[2] + j[2]) * d[3] + j[3]) * d[4] + j[4];
                    ASSERT_EQ(out[oi], in[p][ii]) << "s " << s << " n " << n;
                  }
        }
      }
}

TEST(CommLayout, ContiguousCopiesCollapseToOneRow) {
  // outer 1: NCCL's layout is abi.h's; each member's block is one plain copy.
  auto c = allGatherUnpack(4, 1, 20);
  ASSERT_EQ(c.size(), 4u);
  for (const Copy2D &x : c)
    EXPECT_EQ(x.height, 1);
  EXPECT_TRUE(allGatherUnpack(4, 0, 20).empty());
}

TEST(ModuleRegistry, RecordsEarlyLoadsOnFirstLookupCachesByName) {
  ModuleRegistry r;
  int loads = 0, lookups = 0;
  ModuleRegistry::Loader loader{
      [&](const GpuModule &m) -> void * {
        ++loads;
        return const_cast<char *>(m.code.data());
      },
      [&](const GpuModule &m, const char *name) -> void * {
        ++lookups;
        EXPECT_EQ(m.library, m.code.data());
        return reinterpret_cast<void *>(std::strlen(name) + 100 * lookups);
      }};
  const char blob[] = {'\x7f', 'E', 'L', 'F', 0, 1, 2};
  void *bin = r.addBinary(blob, sizeof blob);
  void *ptx = r.addPtx(".version 8.0\n.target sm_90\n", 3);
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(r.loadedCount(), 0u); // nothing loaded at "global constructor" time
  const GpuModule *b = r.find(bin);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->code.size(), sizeof blob);
  EXPECT_FALSE(b->ptx);
  const GpuModule *p = r.find(ptx);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->ptx);
  EXPECT_EQ(p->optLevel, 3);
  EXPECT_EQ(std::string(p->code.data()), ".version 8.0\n.target sm_90\n");

  void *f1 = r.function(bin, "kernel_a", loader);
  void *f2 = r.function(bin, "kernel_a", loader);
  std::string name = "kernel_a"; // same name, another address
  void *f3 = r.function(bin, name.c_str(), loader);
  EXPECT_EQ(f1, f2);
  EXPECT_EQ(f1, f3);
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(lookups, 1);
  void *g = r.function(bin, "kernel_bb", loader);
  EXPECT_NE(f1, g);
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(lookups, 2);
  EXPECT_EQ(r.loadedCount(), 1u);
  r.function(ptx, "k", loader);
  EXPECT_EQ(loads, 2);

  r.remove(bin);
  EXPECT_EQ(r.loadedCount(), 1u);
  EXPECT_THROW(r.function(bin, "kernel_a", loader), std::runtime_error);
  int unknown = 0;
  EXPECT_THROW(r.function(&unknown, "kernel_a", loader), std::runtime_error);
}
