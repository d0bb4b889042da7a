// oflow-infer-sbp prices compute on a device profile and collectives on the
// mesh axis's link. A 64x4096 by 4096x4096 matmul whose input and result are
// whole (B) on 2 devices: split its rows and all-gather the result (half the
// FLOPs, 0.5 MB sent per device), or compute it whole on both.
//
// One CPU rank (100 GFLOP/s): 21 ms whole, 11 ms split plus a 52 us gather:
// split.
// RUN: oflow-opt %s '-oflow-infer-sbp=sbp=x=B' | FileCheck %s --check-prefix=SPLIT
// RUN: oflow-opt %s '-oflow-infer-sbp=sbp=x=B device=cpu' | FileCheck %s --check-prefix=SPLIT
// An H200 (fp32 GEMMs 50 TFLOP/s): 43 us whole; split is 21 us plus the
// gather over the default link (local, 10 GB/s: 54 us): whole.
// RUN: oflow-opt %s '-oflow-infer-sbp=sbp=x=B device=h200' | FileCheck %s --check-prefix=WHOLE
// The same over NVLink (370 GB/s, 10 us): 21 + 11 us, split again.
// RUN: sed 's/mesh<2>/mesh<2, links = [nvlink]>/' %s | oflow-opt '-oflow-infer-sbp=sbp=x=B device=h200' | FileCheck %s --check-prefix=SPLIT
// In bf16 (650 TFLOP/s) the H200 is bound by reading the weight either
// way (16 us): whole, even over NVLink.
// RUN: sed 's/mesh<2>/mesh<2, links = [nvlink]>/' %s | oflow-opt '-oflow-infer-sbp=sbp=x=B device=h200 precision=bf16' | FileCheck %s --check-prefix=WHOLE
// A JSON profile file, as --emit=kernels reads it: a slow GPU splits.
// RUN: echo '{"name": "slow", "hbm_bytes_per_s": 1e11, "flops_per_s": {"bf16": 1e12, "fp16": 1e12, "tf32": 1e12, "fp32": 1e12}, "memory_latency_s": 1e-6, "launch_s": 1e-5, "graph_launch_s": 1e-6, "multiprocessors": 1, "max_threads_per_multiprocessor": 1024}' > %t.json
// RUN: oflow-opt %s "-oflow-infer-sbp=sbp=x=B device=%t.json" | FileCheck %s --check-prefix=SPLIT
//
// RUN: not oflow-opt %s '-oflow-infer-sbp=device=h900' 2>&1 | FileCheck %s --check-prefix=NODEV
// RUN: not oflow-opt %s '-oflow-infer-sbp=precision=int8' 2>&1 | FileCheck %s --check-prefix=PREC

// SPLIT: oflow.matmul %arg0, %{{.*}} {oflow.operand_sbp = [#oflow.nd_sbp<[S(0)]>, #oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[S(0)]>]}
// WHOLE: oflow.matmul %arg0, %{{.*}} {oflow.operand_sbp = [#oflow.nd_sbp<[B]>, #oflow.nd_sbp<[B]>], oflow.sbp = [#oflow.nd_sbp<[B]>]}
// NODEV: error: oflow-infer-sbp: device profile h900: not a built-in profile (h200, h100, a100, cpu) and not a readable file
// PREC: error: oflow-infer-sbp: unknown precision 'int8' (fp32, tf32, bf16 or fp16)

module attributes {oflow.mesh = #oflow.mesh<2>} {
  oflow.variable @w param : tensor<4096x4096xf32>
  func.func @infer(%x: tensor<64x4096xf32> {oflow.name = "x"}) -> tensor<64x4096xf32> attributes {oflow.entry = "infer"} {
    %w = oflow.read_variable @w : tensor<4096x4096xf32>
    %y = oflow.matmul %x, %w : (tensor<64x4096xf32>, tensor<4096x4096xf32>) -> tensor<64x4096xf32>
    return %y : tensor<64x4096xf32>
  }
}
