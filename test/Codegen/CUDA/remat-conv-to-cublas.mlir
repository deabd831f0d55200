// RUN: remat-opt %s -split-input-file -remat-conv-to-cublas | FileCheck %s

// The CUDA form of a forward convolution: the filter copied into a matrix
// broadcast over the tile's images (batch stride 0), the images' windows
// gathered into an im2col buffer, and one batch_matmul into the result,
// viewed as [images, F, OH * OW]; the buffers freed after it.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: memref<2x3x6x6xf32>, %[[W:.*]]: memref<4x3x3x3xf32>, %[[Y:.*]]: memref<2x4x4x4xf32>)
// CHECK: %[[M:.*]] = memref.alloc() : memref<4x3x3x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[W]] : {{.*}}) outs(%[[M]] :
// CHECK: %[[A:.*]] = memref.reinterpret_cast %[[M]] to offset: [0], sizes: [2, 4, 27], strides: [0, 27, 1]
// CHECK: %[[COLS:.*]] = memref.alloc() : memref<2x3x3x3x4x4xf32>
// CHECK: %[[XS:.*]] = memref.subview %[[X]][0, 0, 0, 0] [2, 3, 6, 6]
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW:.*]], #{{.*}}], {{.*}} ins(%[[XS]] : {{.*}}) outs(%[[COLS]] :
// CHECK: %[[B:.*]] = memref.reinterpret_cast %[[COLS]] to offset: [0], sizes: [2, 27, 16], strides: [432, 16, 1]
// CHECK: %[[C:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [2, 4, 16], strides: [64, 16, 1]
// CHECK: linalg.batch_matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[C]] :
// CHECK: memref.dealloc %[[COLS]]
// CHECK: memref.dealloc %[[M]]
// CHECK-NOT: linalg.conv
func.func @forward(%x: memref<2x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x4x4xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x4x4xf32>)
  return
}

// -----

// A filter gradient: windows gathered [images, OH, OW, C * KH * KW], the
// response's tile gathered [F, images, OH, OW], and one matmul summing over
// the tile's pixels into the filter viewed as [F, C * KH * KW].
// CHECK-LABEL: func.func @filter_gradient
// CHECK-SAME: (%[[X:.*]]: memref<2x3x6x6xf32>, %[[DY:.*]]: memref<2x4x4x4xf32>, %[[DW:.*]]: memref<4x3x3x3xf32>)
// CHECK: %[[OUT:.*]] = memref.reinterpret_cast %[[DW]] to offset: [0], sizes: [4, 27], strides: [27, 1]
// CHECK: %[[COLS:.*]] = memref.alloc() : memref<2x4x4x3x3x3xf32>
// CHECK: linalg.generic
// CHECK: %[[G:.*]] = memref.alloc() : memref<4x2x4x4xf32>
// CHECK: linalg.generic
// CHECK: %[[A:.*]] = memref.reinterpret_cast %[[G]] to offset: [0], sizes: [4, 32], strides: [32, 1]
// CHECK: %[[B:.*]] = memref.reinterpret_cast %[[COLS]] to offset: [0], sizes: [32, 27], strides: [27, 1]
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[OUT]] :
func.func @filter_gradient(%x: memref<2x3x6x6xf32>, %dy: memref<2x4x4x4xf32>, %dw: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(f, c, kh, kw, n, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(f, c, kh, kw, n, oh, ow) -> (n, f, oh, ow)>, affine_map<(f, c, kh, kw, n, oh, ow) -> (f, c, kh, kw)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %dy : memref<2x3x6x6xf32>, memref<2x4x4x4xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Grouped convolutions stay loops.
// CHECK-LABEL: func.func @grouped
// CHECK: linalg.conv_2d_ngchw_gfchw
func.func @grouped(%x: memref<2x2x3x6x6xf32>, %w: memref<2x4x3x3x3xf32>, %y: memref<2x2x4x4x4xf32>) {
  linalg.conv_2d_ngchw_gfchw ins(%x, %w : memref<2x2x3x6x6xf32>, memref<2x4x3x3x3xf32>) outs(%y : memref<2x2x4x4x4xf32>)
  return
}
