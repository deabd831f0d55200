// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-reductions))' | FileCheck %s
// RUN: remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-reductions{partial-bits=128}))' | FileCheck %s --check-prefix=NARROW
// RUN: not remat-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(remat-split-reductions{partial-bits=8}))' 2>&1 | FileCheck %s --check-prefix=BITS

// Checks that batch norm's per-channel sum of NCHW values, accumulated in
// f64 along w (64 terms), first sums into 8 f64 partials per channel: a
// stack buffer filled with 0, the input read through a view that cuts w
// into 8 chunks of 8 lanes, the lanes an innermost parallel dimension;
// then each channel's partials fold into its output in lane order, with
// the original combiner.
// CHECK-LABEL: func.func @channel_sum(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x3x4x64xf32>, %[[S:[^:]*]]: memref<3xf64>
// CHECK:         %[[P:.*]] = memref.alloca() : memref<3x8xf64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         linalg.fill ins(%[[ZERO]] : f64) outs(%[[P]] : memref<3x8xf64>)
// CHECK:         %[[V:.*]] = memref.expand_shape %[[X]] {{\[}}[0], [1], [2], [3, 4]] output_shape [2, 3, 4, 8, 8] : memref<2x3x4x64xf32> into memref<2x3x4x8x8xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$IN:.*]], #[[$PART:.*]]], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[V]] : memref<2x3x4x8x8xf32>) outs(%[[P]] : memref<3x8xf64>)
// CHECK:           arith.extf
// CHECK:           arith.addf
// CHECK:         linalg.generic {indexing_maps = [#[[$ALL:.*]], #[[$OUT:.*]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%[[P]] : memref<3x8xf64>) outs(%[[S]] : memref<3xf64>)
// CHECK:         ^bb0(%[[LANE:.*]]: f64, %[[ACC:.*]]: f64):
// CHECK:           %[[SUM:.*]] = arith.addf %[[LANE]], %[[ACC]] : f64
// CHECK:           linalg.yield %[[SUM]]
// CHECK-NOT:     linalg.generic
// NARROW-LABEL: func.func @channel_sum(
// NARROW:         memref.alloca() : memref<3x2xf64>
// NARROW:         memref.expand_shape {{.*}} into memref<2x3x4x32x2xf32>
// BITS: error: -remat-split-reductions: partial-bits must be at least 16, got 8
func.func @channel_sum(%x: memref<2x3x4x64xf32>, %s: memref<3xf64>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                                   affine_map<(n, c, h, w) -> (c)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x3x4x64xf32>) outs(%s : memref<3xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %e = arith.extf %in : f32 to f64
    %r = arith.addf %e, %acc : f64
    linalg.yield %r : f64
  }
  return
}

// -----

// Checks that a maximum splits with -inf as the partials' start, and that
// an input the innermost dimension does not index (a broadcast scalar)
// keeps its view and its map.
// CHECK-LABEL: func.func @row_max(
// CHECK:         memref.alloca() : memref<4x16xf32>
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         memref.expand_shape {{.*}} into memref<4x8x16xf32>
// CHECK:         linalg.generic {{.*}} ins({{.*}}, %{{.*}} : memref<4x8x16xf32>, memref<f32>)
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maximumf
func.func @row_max(%x: memref<4x128xf32>, %scale: memref<f32>, %m: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> ()>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %scale : memref<4x128xf32>, memref<f32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %k: f32, %acc: f32):
    %p = arith.mulf %in, %k : f32
    %r = arith.maximumf %p, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Checks what stays one chain: an innermost dimension that is not a
// multiple of the lanes, too few terms, a combiner without the algebra
// (acc - x), an op reading its loop indices, and partials over 64 KiB.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     memref.alloca
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @kept(%a: memref<4x40xf32>, %b: memref<4x32xf32>, %c: memref<4x128xf32>,
                %d: memref<8192x64xf32>, %s: memref<4xf32>, %t: memref<8192xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x40xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<4x32xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<4x128xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.subf %acc, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<4x128xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %p = arith.mulf %in, %jf : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%d : memref<8192x64xf32>) outs(%t : memref<8192xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}
