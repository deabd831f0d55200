// RUN: remat-opt %s -remat-fold-transposes -canonicalize | FileCheck %s

// Checks that a matmul reads a transposed weight through its map, keeping
// its marks; that two transposes that cancel give the default map back;
// that a batch matmul reads a [0, 2, 1] transpose the same way; and that
// the transposes go once nothing reads them.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BA:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[BB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[BC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[BQ:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @fold(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W:[a-z0-9]+]]: tensor<16x8xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] {remat.segment = 0 : i64} ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<16x8xf32>)
// CHECK:         linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<16x8xf32>)
// CHECK:         linalg.batch_matmul indexing_maps = [#[[BA]], #[[BB]], #[[BC]]] ins(%{{.*}}, %{{.*}} : tensor<2x8x4xf32>, tensor<2x8x16xf32>)
// CHECK-NOT:     linalg.transpose
func.func @fold(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %z: tensor<4x16xf32>,
                %b: tensor<2x8x4xf32>, %c: tensor<2x8x16xf32>, %bz: tensor<2x4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %y = linalg.matmul {remat.segment = 0 : i64} ins(%x, %t : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %t2 = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e2 : tensor<8x4xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<4x8xf32>
  %t3 = linalg.transpose ins(%t2 : tensor<8x4xf32>) outs(%e3 : tensor<4x8xf32>) permutation = [1, 0]
  %y2 = linalg.matmul ins(%t3, %t : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e4 = tensor.empty() : tensor<2x4x8xf32>
  %t4 = linalg.transpose ins(%b : tensor<2x8x4xf32>) outs(%e4 : tensor<2x4x8xf32>) permutation = [0, 2, 1]
  %y3 = linalg.batch_matmul ins(%t4, %c : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%bz : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %y, %y2, %y3 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x16xf32>
}

// Checks that a transpose another op reads stays for that op.
// CHECK-LABEL: func.func @kept(
// CHECK:         %[[T:.*]] = linalg.transpose
// CHECK:         linalg.matmul indexing_maps
// CHECK:         return %{{.*}}, %[[T]]
func.func @kept(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %z: tensor<4x16xf32>)
    -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %y = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %t : tensor<4x16xf32>, tensor<8x16xf32>
}

// Checks that a recomputed matmul, which reads its inputs through a
// barrier, reads the transpose's input with the permuted map as the forward
// matmul does (the same BLAS call, so the same bits): the barrier passes
// %w instead of the transposed copy, which is no longer kept. A barrier
// result another op reads keeps its transpose.
// CHECK-LABEL: func.func @through_barrier(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W:[a-z0-9]+]]: tensor<16x8xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[W]]
// CHECK:         linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] {remat.id = 1 : i64} ins(%[[X]], %[[W]]
// CHECK:         remat.backward
// CHECK:           %[[B:.*]]:3 = remat.barrier %[[X]], %[[W]], %[[T]] : tensor<4x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>
// CHECK:           linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] {remat.clone_of = 1 : i64} ins(%[[B]]#0, %[[B]]#1 : tensor<4x8xf32>, tensor<16x8xf32>)
// CHECK:           tensor.collapse_shape %[[B]]#2
func.func @through_barrier(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>,
                           %z: tensor<4x16xf32>, %g: tensor<4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<128xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %t = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %y = linalg.matmul {remat.id = 1 : i64} ins(%x, %t : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r:2 = remat.backward {
    %b:3 = remat.barrier %x, %t, %t : tensor<4x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>
    %y2 = linalg.matmul {remat.clone_of = 1 : i64} ins(%b#0, %b#1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
    %flat = tensor.collapse_shape %b#2 [[0, 1]] : tensor<8x16xf32> into tensor<128xf32>
    %s = arith.addf %y2, %g : tensor<4x16xf32>
    remat.yield %s, %flat : tensor<4x16xf32>, tensor<128xf32>
  } : tensor<4x16xf32>, tensor<128xf32>
  return %y, %r#0, %r#1 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<128xf32>
}

// Checks that a transpose that moves a batch matmul's batch dimension
// ([1, 0, 2]: multi-head attention's [T, B * H, D] to [B * H, T, D], as
// WavLM's attention computes it) stays a copy, there and through a
// barrier: a batch matmul's maps read the batch as d0, and a map that
// reads it elsewhere is no batch matmul ("Invalid batch dimension
// expression"). A [0, 2, 1] transpose through the same barrier folds.
// CHECK-LABEL: func.func @batch_moved(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<4x2x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x8xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[Q]] : tensor<4x2x8xf32>) {{.*}} permutation = [1, 0, 2]
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.batch_matmul indexing_maps = [#[[BQ]], #[[BK]], #[[BC]]] {remat.id = 2 : i64} ins(%[[T]], %[[K]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK:         %[[B2:.*]]:2 = remat.barrier %[[T]], %[[K]] :
// CHECK:         linalg.batch_matmul indexing_maps = [#[[BQ]], #[[BK]], #[[BC]]] {remat.clone_of = 2 : i64} ins(%[[B2]]#0, %[[B2]]#1 : tensor<2x4x8xf32>, tensor<2x4x8xf32>)
func.func @batch_moved(%q: tensor<4x2x8xf32>, %k: tensor<2x4x8xf32>, %z: tensor<2x4x4xf32>)
    -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %t = linalg.transpose ins(%q : tensor<4x2x8xf32>) outs(%e : tensor<2x4x8xf32>) permutation = [1, 0, 2]
  %ek = tensor.empty() : tensor<2x8x4xf32>
  %tk = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ek : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %y = linalg.batch_matmul {remat.id = 2 : i64} ins(%t, %tk : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%z : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %r = remat.backward {
    %b:2 = remat.barrier %t, %tk : tensor<2x4x8xf32>, tensor<2x8x4xf32>
    %y2 = linalg.batch_matmul {remat.clone_of = 2 : i64} ins(%b#0, %b#1 : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%z : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    remat.yield %y2 : tensor<2x4x4xf32>
  } : tensor<2x4x4xf32>
  return %y, %r : tensor<2x4x4xf32>, tensor<2x4x4xf32>
}
