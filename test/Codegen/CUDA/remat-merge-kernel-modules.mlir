// RUN: remat-opt %s -split-input-file -remat-merge-kernel-modules=kernels-per-module=2 | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-merge-kernel-modules=kernels-per-module=1 | FileCheck %s --check-prefix=NONE

// Checks that consecutive kernel modules are gathered two at a time into
// the first of each pair, a kernel whose name is taken there is renamed
// after its module, and so is a function of the same name and another
// body (its module's own calls follow), a declaration the first module
// already holds is dropped, a third module
// starts a new group, and every launch names its kernel's new place.
// CHECK-LABEL: gpu.module @m0 {
// CHECK:         func.func private @helper(f32) -> f32
// CHECK-NOT:     func.func private @helper
// CHECK:         gpu.func @step_kernel(%{{.*}}: memref<8xf32>) kernel
// CHECK:           func.call @helper
// CHECK:         func.func @twice(
// CHECK-NEXT:      arith.mulf
// CHECK:         gpu.func @m1_step_kernel(%{{.*}}: memref<8xf32>) kernel
// CHECK:           memref.store
// CHECK:           func.call @m1_twice
// CHECK:         func.func @m1_twice(
// CHECK-NEXT:      arith.addf
// CHECK:       }
// CHECK-NOT:   gpu.module @m1
// CHECK:       gpu.module @m2 {
// CHECK:         gpu.func @step_kernel(
// CHECK-LABEL: func.func @launch(
// CHECK:         gpu.launch_func @m0::@step_kernel
// CHECK:         gpu.launch_func @m0::@m1_step_kernel
// CHECK:         gpu.launch_func @m2::@step_kernel
// CHECK:         gpu.launch_func @m0::@m1_step_kernel

// NONE-COUNT-3: gpu.module
// NONE:         gpu.launch_func @m0::@step_kernel
// NONE:         gpu.launch_func @m1::@step_kernel
// NONE:         gpu.launch_func @m2::@step_kernel
module attributes {gpu.container_module} {
  gpu.module @m0 {
    func.func private @helper(f32) -> f32
    gpu.func @step_kernel(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      %w = func.call @helper(%v) : (f32) -> f32
      memref.store %w, %x[%i] : memref<8xf32>
      gpu.return
    }
    func.func @twice(%v: f32) -> f32 {
      %w = arith.mulf %v, %v : f32
      return %w : f32
    }
  }
  gpu.module @m1 {
    func.func private @helper(f32) -> f32
    gpu.func @step_kernel(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      memref.store %v, %x[%i] : memref<8xf32>
      %w = func.call @twice(%v) : (f32) -> f32
      memref.store %w, %x[%i] : memref<8xf32>
      gpu.return
    }
    func.func @twice(%v: f32) -> f32 {
      %w = arith.addf %v, %v : f32
      return %w : f32
    }
  }
  gpu.module @m2 {
    gpu.func @step_kernel(%x: memref<8xf32>) kernel {
      gpu.return
    }
  }
  func.func @launch(%a: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @m0::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @m1::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @m2::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @m1::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
}
