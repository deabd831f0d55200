// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-fuse-elementwise))' | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Checks that an elementwise producer with one use is fused into an
// elementwise consumer, as upstream's -linalg-fuse-elementwise-ops does.
// CHECK-LABEL: func.func @fused(
// CHECK:         linalg.generic
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
func.func @fused(%a: tensor<2x4x5x5xf32>, %b: tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32> {
  %e = tensor.empty() : tensor<2x4x5x5xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%a, %b : tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) outs(%e : tensor<2x4x5x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<2x4x5x5xf32>
  %e2 = tensor.empty() : tensor<2x4x5x5xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%g, %a : tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) outs(%e2 : tensor<2x4x5x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<2x4x5x5xf32>
  return %s : tensor<2x4x5x5xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Checks that the same producer stays apart from its only user when that
// user reads a window (a filter gradient): it is computed once, not once per
// filter tap, and the user keeps its out + a * b body.

// CHECK-LABEL: func.func @window_user(
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:           arith.mulf
// CHECK:           linalg.yield
// CHECK:         linalg.generic {{.*}} ins(%[[G]], %{{.*}} : tensor<2x4x5x5xf32>, tensor<2x3x7x7xf32>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      linalg.yield
func.func @window_user(%a: tensor<2x4x5x5xf32>, %b: tensor<2x4x5x5xf32>, %x: tensor<2x3x7x7xf32>,
                       %init: tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32> {
  %e = tensor.empty() : tensor<2x4x5x5xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%a, %b : tensor<2x4x5x5xf32>, tensor<2x4x5x5xf32>) outs(%e : tensor<2x4x5x5xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<2x4x5x5xf32>
  %dw = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>,
                                         affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>,
                                         affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                          "reduction", "reduction", "reduction"]}
    ins(%g, %x : tensor<2x4x5x5xf32>, tensor<2x3x7x7xf32>) outs(%init : tensor<4x3x3x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x3x3x3xf32>
  return %dw : tensor<4x3x3x3xf32>
}
