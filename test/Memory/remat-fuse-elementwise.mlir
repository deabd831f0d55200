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

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Checks that a comparison of f32 values (a ReLU's backward reading its
// forward output %out, which the forward also reads) stays apart from its
// only user when %out has no reader at or after that user: fused, the
// select would keep the 4-byte elements of %out alive until it runs;
// unfused, the schedule can run the comparison right after %out is made and
// keep one byte an element.
// CHECK-LABEL: func.func @narrowing_producer(
// CHECK:         %[[OUT:.*]] = linalg.generic
// CHECK:           arith.maximumf
// CHECK:         %[[LE:.*]] = linalg.generic {{.*}} ins(%[[OUT]] : tensor<16x32xf32>)
// CHECK:           arith.cmpf ole
// CHECK:         linalg.generic {{.*}} ins(%[[LE]], %{{.*}} : tensor<16x32xi1>, tensor<16x32xf32>)
// CHECK-NOT:       arith.cmpf
// CHECK:           arith.select
func.func @narrowing_producer(%x: tensor<16x32xf32>, %dy: tensor<16x32xf32>)
    -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %out = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%x : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %ebool = tensor.empty() : tensor<16x32xi1>
  %le = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%out : tensor<16x32xf32>) outs(%ebool : tensor<16x32xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf ole, %a, %zero : f32
    linalg.yield %c : i1
  } -> tensor<16x32xi1>
  %sum = tensor.empty() : tensor<16x32xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%out : tensor<16x32xf32>) outs(%sum : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %dx = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%le, %dy : tensor<16x32xi1>, tensor<16x32xf32>) outs(%e2 : tensor<16x32xf32>) {
  ^bb0(%c: i1, %g: f32, %o: f32):
    %r = arith.select %c, %zero, %g : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  return %s, %dx : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Checks that the same comparison fuses when its operand is read again at
// its user (the select also reads %out): fusing keeps nothing alive longer,
// and the whole chain becomes one op.
// CHECK-LABEL: func.func @narrowing_producer_operand_read_later(
// CHECK:         linalg.generic
// CHECK:           arith.maximumf
// CHECK-NEXT:      arith.cmpf ole
// CHECK-NEXT:      arith.select
// CHECK-NOT:     linalg.generic
func.func @narrowing_producer_operand_read_later(%x: tensor<16x32xf32>)
    -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %out = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%x : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %ebool = tensor.empty() : tensor<16x32xi1>
  %le = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%out : tensor<16x32xf32>) outs(%ebool : tensor<16x32xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf ole, %a, %zero : f32
    linalg.yield %c : i1
  } -> tensor<16x32xi1>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %dx = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%le, %out : tensor<16x32xi1>, tensor<16x32xf32>) outs(%e2 : tensor<16x32xf32>) {
  ^bb0(%c: i1, %g: f32, %o: f32):
    %r = arith.select %c, %zero, %g : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  return %dx : tensor<16x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Checks that an elementwise producer fuses into a sum (a linalg.reduce,
// made a generic for it): the squares of a loss or a batch-norm variance
// are computed inside the sum, not in a buffer of their own.
// CHECK-LABEL: func.func @into_sum(
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%{{.*}} : tensor<16x32xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     linalg.reduce
func.func @into_sum(%x: tensor<16x32xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16x32xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
    ins(%x : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<16x32xf32>
  %sum = linalg.reduce ins(%sq : tensor<16x32xf32>) outs(%init : tensor<16xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %sum : tensor<16xf32>
}
