// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-reductions))' | FileCheck %s
// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-reductions{block-size=16}))' | FileCheck %s --check-prefix=CASCADE
// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-reductions{block-size=0}))' | FileCheck %s --check-prefix=NONE
// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-reductions{block-size=-1}))' | FileCheck %s --check-prefix=NONE

// A block size below 1 splits nothing.
// NONE-NOT: memref.alloc

// Checks that a batch norm's statistic (a sum over batch, rows and columns,
// 2048 elements) is summed in blocks of 64, two rows each: the rows loop is
// viewed as 16 x 2, since blocks between loops (one row, 32) would make 64
// partial sums, not 32. The partial sums are a buffer of their own, filled with
// -0.0 before and freed after their sum goes into the original init.
// CHECK-DAG:   #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG:   #[[PART:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @batch_norm_mean(
// CHECK-SAME:    %[[X:.+]]: memref<2x8x32x32xf32>, %[[INIT:.+]]: memref<8xf32>
// CHECK:         %[[ZERO:.+]] = arith.constant -0.000000e+00 : f32
// CHECK:         %[[XS:.+]] = memref.expand_shape %[[X]] {{\[}}[0], [1], [2, 3], [4]] output_shape [2, 8, 16, 2, 32] : memref<2x8x32x32xf32> into memref<2x8x16x2x32xf32>
// CHECK:         %[[P:.+]] = memref.alloc() : memref<8x2x16xf32>
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[P]] : memref<8x2x16xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%[[XS]] : memref<2x8x16x2x32xf32>) outs(%[[P]] : memref<8x2x16xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.reduce ins(%[[P]] : memref<8x2x16xf32>) outs(%[[INIT]] : memref<8xf32>) dimensions = [1, 2]
// CHECK:           arith.addf
// CHECK:         memref.dealloc %[[P]]
// CHECK-NEXT:    return
// With blocks of at most 16, the 128 partial sums of 16 are summed in
// blocks again, and the 8 sums of those last.
// CASCADE-LABEL: func.func @batch_norm_mean(
// CASCADE:         memref.expand_shape %{{.+}} into memref<2x8x32x2x16xf32>
// CASCADE:         %[[P:.+]] = memref.alloc() : memref<8x2x32x2xf32>
// CASCADE:         linalg.generic
// CASCADE-SAME:        outs(%[[P]] : memref<8x2x32x2xf32>)
// CASCADE:         memref.expand_shape %[[P]] {{.+}} into memref<8x2x4x8x2xf32>
// CASCADE:         %[[Q:.+]] = memref.alloc() : memref<8x2x4xf32>
// CASCADE:         linalg.generic
// CASCADE-SAME:        outs(%[[Q]] : memref<8x2x4xf32>)
// CASCADE:         linalg.reduce ins(%[[Q]] : memref<8x2x4xf32>) outs(%{{.+}} : memref<8xf32>) dimensions = [1, 2]
// CASCADE:         memref.dealloc %[[Q]]
// CASCADE:         memref.dealloc %[[P]]
// CASCADE-LABEL: func.func @between_loops(
func.func @batch_norm_mean(%x: memref<2x8x32x32xf32>, %init: memref<8xf32>) {
  linalg.reduce ins(%x : memref<2x8x32x32xf32>) outs(%init : memref<8xf32>) dimensions = [0, 2, 3]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return
}

// -----

// Checks that where a loop holds exactly a block, the split is between
// loops and nothing is viewed: 16 partial sums of 64 per channel.
// CHECK-DAG:   #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[PART:.+]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @between_loops(
// CHECK-NOT:     memref.expand_shape
// CHECK:         %[[P:.+]] = memref.alloc() : memref<8x16xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:        outs(%[[P]] : memref<8x16xf32>)
// CHECK:         linalg.reduce ins(%[[P]] : memref<8x16xf32>) outs(%{{.+}} : memref<8xf32>) dimensions = [1]
func.func @between_loops(%x: memref<16x8x64xf32>, %init: memref<8xf32>) {
  linalg.reduce ins(%x : memref<16x8x64xf32>) outs(%init : memref<8xf32>) dimensions = [0, 2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return
}

// -----

// Checks that a sum over one long loop (a bias gradient over 4096 rows) is
// split by viewing that loop as 64 x 64.
// CHECK-DAG:   #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[PART:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @bias_gradient(
// CHECK:         %[[X:.+]] = memref.expand_shape %{{.+}} {{\[}}[0, 1], [2]] output_shape [64, 64, 16] : memref<4096x16xf32> into memref<64x64x16xf32>
// CHECK:         %[[P:.+]] = memref.alloc() : memref<16x64xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:        ins(%[[X]] : memref<64x64x16xf32>) outs(%[[P]] : memref<16x64xf32>)
// CHECK:         linalg.reduce ins(%[[P]] : memref<16x64xf32>) outs(%{{.+}} : memref<16xf32>) dimensions = [1]
func.func @bias_gradient(%x: memref<4096x16xf32>, %init: memref<16xf32>) {
  linalg.reduce ins(%x : memref<4096x16xf32>) outs(%init : memref<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>

// Checks that a fused body (a sum of squares, the accumulator on the left)
// is kept in the partial sums, and that a strided input is viewed too.
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK:         memref.expand_shape %{{.+}} {{\[}}[0, 1], [2]] output_shape [16, 64, 4] : memref<1024x4xf32, strided<[8, 1]>> into memref<16x64x4xf32, strided<[512, 8, 1]>>
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:           %[[SQ:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK:           arith.addf %{{.+}}, %[[SQ]] : f32
// CHECK:         linalg.reduce
func.func @sum_of_squares(%x: memref<1024x4xf32, strided<[8, 1]>>, %init: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<1024x4xf32, strided<[8, 1]>>) outs(%init : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Checks what is left alone: a sum of 64 (one block), a maximum (its
// order does not round), a sum over a prime number of elements, a body that
// reads its loop index, and a sum on tensors.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.expand_shape
// CHECK:         return
func.func @left_alone(%short: memref<4x16x16xf32>, %wide: memref<1024x16xf32>, %prime: memref<257xf32>,
                      %i: memref<16xf32>, %s: memref<f32>, %t: tensor<1024x16xf32>, %ti: tensor<16xf32>) -> tensor<16xf32> {
  linalg.reduce ins(%short : memref<4x16x16xf32>) outs(%i : memref<16xf32>) dimensions = [0, 2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.reduce ins(%wide : memref<1024x16xf32>) outs(%i : memref<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.reduce ins(%prime : memref<257xf32>) outs(%s : memref<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%wide : memref<1024x16xf32>) outs(%i : memref<16xf32>) {
  ^bb0(%a0: f32, %acc: f32):
    %row = linalg.index 0 : index
    %rowi = arith.index_cast %row : index to i32
    %rowf = arith.sitofp %rowi : i32 to f32
    %m = arith.mulf %a0, %rowf : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  }
  %tr = linalg.reduce ins(%t : tensor<1024x16xf32>) outs(%ti : tensor<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %tr : tensor<16xf32>
}
