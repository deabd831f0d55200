// RUN: remat-opt %s -split-input-file -remat-dedupe-functions | FileCheck %s

// Checks that private functions identical up to their names are merged into
// the first, every call and func.constant naming a dropped one names the
// kept one, and the public function and a function that differs (another
// constant) are kept. A second round merges the callers that became
// identical once their callees agreed.
// CHECK-LABEL: func.func private @exp_a(
// CHECK-NOT:   func.func private @exp_b(
// CHECK:       func.func private @log_c(
// CHECK-LABEL: func.func private @outer_a(
// CHECK:         call @exp_a
// CHECK-NOT:   func.func private @outer_b(
// CHECK-LABEL: func.func @step(
// CHECK:         call @exp_a(
// CHECK:         call @exp_a(
// CHECK:         call @log_c(
// CHECK:         call @outer_a(
// CHECK:         call @outer_a(
// CHECK:         constant @exp_a
// CHECK:         constant @exp_a
func.func private @exp_a(%x: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %m = arith.mulf %x, %c : f32
  %e = math.exp %m : f32
  return %e : f32
}
func.func private @exp_b(%y: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %m = arith.mulf %y, %c : f32
  %e = math.exp %m : f32
  return %e : f32
}
func.func private @log_c(%x: f32) -> f32 {
  %c = arith.constant 3.0 : f32
  %m = arith.mulf %x, %c : f32
  %e = math.exp %m : f32
  return %e : f32
}
func.func private @outer_a(%x: f32) -> f32 {
  %e = call @exp_a(%x) : (f32) -> f32
  return %e : f32
}
func.func private @outer_b(%x: f32) -> f32 {
  %e = call @exp_b(%x) : (f32) -> f32
  return %e : f32
}
func.func @step(%x: f32) -> (f32, f32, f32, f32, f32, (f32) -> f32, (f32) -> f32) {
  %a = call @exp_a(%x) : (f32) -> f32
  %b = call @exp_b(%x) : (f32) -> f32
  %c = call @log_c(%x) : (f32) -> f32
  %d = call @outer_a(%x) : (f32) -> f32
  %e = call @outer_b(%x) : (f32) -> f32
  %fa = func.constant @exp_a : (f32) -> f32
  %fb = func.constant @exp_b : (f32) -> f32
  return %a, %b, %c, %d, %e, %fa, %fb : f32, f32, f32, f32, f32, (f32) -> f32, (f32) -> f32
}

// -----

// Checks that GPU kernel modules with the same kernel are merged and the
// launches of a dropped one name the kept module and its kernel.
// CHECK-LABEL: gpu.module @k0
// CHECK:         gpu.func @k0
// CHECK-NOT:   gpu.module @k1
// CHECK:       gpu.module @k2
// CHECK-LABEL: func.func @launches(
// CHECK:         gpu.launch_func @k0::@k0
// CHECK:         gpu.launch_func @k0::@k0
// CHECK:         gpu.launch_func @k2::@k2
module attributes {gpu.container_module} {
  gpu.module @k0 {
    gpu.func @k0(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      %e = math.exp %v : f32
      memref.store %e, %x[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @k1 {
    gpu.func @k1(%y: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %y[%i] : memref<8xf32>
      %e = math.exp %v : f32
      memref.store %e, %y[%i] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @k2 {
    gpu.func @k2(%x: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<8xf32>
      %e = math.log %v : f32
      memref.store %e, %x[%i] : memref<8xf32>
      gpu.return
    }
  }
  func.func @launches(%x: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @k0::@k0 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%x : memref<8xf32>)
    gpu.launch_func @k1::@k1 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%x : memref<8xf32>)
    gpu.launch_func @k2::@k2 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%x : memref<8xf32>)
    return
  }
}
