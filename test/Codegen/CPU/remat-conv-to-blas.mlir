// RUN: remat-opt %s -split-input-file -remat-conv-to-blas | FileCheck %s

// Checks that a strided, dilated linalg.conv_2d_nchw_fchw calls the forward
// kernel with rank-5 views (image [N, 1, C, H, W], filter [1, F, C, KH, KW],
// response [N, 1, F, OH, OW]: the missing group dimension has size 1) and
// its strides (2, 2) and dilations (1, 2), and that the declaration takes the
// C interface.
// CHECK-LABEL: func.func @conv_nchw(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x3x9x9xf32>, %[[W:[^:]*]]: memref<4x3x3x3xf32>, %[[Y:[^:]*]]: memref<2x4x3x3xf32>
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[XB:.*]], %[[XO:.*]], %[[XS:.*]]:4, %[[XT:.*]]:4 = memref.extract_strided_metadata %[[X]]
// CHECK:         %[[XV:.*]] = memref.reinterpret_cast %[[XB]] to offset: [%[[XO]]], sizes: [%[[XS]]#0, %[[ONE]], %[[XS]]#1, %[[XS]]#2, %[[XS]]#3], strides: [%[[XT]]#0, %[[ONE]], %[[XT]]#1, %[[XT]]#2, %[[XT]]#3]
// CHECK:         %[[WB:.*]], %[[WO:.*]], %[[WS:.*]]:4, %[[WT:.*]]:4 = memref.extract_strided_metadata %[[W]]
// CHECK:         %[[WV:.*]] = memref.reinterpret_cast %[[WB]] to offset: [%[[WO]]], sizes: [%[[ONE]], %[[WS]]#0, %[[WS]]#1, %[[WS]]#2, %[[WS]]#3], strides: [%[[ONE]], %[[WT]]#0, %[[WT]]#1, %[[WT]]#2, %[[WT]]#3]
// CHECK:         %[[YB:.*]], %[[YO:.*]], %[[YS:.*]]:4, %[[YT:.*]]:4 = memref.extract_strided_metadata %[[Y]]
// CHECK:         %[[YV:.*]] = memref.reinterpret_cast %[[YB]] to offset: [%[[YO]]], sizes: [%[[YS]]#0, %[[ONE]], %[[YS]]#1, %[[YS]]#2, %[[YS]]#3], strides: [%[[YT]]#0, %[[ONE]], %[[YT]]#1, %[[YT]]#2, %[[YT]]#3]
// CHECK:         %[[SH:.*]] = arith.constant 2 : i64
// CHECK:         %[[SW:.*]] = arith.constant 2 : i64
// CHECK:         %[[DH:.*]] = arith.constant 1 : i64
// CHECK:         %[[DW:.*]] = arith.constant 2 : i64
// CHECK:         call @remat_conv2d_f32(%[[XV]], %[[WV]], %[[YV]], %[[SH]], %[[SW]], %[[DH]], %[[DW]])
// CHECK-NOT:     linalg.conv
// CHECK:       func.func private @remat_conv2d_f32(memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, memref<?x?x?x?x?xf32, strided<[?, ?, ?, ?, ?], offset: ?>>, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @conv_nchw(%x: memref<2x3x9x9xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x3x3xf32>) {
  linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<[1, 2]> : tensor<2xi64>}
    ins(%x, %w : memref<2x3x9x9xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x3x3xf32>)
  return
}

// -----

// Checks that the filter gradient the PyTorch front end writes, a generic
// dW[f, c, kh, kw] += dY[n, f, oh, ow] * X[n, c, oh + kh, ow + kw], calls the
// filter-gradient kernel with the image (the second input, read through
// the window), the filter (the output) and the response (dY) in that
// order, and that one declaration serves two calls.
// CHECK-LABEL: func.func @filter_grad(
// CHECK-SAME:      %[[DY:[^:]*]]: memref<2x4x5x5xf32>, %[[X:[^:]*]]: memref<2x3x7x7xf32>, %[[DW:[^:]*]]: memref<4x3x3x3xf32>
// CHECK:         memref.extract_strided_metadata %[[X]]
// CHECK:         %[[XV:.*]] = memref.reinterpret_cast
// CHECK:         memref.extract_strided_metadata %[[DW]]
// CHECK:         %[[WV:.*]] = memref.reinterpret_cast
// CHECK:         memref.extract_strided_metadata %[[DY]]
// CHECK:         %[[YV:.*]] = memref.reinterpret_cast
// CHECK:         call @remat_conv2d_filter_grad_f32(%[[XV]], %[[WV]], %[[YV]],
// CHECK:         call @remat_conv2d_filter_grad_f32(
// CHECK-NOT:     linalg.generic
// CHECK:       func.func private @remat_conv2d_filter_grad_f32(
// CHECK-NOT:   func.func private @remat_conv2d_filter_grad_f32(
#dy = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>
#dw = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @filter_grad(%dy: memref<2x4x5x5xf32>, %x: memref<2x3x7x7xf32>, %dw: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [#dy, #x, #dw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
    ins(%dy, %x : memref<2x4x5x5xf32>, memref<2x3x7x7xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  // The same sums spelled differently: operands swapped in the body, the
  // window's terms in the other order.
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d2 + d5, d3 + d6)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>, #dw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
    ins(%x, %dy : memref<2x3x7x7xf32>, memref<2x4x5x5xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Checks that a grouped convolution passes all five dimensions of each
// operand, in the runtime's order (the filter [G, F, C, KH, KW] as it is).
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x2x3x6x6xf32>, %[[W:[^:]*]]: memref<2x4x3x3x3xf32>, %[[Y:[^:]*]]: memref<2x2x4x4x4xf32>
// CHECK:         %[[XB:.*]], %[[XO:.*]], %[[XS:.*]]:5, %[[XT:.*]]:5 = memref.extract_strided_metadata %[[X]]
// CHECK:         memref.reinterpret_cast %[[XB]] to offset: [%[[XO]]], sizes: [%[[XS]]#0, %[[XS]]#1, %[[XS]]#2, %[[XS]]#3, %[[XS]]#4], strides: [%[[XT]]#0, %[[XT]]#1, %[[XT]]#2, %[[XT]]#3, %[[XT]]#4]
// CHECK:         %[[WB:.*]], %[[WO:.*]], %[[WS:.*]]:5, %[[WT:.*]]:5 = memref.extract_strided_metadata %[[W]]
// CHECK:         memref.reinterpret_cast %[[WB]] to offset: [%[[WO]]], sizes: [%[[WS]]#0, %[[WS]]#1, %[[WS]]#2, %[[WS]]#3, %[[WS]]#4]
// CHECK:         call @remat_conv2d_f32(
func.func @grouped(%x: memref<2x2x3x6x6xf32>, %w: memref<2x4x3x3x3xf32>, %y: memref<2x2x4x4x4xf32>) {
  linalg.conv_2d_ngchw_gfchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<2x2x3x6x6xf32>, memref<2x4x3x3x3xf32>) outs(%y : memref<2x2x4x4x4xf32>)
  return
}

// -----

// Checks that a depthwise convolution's channel is the group: image
// [N, C, 1, H, W], filter [C, 1, 1, KH, KW], response [N, C, 1, OH, OW].
// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x3x6x6xf32>, %[[W:[^:]*]]: memref<3x3x3xf32>, %[[Y:[^:]*]]: memref<2x3x4x4xf32>
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[XB:.*]], %[[XO:.*]], %[[XS:.*]]:4, %[[XT:.*]]:4 = memref.extract_strided_metadata %[[X]]
// CHECK:         memref.reinterpret_cast %[[XB]] to offset: [%[[XO]]], sizes: [%[[XS]]#0, %[[XS]]#1, %[[ONE]], %[[XS]]#2, %[[XS]]#3]
// CHECK:         %[[WB:.*]], %[[WO:.*]], %[[WS:.*]]:3, %[[WT:.*]]:3 = memref.extract_strided_metadata %[[W]]
// CHECK:         memref.reinterpret_cast %[[WB]] to offset: [%[[WO]]], sizes: [%[[WS]]#0, %[[ONE]], %[[ONE]], %[[WS]]#1, %[[WS]]#2]
// CHECK:         %[[YB:.*]], %[[YO:.*]], %[[YS:.*]]:4, %[[YT:.*]]:4 = memref.extract_strided_metadata %[[Y]]
// CHECK:         memref.reinterpret_cast %[[YB]] to offset: [%[[YO]]], sizes: [%[[YS]]#0, %[[YS]]#1, %[[ONE]], %[[YS]]#2, %[[YS]]#3]
// CHECK:         call @remat_conv2d_f32(
func.func @depthwise(%x: memref<2x3x6x6xf32>, %w: memref<3x3x3xf32>, %y: memref<2x3x4x4xf32>) {
  linalg.depthwise_conv_2d_nchw_chw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<2x3x6x6xf32>, memref<3x3x3xf32>) outs(%y : memref<2x3x4x4xf32>)
  return
}

// -----

// Checks that a 1-D convolution is a 2-D one with a unit height (the
// image's H has size 1) and takes its stride as the width's.
// CHECK-LABEL: func.func @conv_1d(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x3x9xf32>
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[XB:.*]], %[[XO:.*]], %[[XS:.*]]:3, %[[XT:.*]]:3 = memref.extract_strided_metadata %[[X]]
// CHECK:         memref.reinterpret_cast %[[XB]] to offset: [%[[XO]]], sizes: [%[[XS]]#0, %[[ONE]], %[[XS]]#1, %[[ONE]], %[[XS]]#2]
// CHECK:         %[[SH:.*]] = arith.constant 1 : i64
// CHECK:         %[[SW:.*]] = arith.constant 3 : i64
// CHECK:         call @remat_conv2d_f32({{.*}}, %[[SH]], %[[SW]],
func.func @conv_1d(%x: memref<2x3x9xf32>, %w: memref<4x3x3xf32>, %y: memref<2x4x3xf32>) {
  linalg.conv_1d_ncw_fcw {strides = dense<3> : tensor<1xi64>, dilations = dense<1> : tensor<1xi64>}
    ins(%x, %w : memref<2x3x9xf32>, memref<4x3x3xf32>) outs(%y : memref<2x4x3xf32>)
  return
}

// -----

// Checks what stays a linalg op: a sum pooling (its body adds, it does not
// multiply), f64 and dynamically shaped convolutions, a window whose body
// is not out + a * b, a convolution on tensors (before bufferization), and
// no declaration is made for them.
// CHECK-LABEL: func.func @left_alone(
// CHECK:         linalg.pooling_nchw_sum
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} memref<1x1x4x4xf64>
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} memref<?x1x4x4xf32>
// CHECK:         linalg.generic
// CHECK:           arith.subf
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} tensor<1x1x4x4xf32>
// CHECK-NOT:     call
// CHECK-NOT:   func.func private
func.func @left_alone(%x: memref<1x1x4x4xf32>, %k: memref<2x2xf32>, %p: memref<1x1x3x3xf32>,
                      %xd: memref<1x1x4x4xf64>, %wd: memref<1x1x2x2xf64>, %yd: memref<1x1x3x3xf64>,
                      %xq: memref<?x1x4x4xf32>, %wq: memref<1x1x2x2xf32>, %yq: memref<?x1x3x3xf32>,
                      %xt: tensor<1x1x4x4xf32>, %wt: tensor<1x1x2x2xf32>, %yt: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  linalg.pooling_nchw_sum {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %k : memref<1x1x4x4xf32>, memref<2x2xf32>) outs(%p : memref<1x1x3x3xf32>)
  linalg.conv_2d_nchw_fchw ins(%xd, %wd : memref<1x1x4x4xf64>, memref<1x1x2x2xf64>) outs(%yd : memref<1x1x3x3xf64>)
  linalg.conv_2d_nchw_fchw ins(%xq, %wq : memref<?x1x4x4xf32>, memref<1x1x2x2xf32>) outs(%yq : memref<?x1x3x3xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, f, h, w, c, i, j) -> (n, c, h + i, w + j)>,
                                   affine_map<(n, f, h, w, c, i, j) -> (f, c, i, j)>,
                                   affine_map<(n, f, h, w, c, i, j) -> (n, f, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
    ins(%x, %wq : memref<1x1x4x4xf32>, memref<1x1x2x2xf32>) outs(%p : memref<1x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.subf %o, %m : f32
    linalg.yield %s : f32
  }
  %r = linalg.conv_2d_nchw_fchw ins(%xt, %wt : tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) outs(%yt : tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %r : tensor<1x1x3x3xf32>
}
