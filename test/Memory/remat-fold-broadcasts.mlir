// RUN: remat-opt %s -split-input-file -remat-fold-broadcasts -canonicalize | FileCheck %s

// Checks that a generic op reads a broadcast bias through a map that drops
// the broadcast dimension, a 0-d scalar through an empty map, and a chain
// of two broadcasts through one map; that the init operand is left alone;
// and that the broadcasts go once nothing reads them.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @fold(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x16xf32>, %[[B:[a-z0-9]+]]: tensor<16xf32>, %[[S:[a-z0-9]+]]: tensor<f32>
// CHECK-NOT:     linalg.broadcast
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[SCALAR]], #[[ID]]], {{.*}}} ins(%[[X]], %[[B]], %[[S]] : tensor<4x16xf32>, tensor<16xf32>, tensor<f32>)
// CHECK:         linalg.generic {indexing_maps = [#[[LAST]], #[[ID3]]], {{.*}}} ins(%[[B]] : tensor<16xf32>)
// CHECK-NOT:     linalg.broadcast
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @fold(%x: tensor<4x16xf32>, %b: tensor<16xf32>, %s: tensor<f32>)
    -> (tensor<4x16xf32>, tensor<2x4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %bb = linalg.broadcast ins(%b : tensor<16xf32>) outs(%e : tensor<4x16xf32>) dimensions = [0]
  %sb = linalg.broadcast ins(%s : tensor<f32>) outs(%e : tensor<4x16xf32>) dimensions = [0, 1]
  %y = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bb, %sb : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %0 = arith.addf %a, %c : f32
    %1 = arith.mulf %0, %d : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %e3 = tensor.empty() : tensor<2x4x16xf32>
  %bbb = linalg.broadcast ins(%bb : tensor<4x16xf32>) outs(%e3 : tensor<2x4x16xf32>) dimensions = [0]
  %z = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bbb : tensor<2x4x16xf32>) outs(%e3 : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  } -> tensor<2x4x16xf32>
  return %y, %z : tensor<4x16xf32>, tensor<2x4x16xf32>
}

// -----

// Checks that a broadcast a non-generic op reads stays.
// CHECK-LABEL: func.func @kept(
// CHECK:         linalg.broadcast
// CHECK:         linalg.matmul
func.func @kept(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<16x4xf32>
  %bb = linalg.broadcast ins(%b : tensor<16xf32>) outs(%e : tensor<16x4xf32>) dimensions = [1]
  %z = tensor.empty() : tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %bb : tensor<4x16xf32>, tensor<16x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Checks that a broadcast whose dimensions alone give a loop its extent
// (the reduction d1 of a cumsum along the broadcast axis) stays: folded,
// the generic would have a loop of no size.
// CHECK-LABEL: func.func @sole_extent(
// CHECK:         %[[B:.*]] = linalg.broadcast
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[B]] : tensor<2x7xf32>)
func.func @sole_extent(%x: tensor<7xf32>) -> tensor<2x7xf32> {
  %e = tensor.empty() : tensor<2x7xf32>
  %b = linalg.broadcast ins(%x : tensor<7xf32>) outs(%e : tensor<2x7xf32>) dimensions = [0]
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%b : tensor<2x7xf32>) outs(%e : tensor<2x7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %o : f32
    linalg.yield %0 : f32
  } -> tensor<2x7xf32>
  return %y : tensor<2x7xf32>
}
