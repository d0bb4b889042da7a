// oflow-form-gpu-kernels: host code that cannot avoid touching device
// memory is an error naming the op.
//
// RUN: oflow-opt %s -split-input-file -verify-diagnostics -oflow-form-gpu-kernels

func.func private @oflow_rt_use(f32)

func.func @host_use(%io: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %view = memref.view %io[%c0][] : memref<?xi8> to memref<f32>
  // expected-note @+1 {{read here}}
  %x = memref.load %view[] : memref<f32>
  // expected-error @+1 {{on the CUDA target the host cannot use a value that lives in device memory}}
  func.call @oflow_rt_use(%x) : (f32) -> ()
  return
}

// -----

func.func @overwritten(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.view %arena[%c0][] : memref<?xi8> to memref<f32>
  %v = memref.view %arena[%c0][] : memref<?xi8> to memref<8xf32>
  // expected-error @+1 {{on the CUDA target this read of device memory must move into the kernel that uses it, but the memory may change before that kernel}}
  %x = memref.load %s[] : memref<f32>
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %cst, %v[%i] : memref<8xf32>
    scf.reduce
  }
  // expected-note @+1 {{the kernel}}
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %x, %v[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

func.func private @oflow_rt_barrier()

func.func @conditional_call(%io: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c0_i8 = arith.constant 0 : i8
  %view = memref.view %io[%c0][] : memref<?xi8> to memref<i8>
  %flag = memref.load %view[] : memref<i8>
  %cond = arith.cmpi ne, %flag, %c0_i8 : i8
  scf.if %cond {
    // expected-error @+1 {{on the CUDA target this op cannot run under a condition that the host cannot evaluate}}
    func.call @oflow_rt_barrier() : () -> ()
  }
  return
}

// -----

func.func @host_alloc() {
  // expected-error @+1 {{on the CUDA target this op would touch device memory on the host, and oflow-form-gpu-kernels cannot move it into a kernel}}
  %buffer = memref.alloc() : memref<16xf32>
  return
}

// -----

// Threads of the kernel that uses the value would overwrite it.
func.func @overwritten_by_its_kernel(%arena: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.view %arena[%c0][] : memref<?xi8> to memref<f32>
  %v = memref.view %arena[%c0][] : memref<?xi8> to memref<8xf32>
  // expected-error @+1 {{on the CUDA target this read of device memory must move into the kernel that uses it, but the memory may change before that kernel}}
  %x = memref.load %s[] : memref<f32>
  // expected-note @+1 {{the kernel}}
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %x, %v[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
