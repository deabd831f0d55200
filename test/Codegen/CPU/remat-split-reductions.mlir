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

// -----

// Checks that a column sum over a batch's rows (a bias's gradient,
// accumulated in f64), whose outermost dimension is the reduction, is cut
// into 16 parts of 64 rows: the parts a leading parallel dimension of the
// op and of its partials, then the parts folded into the output in order,
// the part loop outermost so that each part's outputs are contiguous.
// CHECK-DAG:   #[[$IN3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$PART3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[$ALL2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$OUT2:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @column_sum(
// CHECK-SAME:      %[[X:[^:]*]]: memref<1024x224xf32>, %[[S:[^:]*]]: memref<224xf64>
// CHECK:         %[[P:.*]] = memref.alloca() : memref<16x224xf64>
// CHECK:         linalg.fill ins(%{{.*}} : f64) outs(%[[P]] : memref<16x224xf64>)
// CHECK:         %[[V:.*]] = memref.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [16, 64, 224] : memref<1024x224xf32> into memref<16x64x224xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$IN3]], #[[$PART3]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[V]] : memref<16x64x224xf32>) outs(%[[P]] : memref<16x224xf64>)
// CHECK:         linalg.generic {indexing_maps = [#[[$ALL2]], #[[$OUT2]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME:      ins(%[[P]] : memref<16x224xf64>) outs(%[[S]] : memref<224xf64>)
// CHECK-NOT:     linalg.generic
func.func @column_sum(%x: memref<1024x224xf32>, %s: memref<224xf64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<1024x224xf32>) outs(%s : memref<224xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %e = arith.extf %in : f32 to f64
    %r = arith.addf %e, %acc : f64
    linalg.yield %r : f64
  }
  return
}

// -----

// Checks that a loss (a sum of squares of all of a 1024x256 matrix) splits
// into 8 lanes first, and the lanes' op into 16 parts of 64 rows: the parts
// fold into the lanes, then the lanes into the loss.
// CHECK-LABEL: func.func @loss(
// CHECK-DAG:     %[[LANES:.*]] = memref.alloca() : memref<8xf64>
// CHECK-DAG:     %[[PARTS:.*]] = memref.alloca() : memref<16x8xf64>
// CHECK:         linalg.fill ins(%{{.*}} : f64) outs(%[[LANES]] : memref<8xf64>)
// CHECK:         linalg.fill ins(%{{.*}} : f64) outs(%[[PARTS]] : memref<16x8xf64>)
// CHECK:         memref.expand_shape {{.*}} into memref<16x64x32x8xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      outs(%[[PARTS]] : memref<16x8xf64>)
// CHECK:           arith.mulf
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]}
// CHECK-SAME:      ins(%[[PARTS]] : memref<16x8xf64>) outs(%[[LANES]] : memref<8xf64>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]}
// CHECK-SAME:      ins(%[[LANES]] : memref<8xf64>) outs(%{{.*}} : memref<f64>)
// CHECK-NOT:     linalg.generic
func.func @loss(%x: memref<1024x256xf32>, %s: memref<f64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<1024x256xf32>) outs(%s : memref<f64>) {
  ^bb0(%in: f32, %acc: f64):
    %q = arith.mulf %in, %in : f32
    %e = arith.extf %q : f32 to f64
    %r = arith.addf %e, %acc : f64
    linalg.yield %r : f64
  }
  return
}

// -----

// Checks the parts' limits: 48 rows (no part count of at least 32 rows
// divides them), 64 rows of 64 columns (under 2^15 iterations: 4096) and
// 1024 rows of 16384 columns (two parts' partials over 64 KiB) stay one
// loop; 96 rows take 2 parts of 48, 256 rows 8 of 32.
// CHECK-LABEL: func.func @parts_kept(
// CHECK-NOT:     memref.alloca() : memref<{{[0-9]+}}x1024xf32>
// CHECK-NOT:     memref.alloca() : memref<{{[0-9]+}}x64xf32>
// CHECK-NOT:     memref.alloca() : memref<{{[0-9]+}}x16384xf32>
// CHECK-DAG:     memref.alloca() : memref<2x512xf32>
// CHECK-DAG:     memref.alloca() : memref<8x256xf32>
// CHECK-NOT:     memref.alloca
func.func @parts_kept(%a: memref<48x1024xf32>, %sa: memref<1024xf32>,
                      %b: memref<64x64xf32>, %sb: memref<64xf32>,
                      %c: memref<1024x16384xf32>, %sc: memref<16384xf32>,
                      %d: memref<96x512xf32>, %sd: memref<512xf32>,
                      %e: memref<256x256xf32>, %se: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<48x1024xf32>) outs(%sa : memref<1024xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%b : memref<64x64xf32>) outs(%sb : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%c : memref<1024x16384xf32>) outs(%sc : memref<16384xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%d : memref<96x512xf32>) outs(%sd : memref<512xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%e : memref<256x256xf32>) outs(%se : memref<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Checks that batch norm's per-channel sums over 64 images keep their
// channels, 16 of them, as the threads' share: lanes, no parts.
// CHECK-LABEL: func.func @channels_kept(
// CHECK:         memref.alloca() : memref<16x16xf32>
// CHECK-NOT:     memref.alloca
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @channels_kept(%x: memref<64x16x64xf32>, %s: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, w) -> (n, c, w)>,
                                   affine_map<(n, c, w) -> (c)>],
                  iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : memref<64x16x64xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}
