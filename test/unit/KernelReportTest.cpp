//===- KernelReportTest.cpp - the kernel cost model on known kernels ------===//
//
// Sector counting on hand-computed coalesced, strided and broadcast accesses;
// one-thread-per-row against one-warp-per-row softmax (L2 traffic ~8x apart,
// the same HBM bytes); the first GPU run's bias-gradient kernel (768
// threads walking 8192 rows) predicted latency-bound, in milliseconds; the
// device profiles' JSON form.
//
//===----------------------------------------------------------------------===//
#include "oflow/Support/DeviceProfile.h"
#include "oflow/Codegen/KernelReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

constexpr const char *kKernels = R"mlir(
module attributes {gpu.container_module} {
gpu.module @k {
  // 256 threads: x[t] -> y[t]. A warp reads 128 contiguous bytes: 4 sectors.
  gpu.func @coalesced(%arena: memref<?xi8>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1m = arith.constant 1048576 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<256xf32>
    %y = memref.view %arena[%c1m][] : memref<?xi8> to memref<256xf32>
    %t = gpu.thread_id x
    %v = memref.load %x[%t] : memref<256xf32>
    memref.store %v, %y[%t] : memref<256xf32>
    gpu.return
  }
  // x[16 t]: every lane its own sector (64 bytes apart): 32 sectors per warp
  // access, 256 distinct sectors in all.
  gpu.func @strided(%arena: memref<?xi8>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c1m = arith.constant 1048576 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<4096xf32>
    %y = memref.view %arena[%c1m][] : memref<?xi8> to memref<256xf32>
    %t = gpu.thread_id x
    %i = arith.muli %t, %c16 : index
    %v = memref.load %x[%i] : memref<4096xf32>
    memref.store %v, %y[%t] : memref<256xf32>
    gpu.return
  }
  // 96 blocks (heads) all read the same 1 KB mask: 96 KB of L2 traffic, 1 KB
  // from HBM.
  gpu.func @broadcast(%arena: memref<?xi8>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 96, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1m = arith.constant 1048576 : index
    %m = memref.view %arena[%c0][] : memref<?xi8> to memref<256xf32>
    %y = memref.view %arena[%c1m][] : memref<?xi8> to memref<96x256xf32>
    %b = gpu.block_id x
    %t = gpu.thread_id x
    %v = memref.load %m[%t] : memref<256xf32>
    memref.store %v, %y[%b, %t] : memref<96x256xf32>
    gpu.return
  }
  // The same bias gradient's partial stage in the block-column strategy
  // (128 slices of 64 rows, 24 tiles of 32 columns): lane l of warp w adds
  // rows w, w + 8, ... 4 loads at a time (2 iterations); the partials meet
  // in shared memory, which costs no L2 or HBM traffic.
  gpu.func @column_partials(%arena: memref<?xi8>) workgroup(%sh : memref<8x32xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 3072, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c24 = arith.constant 24 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c32m = arith.constant 33554432 : index
    %zero = arith.constant 0.0 : f32
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<128x64x768xf32>
    %p = memref.view %arena[%c32m][] : memref<?xi8> to memref<128x768xf32>
    %t = gpu.thread_id x
    %b = gpu.block_id x
    %lane = arith.remui %t, %c32 : index
    %warp = arith.divui %t, %c32 : index
    %tile = arith.remui %b, %c24 : index
    %slice = arith.divui %b, %c24 : index
    %base = arith.muli %tile, %c32 : index
    %col = arith.addi %base, %lane : index
    %acc = scf.for %r = %warp to %c64 step %c32 iter_args(%a = %zero) -> (f32) {
      %r1 = arith.addi %r, %c8 : index
      %r2 = arith.addi %r, %c16 : index
      %r3 = arith.addi %r, %c24 : index
      %v0 = memref.load %x[%slice, %r, %col] : memref<128x64x768xf32>
      %v1 = memref.load %x[%slice, %r1, %col] : memref<128x64x768xf32>
      %v2 = memref.load %x[%slice, %r2, %col] : memref<128x64x768xf32>
      %v3 = memref.load %x[%slice, %r3, %col] : memref<128x64x768xf32>
      %s0 = arith.addf %a, %v0 : f32
      %s1 = arith.addf %s0, %v1 : f32
      %s2 = arith.addf %s1, %v2 : f32
      %s3 = arith.addf %s2, %v3 : f32
      scf.yield %s3 : f32
    }
    memref.store %acc, %sh[%warp, %lane] : memref<8x32xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %first = arith.cmpi eq, %warp, %c0 : index
    scf.if %first {
      %q0 = memref.load %sh[%c0, %lane] : memref<8x32xf32, #gpu.address_space<workgroup>>
      %q1 = memref.load %sh[%c8, %lane] : memref<8x32xf32, #gpu.address_space<workgroup>>
      %q = arith.addf %q0, %q1 : f32
      memref.store %q, %p[%slice, %col] : memref<128x768xf32>
    }
    gpu.return
  }
  // Softmax over 512 rows of 1024, one thread per row: lanes 4 KB apart.
  gpu.func @softmax_thread_per_row(%arena: memref<?xi8>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c1024 = arith.constant 1024 : index
    %off = arith.constant 2097152 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<512x1024xf32>
    %y = memref.view %arena[%off][] : memref<?xi8> to memref<512x1024xf32>
    %b = gpu.block_id x
    %t = gpu.thread_id x
    %bd = gpu.block_dim x
    %r0 = arith.muli %b, %bd : index
    %row = arith.addi %r0, %t : index
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %max = scf.for %c = %c0 to %c1024 step %c1 iter_args(%m = %ninf) -> (f32) {
      %v = memref.load %x[%row, %c] : memref<512x1024xf32>
      %n = arith.maximumf %m, %v : f32
      scf.yield %n : f32
    }
    %sum = scf.for %c = %c0 to %c1024 step %c1 iter_args(%s = %zero) -> (f32) {
      %v = memref.load %x[%row, %c] : memref<512x1024xf32>
      %d = arith.subf %v, %max : f32
      %e = math.exp %d : f32
      %n = arith.addf %s, %e : f32
      scf.yield %n : f32
    }
    scf.for %c = %c0 to %c1024 step %c1 {
      %v = memref.load %x[%row, %c] : memref<512x1024xf32>
      %d = arith.subf %v, %max : f32
      %e = math.exp %d : f32
      %q = arith.divf %e, %sum : f32
      memref.store %q, %y[%row, %c] : memref<512x1024xf32>
    }
    gpu.return
  }
  // The same softmax, one warp per row (8 rows per block): lanes read
  // consecutive columns; partial results combine through shuffles.
  gpu.func @softmax_warp_per_row(%arena: memref<?xi8>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %off = arith.constant 2097152 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<512x1024xf32>
    %y = memref.view %arena[%off][] : memref<?xi8> to memref<512x1024xf32>
    %b = gpu.block_id x
    %t = gpu.thread_id x
    %lane = arith.remui %t, %c32 : index
    %w = arith.divui %t, %c32 : index
    %b8 = arith.muli %b, %c8 : index
    %row = arith.addi %b8, %w : index
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %o16 = arith.constant 16 : i32
    %w32 = arith.constant 32 : i32
    %pmax = scf.for %c = %c0 to %c32 step %c1 iter_args(%m = %ninf) -> (f32) {
      %base = arith.muli %c, %c32 : index
      %col = arith.addi %base, %lane : index
      %v = memref.load %x[%row, %col] : memref<512x1024xf32>
      %n = arith.maximumf %m, %v : f32
      scf.yield %n : f32
    }
    %smax, %ok1 = gpu.shuffle xor %pmax, %o16, %w32 : f32
    %max = arith.maximumf %pmax, %smax : f32
    %psum = scf.for %c = %c0 to %c32 step %c1 iter_args(%s = %zero) -> (f32) {
      %base = arith.muli %c, %c32 : index
      %col = arith.addi %base, %lane : index
      %v = memref.load %x[%row, %col] : memref<512x1024xf32>
      %d = arith.subf %v, %max : f32
      %e = math.exp %d : f32
      %n = arith.addf %s, %e : f32
      scf.yield %n : f32
    }
    %ssum, %ok2 = gpu.shuffle xor %psum, %o16, %w32 : f32
    %sum = arith.addf %psum, %ssum : f32
    scf.for %c = %c0 to %c32 step %c1 {
      %base = arith.muli %c, %c32 : index
      %col = arith.addi %base, %lane : index
      %v = memref.load %x[%row, %col] : memref<512x1024xf32>
      %d = arith.subf %v, %max : f32
      %e = math.exp %d : f32
      %q = arith.divf %e, %sum : f32
      memref.store %q, %y[%row, %col] : memref<512x1024xf32>
    }
    gpu.return
  }
  // The first GPU run's bias gradient: 768 threads, each summing a column
  // over 8192 rows (coalesced, but one long chain of loads per thread).
  gpu.func @bias_grad(%arena: memref<?xi8>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 3, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c8192 = arith.constant 8192 : index
    %off = arith.constant 25165824 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<8192x768xf32>
    %g = memref.view %arena[%off][] : memref<?xi8> to memref<768xf32>
    %b = gpu.block_id x
    %t = gpu.thread_id x
    %b256 = arith.muli %b, %c256 : index
    %col = arith.addi %b256, %t : index
    %zero = arith.constant 0.0 : f32
    %acc = scf.for %r = %c0 to %c8192 step %c1 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%r, %col] : memref<8192x768xf32>
      %n = arith.addf %a, %v : f32
      scf.yield %n : f32
    }
    memref.store %acc, %g[%col] : memref<768xf32>
    gpu.return
  }
  // A fused launch (oflow-fuse-launches): block 0 sums a column of 64 rows
  // (64 dependent loads), blocks 1-4224 copy 1M floats (one load each).
  gpu.func @fused(%arena: memref<?xi8>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 4225, 1, 1>, oflow.segments = array<i64: 0, 1, 4225>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %off = arith.constant 8388608 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<64x256xf32>
    %g = memref.view %arena[%off][] : memref<?xi8> to memref<256xf32>
    %src = memref.view %arena[%c0][] : memref<?xi8> to memref<1081344xf32>
    %dst = memref.view %arena[%off][] : memref<?xi8> to memref<1081344xf32>
    %b = gpu.block_id x
    %t = gpu.thread_id x
    %first = arith.cmpi ult, %b, %c1 : index
    scf.if %first {
      %zero = arith.constant 0.0 : f32
      %acc = scf.for %r = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (f32) {
        %v = memref.load %x[%r, %t] : memref<64x256xf32>
        %n = arith.addf %a, %v : f32
        scf.yield %n : f32
      }
      memref.store %acc, %g[%t] : memref<256xf32>
    }
    %rest = arith.cmpi uge, %b, %c1 : index
    scf.if %rest {
      %b1 = arith.subi %b, %c1 : index
      %b256 = arith.muli %b1, %c256 : index
      %i = arith.addi %b256, %t : index
      %v = memref.load %src[%i] : memref<1081344xf32>
      memref.store %v, %dst[%i] : memref<1081344xf32>
    }
    gpu.return
  }
  // A bounds-checked launch: 300 points on 2 x 256 threads.
  gpu.func @guarded(%arena: memref<?xi8>) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c300 = arith.constant 300 : index
    %c1m = arith.constant 1048576 : index
    %x = memref.view %arena[%c0][] : memref<?xi8> to memref<300xf32>
    %y = memref.view %arena[%c1m][] : memref<?xi8> to memref<300xf32>
    %b = gpu.block_id x
    %t = gpu.thread_id x
    %bd = gpu.block_dim x
    %i0 = arith.muli %b, %bd : index
    %i = arith.addi %i0, %t : index
    %in = arith.cmpi ult, %i, %c300 : index
    scf.if %in {
      %v = memref.load %x[%i] : memref<300xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %y[%i] : memref<300xf32>
    }
    gpu.return
  }
}
}
)mlir";

class KernelReportTest : public ::testing::Test {
protected:
  KernelReportTest() {
    ctx.loadDialect<arith::ArithDialect, gpu::GPUDialect, math::MathDialect,
                    memref::MemRefDialect, scf::SCFDialect>();
    module = parseSourceString<ModuleOp>(kKernels, &ctx);
    device = *::oflow::builtinDeviceProfile("h200");
  }
  ::oflow::KernelCost cost(StringRef name) {
    gpu::GPUFuncOp fn;
    module->walk([&](gpu::GPUFuncOp f) {
      if (f.getName() == name)
        fn = f;
    });
    EXPECT_TRUE(fn) << name.str();
    return ::oflow::analyzeKernel(fn, device);
  }
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  ::oflow::DeviceProfile device;
};

TEST_F(KernelReportTest, CoalescedWarpTouchesFourSectors) {
  ASSERT_TRUE(module);
  auto k = cost("coalesced");
  // 8 warps x 4 sectors x 32 B, for the load and for the store.
  EXPECT_DOUBLE_EQ(k.l2Bytes, 2 * 8 * 4 * 32);
  EXPECT_DOUBLE_EQ(k.hbmBytes, 2 * 1024);
  EXPECT_EQ(k.strategy, "pointwise (fallback)");
  EXPECT_EQ(k.loadChain, 1);
}

TEST_F(KernelReportTest, StridedLanesTouchOneSectorEach) {
  ASSERT_TRUE(module);
  auto k = cost("strided");
  // Load: 8 warps x 32 sectors; store: 8 x 4.
  EXPECT_DOUBLE_EQ(k.l2Bytes, (8 * 32 + 8 * 4) * 32);
  // 256 distinct sectors read (not the 16 KB span), 1 KB written.
  EXPECT_DOUBLE_EQ(k.hbmBytes, 256 * 32 + 1024);
}

TEST_F(KernelReportTest, BroadcastIsReadOnceFromHbm) {
  ASSERT_TRUE(module);
  auto k = cost("broadcast");
  EXPECT_DOUBLE_EQ(k.l2Bytes, 2 * 96 * 8 * 4 * 32);
  EXPECT_DOUBLE_EQ(k.hbmBytes, 1024 + 96 * 1024);
}

TEST_F(KernelReportTest, ThreadPerRowSoftmaxMovesEightTimesTheL2Traffic) {
  ASSERT_TRUE(module);
  auto thread = cost("softmax_thread_per_row");
  auto warp = cost("softmax_warp_per_row");
  // Both read the 2 MB input and write the 2 MB output once from HBM.
  EXPECT_DOUBLE_EQ(thread.hbmBytes, 4 << 20);
  EXPECT_DOUBLE_EQ(warp.hbmBytes, 4 << 20);
  // Warp per row: three reads and one write of 2 MB through L2.
  EXPECT_DOUBLE_EQ(warp.l2Bytes, 4.0 * (2 << 20));
  double ratio = thread.l2Bytes / warp.l2Bytes;
  EXPECT_GT(ratio, 7.5);
  EXPECT_LT(ratio, 8.5);
  // 512 rows x 1024 x (max, sub+exp+add, sub+exp+div).
  EXPECT_DOUBLE_EQ(thread.flops, 512.0 * 1024 * 7);
  // Thread per row is bound by its 3 x 1024 dependent loads.
  EXPECT_GT(thread.seconds, warp.seconds);
}

TEST_F(KernelReportTest, LongColumnSumIsLatencyBoundInMilliseconds) {
  ASSERT_TRUE(module);
  auto k = cost("bias_grad");
  EXPECT_EQ(k.loadChain, 8192);
  EXPECT_EQ(k.bound, "latency");
  // 8192 dependent loads x 600 ns ~ 4.9 ms, though the 25 MB it reads would
  // take 6 us at full bandwidth.
  EXPECT_GT(k.seconds, 4e-3);
  EXPECT_LT(k.seconds, 6e-3);
  EXPECT_DOUBLE_EQ(k.hbmBytes, 8192.0 * 768 * 4 + 768 * 4);
}

TEST_F(KernelReportTest, BlockColumnSumIsMemoryBound) {
  ASSERT_TRUE(module);
  auto k = cost("column_partials");
  // The 24 MB read and the partials written, nothing for shared memory
  // (the stores of warp 0 alone are estimated from sampled warps).
  EXPECT_NEAR(k.hbmBytes, 128.0 * 64 * 768 * 4 + 128 * 768 * 4, 1e-3 * 25559040);
  EXPECT_EQ(k.loadChain, 2);
  EXPECT_EQ(k.bound, "memory");
  // ~5.9 us at 4.3 TB/s, 4 us launch: 700x faster than one thread per column.
  EXPECT_LT(k.seconds, 12e-6);
}

TEST_F(KernelReportTest, FusedLaunchPaysItsLongChainOnlyForItsOwnBlocks) {
  ASSERT_TRUE(module);
  auto k = cost("fused");
  ASSERT_EQ(k.segments.size(), 2u);
  EXPECT_EQ(k.loadChain, 64);
  // Block 0's 64 rounds (38 us) bound the launch. Charging them to all five
  // waves of the grid, as for one kernel, would predict 192 us.
  EXPECT_EQ(k.bound, "latency");
  EXPECT_GT(k.seconds, 38e-6);
  EXPECT_LT(k.seconds, 50e-6);
}

TEST_F(KernelReportTest, BoundsCheckedLanesDoNotCount) {
  ASSERT_TRUE(module);
  auto k = cost("guarded");
  // 300 points: 10 warps with a lane on (the last has 12); 300 multiplies.
  EXPECT_DOUBLE_EQ(k.flops, 300);
  EXPECT_DOUBLE_EQ(k.hbmBytes, 2 * 1216); // 38 sectors read, 38 written
}

} // namespace

// GEMM calls: the vocabulary's GEMMs (an extent of 50257, not a multiple
// of 8) run on zero-padded copies in the CUDA runtime, and the report prices
// the copies and the padded product; a calibration's measured time for the
// padded shape wins over the rate. Even, small and batched GEMMs are not
// padded.
constexpr const char *kGemmCalls = R"mlir(
func.func private @oflow_rt_gemm_lowp(i64, i64, i64, i64, i64, i64, f32, index, i64, index, i64, f32, index, i64)
func.func private @oflow_rt_gemm_lowp_batched(i64, i64, i64, i64, i64, i64, i64, f32, index, i64, i64, index, i64, i64, f32, index, i64, i64)
func.func @step(%p: index) {
  %bf16 = arith.constant 5 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c64 = arith.constant 64 : i64
  %c65 = arith.constant 65 : i64
  %c768 = arith.constant 768 : i64
  %c8192 = arith.constant 8192 : i64
  %c50257 = arith.constant 50257 : i64
  %c50304 = arith.constant 50304 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  // logits[8192][50257] = x[8192][768] W[50257][768]^T: n odd.
  func.call @oflow_rt_gemm_lowp(%bf16, %c0, %c1, %c8192, %c50257, %c768, %one, %p, %c768, %p, %c768, %zero, %p, %c50257) : (i64, i64, i64, i64, i64, i64, f32, index, i64, index, i64, f32, index, i64) -> ()
  // The same with a vocabulary padded to 50304: even.
  func.call @oflow_rt_gemm_lowp(%bf16, %c0, %c1, %c8192, %c50304, %c768, %one, %p, %c768, %p, %c768, %zero, %p, %c50304) : (i64, i64, i64, i64, i64, i64, f32, index, i64, index, i64, f32, index, i64) -> ()
  // Small: m n k below 2^30.
  func.call @oflow_rt_gemm_lowp(%bf16, %c0, %c0, %c64, %c65, %c64, %one, %p, %c64, %p, %c65, %zero, %p, %c65) : (i64, i64, i64, i64, i64, i64, f32, index, i64, index, i64, f32, index, i64) -> ()
  // Batched: never padded.
  func.call @oflow_rt_gemm_lowp_batched(%bf16, %c64, %c0, %c1, %c8192, %c50257, %c768, %one, %p, %c768, %c0, %p, %c768, %c0, %zero, %p, %c50257, %c0) : (i64, i64, i64, i64, i64, i64, i64, f32, index, i64, i64, index, i64, i64, f32, index, i64, i64) -> ()
  return
}
)mlir";

TEST(KernelReportGemmTest, UnalignedRowsArePaddedAndPriced) {
  MLIRContext ctx;
  ctx.loadDialect<arith::ArithDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kGemmCalls, &ctx);
  ASSERT_TRUE(module);
  ::oflow::DeviceProfile h200 = *::oflow::builtinDeviceProfile("h200");
  auto entries = ::oflow::analyzeProgram(*module, h200);
  ASSERT_EQ(entries.size(), 1u);
  const auto &calls = entries[0].launches;
  ASSERT_EQ(calls.size(), 4u);
  double M = 8192, N = 50257, K = 768;
  EXPECT_EQ(calls[0].strategy, "bf16 8192x50257x768 +pad");
  // A and B read (bf16), C written (f32); B (the 50257 rows of W) copied in
  // and C copied out: each read and written once more.
  double copies = 2 * K * N * 2 + 2 * M * N * 4;
  EXPECT_DOUBLE_EQ(calls[0].hbmBytes, (M * K + K * N) * 2 + M * N * 4 + copies);
  double launch = h200.graphLaunchSeconds;
  EXPECT_NEAR(calls[0].seconds, 2 * M * N * K / 650e12 + copies / 4.3e12 + launch, 1e-9);
  // The GEMM, B's copy and the memset of its 47 padded rows, C's copy out.
  EXPECT_EQ(calls[0].nodes, 4);
  EXPECT_EQ(entries[0].nodes, 4 + 3);
  EXPECT_EQ(calls[1].strategy, "bf16 8192x50304x768");
  EXPECT_EQ(calls[1].nodes, 1);
  EXPECT_EQ(calls[2].strategy, "bf16 64x65x64");
  EXPECT_EQ(calls[3].strategy, "bf16 64x 8192x50257x768");

  // Measured: the padded shape's time, plus the copies.
  h200.gemms.push_back({"bf16", 8192, 50304, 768, 1, 7.9e-4});
  h200.gemms.push_back({"bf16", 8192, 50257, 768, 1, 4.6e-3}); // unpadded: not used
  entries = ::oflow::analyzeProgram(*module, h200);
  EXPECT_EQ(entries[0].launches[0].bound, "measured");
  EXPECT_NEAR(entries[0].launches[0].seconds, 7.9e-4 + copies / 4.3e12 + launch, 1e-9);
  EXPECT_NEAR(entries[0].launches[1].seconds, 7.9e-4 + launch, 1e-9);
}

constexpr const char *kAttentionCalls = R"mlir(
func.func private @oflow_rt_attention_fwd(i64, i64, i64, i64, i64, i64, f32, index, index, index, index, index)
func.func private @oflow_rt_attention_bwd(i64, i64, i64, i64, i64, i64, f32, index, index, index, index, index, index, index, index, index, index)
func.func @step(%p: index) {
  %bf16 = arith.constant 5 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c64 = arith.constant 64 : i64
  %c96 = arith.constant 96 : i64
  %c1024 = arith.constant 1024 : i64
  %scale = arith.constant 0.125 : f32
  // GPT-2 small's attention: 96 batch-heads, T 1024, head dim 64, causal.
  func.call @oflow_rt_attention_fwd(%bf16, %c1, %c96, %c1024, %c1024, %c64, %scale, %p, %p, %p, %p, %p) : (i64, i64, i64, i64, i64, i64, f32, index, index, index, index, index) -> ()
  func.call @oflow_rt_attention_bwd(%bf16, %c1, %c96, %c1024, %c1024, %c64, %scale, %p, %p, %p, %p, %p, %p, %p, %p, %p, %p) : (i64, i64, i64, i64, i64, i64, f32, index, index, index, index, index, index, index, index, index, index) -> ()
  // Not causal: every (query, key) pair.
  func.call @oflow_rt_attention_fwd(%bf16, %c0, %c96, %c1024, %c1024, %c64, %scale, %p, %p, %p, %p, %p) : (i64, i64, i64, i64, i64, i64, f32, index, index, index, index, index) -> ()
  return
}
)mlir";

TEST(KernelReportAttentionTest, FusedAttentionNeverCountsTheScores) {
  MLIRContext ctx;
  ctx.loadDialect<arith::ArithDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kAttentionCalls, &ctx);
  ASSERT_TRUE(module);
  ::oflow::DeviceProfile h200 = *::oflow::builtinDeviceProfile("h200");
  auto entries = ::oflow::analyzeProgram(*module, h200);
  ASSERT_EQ(entries.size(), 1u);
  const auto &calls = entries[0].launches;
  ASSERT_EQ(calls.size(), 3u);
  double bh = 96, t = 1024, d = 64, pairs = t * (t + 1) / 2;
  EXPECT_EQ(calls[0].strategy, "attention fwd bf16 96x1024x1024x64 causal");
  EXPECT_EQ(calls[2].strategy, "attention fwd bf16 96x1024x1024x64");
  // q, k, v read and o written once (f32), plus the log-sum-exp: 101 MB,
  // not the 403 MB of f32 scores per pass the unfused ops move.
  EXPECT_DOUBLE_EQ(calls[0].hbmBytes, 4 * bh * t * d * 4 + bh * t * 4);
  EXPECT_DOUBLE_EQ(calls[0].flops, 4 * bh * pairs * d);
  EXPECT_DOUBLE_EQ(calls[2].flops, 4 * bh * t * t * d);
  EXPECT_EQ(calls[0].bound, "compute");
  // The measured H200 forward took 96 us; the share of the GEMM rate the
  // report prices it at reproduces that within 5%.
  EXPECT_NEAR(calls[0].seconds, 96e-6, 0.05 * 96e-6);
  // The backward: delta, dk+dv and dq kernels (measured 308 us).
  EXPECT_EQ(calls[1].nodes, 3);
  EXPECT_EQ(entries[0].nodes, 1 + 3 + 1);
  EXPECT_DOUBLE_EQ(calls[1].flops, 14 * bh * pairs * d);
  EXPECT_NEAR(calls[1].seconds, 308e-6, 0.1 * 308e-6);
}

// One kernel reading two views and writing a third of the arena, each at a
// shift its launch passes (the arena offsets a model's repeated layers
// differ in), launched with shifts that cost the same and shifts that do
// not: analyzeProgram analyses a launch once per canonical set of shifts
// (their 128-byte alignment, and which views can overlap), and must give
// each launch what analysing it alone gives.
constexpr const char *kShiftedLaunches = R"mlir(
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @copy_sum(%arena: memref<?xi8>, %sx: index, %sz: index, %sy: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
    %x = memref.view %arena[%sx][] : memref<?xi8> to memref<256xf32>
    %z = memref.view %arena[%sz][] : memref<?xi8> to memref<256xf32>
    %y = memref.view %arena[%sy][] : memref<?xi8> to memref<256xf32>
    %t = gpu.thread_id x
    %a = memref.load %x[%t] : memref<256xf32>
    %b = memref.load %z[%t] : memref<256xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %y[%t] : memref<256xf32>
    gpu.return
  }
}
func.func @step(%arena: memref<?xi8>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c512 = arith.constant 512 : index
  %c1m = arith.constant 1048576 : index
  %c2m = arith.constant 2097152 : index
  %c3m = arith.constant 3145728 : index
  %c5m = arith.constant 5242880 : index
  %c9m = arith.constant 9437184 : index
  // Far apart, aligned.
  gpu.launch_func @k::@copy_sum blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%arena : memref<?xi8>, %c0 : index, %c1m : index, %c2m : index)
  // Far apart, aligned, other gaps: the same cost.
  gpu.launch_func @k::@copy_sum blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%arena : memref<?xi8>, %c3m : index, %c9m : index, %c5m : index)
  // x 16 bytes past a sector: every warp access touches one sector more.
  gpu.launch_func @k::@copy_sum blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%arena : memref<?xi8>, %c16 : index, %c1m : index, %c2m : index)
  // z overlapping half of x: the shared half is read from HBM once.
  gpu.launch_func @k::@copy_sum blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%arena : memref<?xi8>, %c0 : index, %c512 : index, %c2m : index)
  return
}
}
)mlir";

TEST(KernelReportLaunchTest, RepeatedLaunchesCostWhatEachCostsAlone) {
  MLIRContext ctx;
  ctx.loadDialect<arith::ArithDialect, func::FuncDialect, gpu::GPUDialect,
                  memref::MemRefDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kShiftedLaunches, &ctx);
  ASSERT_TRUE(module);
  ::oflow::DeviceProfile h200 = *::oflow::builtinDeviceProfile("h200");
  auto entries = ::oflow::analyzeProgram(*module, h200);
  ASSERT_EQ(entries.size(), 1u);
  const auto &launches = entries[0].launches;
  ASSERT_EQ(launches.size(), 4u);
  gpu::GPUFuncOp kernel;
  module->walk([&](gpu::GPUFuncOp f) { kernel = f; });
  ASSERT_TRUE(kernel);
  ::oflow::DeviceProfile graph = h200;
  graph.launchSeconds = h200.graphLaunchSeconds; // no collectives: replayed
  int64_t shifts[4][3] = {{0, 1048576, 2097152},
                          {3145728, 9437184, 5242880},
                          {16, 1048576, 2097152},
                          {0, 512, 2097152}};
  for (int i = 0; i < 4; ++i) {
    SmallVector<std::optional<int64_t>> args = {std::nullopt, shifts[i][0], shifts[i][1],
                                                shifts[i][2]};
    ::oflow::KernelCost alone = ::oflow::analyzeKernel(kernel, graph, {1, 1, 1}, {256, 1, 1}, args);
    EXPECT_DOUBLE_EQ(launches[i].l2Bytes, alone.l2Bytes) << "launch " << i;
    EXPECT_DOUBLE_EQ(launches[i].hbmBytes, alone.hbmBytes) << "launch " << i;
    EXPECT_DOUBLE_EQ(launches[i].seconds, alone.seconds) << "launch " << i;
  }
  // The cases differ where they should: 3 x 1 KB moved when far apart and
  // aligned (8 warps x 4 sectors per access); x misaligned, 8 more sectors
  // read; z over half of x, 512 bytes fewer read from HBM.
  EXPECT_DOUBLE_EQ(launches[0].hbmBytes, 3 * 1024);
  EXPECT_DOUBLE_EQ(launches[1].hbmBytes, 3 * 1024);
  EXPECT_DOUBLE_EQ(launches[2].l2Bytes, launches[0].l2Bytes + 8 * 32);
  EXPECT_DOUBLE_EQ(launches[3].hbmBytes, 3 * 1024 - 512);
}
