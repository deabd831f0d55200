// RUN: remat-opt %s -split-input-file -remat-approximate-math | FileCheck %s

// Checks that tanh, erf, erfc and exp on f32 vectors and scalars become upstream's
// polynomial approximations (fused multiply-adds on the same type, no math
// call left), and that f64, which the approximations do not cover, and other
// math ops are left to the lowerings after it.

// CHECK-LABEL: func.func @vector_tanh(
// CHECK-NOT:     math.tanh
// CHECK:         math.fma %{{.*}} : vector<8xf32>
// CHECK-NOT:     math.tanh
// CHECK:         return
func.func @vector_tanh(%x: vector<8xf32>) -> vector<8xf32> {
  %t = math.tanh %x : vector<8xf32>
  return %t : vector<8xf32>
}

// -----

// CHECK-LABEL: func.func @scalar_erf_erfc(
// CHECK-NOT:     math.erf
// CHECK:         math.fma %{{.*}} : f32
// CHECK-NOT:     math.erf
// CHECK:         return
func.func @scalar_erf_erfc(%x: f32) -> (f32, f32) {
  %e = math.erf %x : f32
  %c = math.erfc %x : f32
  return %e, %c : f32, f32
}

// -----

// CHECK-LABEL: func.func @vector_exp(
// CHECK-NOT:     math.exp
// CHECK:         math.fma %{{.*}} : vector<8xf32>
// CHECK-NOT:     math.exp
// CHECK:         return
func.func @vector_exp(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %x : vector<8xf32>
  return %e : vector<8xf32>
}

// -----

// CHECK-LABEL: func.func @left_alone(
// CHECK-NEXT:    math.tanh %{{.*}} : f64
// CHECK-NEXT:    math.exp %{{.*}} : f64
// CHECK-NEXT:    math.log %{{.*}} : vector<8xf32>
// CHECK-NEXT:    return
func.func @left_alone(%x: f64, %y: vector<8xf32>) -> (f64, f64, vector<8xf32>) {
  %t = math.tanh %x : f64
  %e = math.exp %x : f64
  %l = math.log %y : vector<8xf32>
  return %t, %e, %l : f64, f64, vector<8xf32>
}
