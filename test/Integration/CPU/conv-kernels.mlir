// RUN: rm -rf %t && mkdir -p %t
// RUN: remat-opt %s -remat-bufferize -remat-conv-to-blas | FileCheck %s --check-prefix=CALLS
// RUN: remat-opt %s -remat-bufferize -remat-conv-to-blas | grep -c "call @remat_conv2d_f32(" | FileCheck %s --check-prefix=FORWARD
// RUN: remat-opt %s -remat-bufferize -remat-conv-to-blas | grep -c "call @remat_conv2d_filter_grad_f32(" | FileCheck %s --check-prefix=FILTER
// RUN: remat-run %s --random-inputs 3 --outputs %t/fast
// RUN: remat-run %s --random-inputs 3 --outputs %t/loops --no-blas
// RUN: cmp %t/fast/out0.npy %t/loops/out0.npy
// RUN: cmp %t/fast/out1.npy %t/loops/out1.npy
// RUN: cmp %t/fast/out2.npy %t/loops/out2.npy
// RUN: cmp %t/fast/out3.npy %t/loops/out3.npy
// RUN: cmp %t/fast/out4.npy %t/loops/out4.npy
// RUN: cmp %t/fast/out5.npy %t/loops/out5.npy
// RUN: remat-run %s --random-inputs 3 --stats > %t/stats
// RUN: remat-run %s --random-inputs 3 --stats --no-blas >> %t/stats
// RUN: FileCheck %s --check-prefix=PEAK < %t/stats

// Checks the runtime's convolution kernels end to end against the loops
// linalg lowers to (--no-blas), on every shape class: a strided and dilated
// convolution, a strided filter gradient (a generic), a grouped, a depthwise
// and a 1x1 convolution. The inputs are rounded to integers in [-4, 3], so
// every product and partial sum is an exact float and the two sum orders
// give the same bits. The kernels allocate nothing: both runs have the same
// peak.
// FORWARD: 4
// FILTER: 2
// CALLS-NOT: linalg.conv
// CALLS-NOT: linalg.depthwise
// CALLS-NOT: + d
// PEAK: "peak_bytes":[[PEAK:[0-9]+]]
// PEAK: "peak_bytes":[[PEAK]],
func.func @step(%x: tensor<2x4x11x11xf32>, %w: tensor<6x4x3x3xf32>,
                %wg: tensor<2x3x2x3x3xf32>, %wd: tensor<4x3x3xf32>,
                %w1: tensor<5x4x1x1xf32>)
    -> (tensor<2x6x5x7xf32>, tensor<2x2x3x9x9xf32>, tensor<2x4x9x9xf32>,
        tensor<2x5x11x11xf32>, tensor<6x4x3x3xf32>, tensor<4x4x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %s = tensor.splat %four : tensor<2x4x11x11xf32>
  %xs = arith.mulf %x, %s : tensor<2x4x11x11xf32>
  %xq = math.floor %xs : tensor<2x4x11x11xf32>
  %sw = tensor.splat %four : tensor<6x4x3x3xf32>
  %ws = arith.mulf %w, %sw : tensor<6x4x3x3xf32>
  %wq = math.floor %ws : tensor<6x4x3x3xf32>
  %sg = tensor.splat %four : tensor<2x3x2x3x3xf32>
  %wgs = arith.mulf %wg, %sg : tensor<2x3x2x3x3xf32>
  %wgq = math.floor %wgs : tensor<2x3x2x3x3xf32>
  %sd = tensor.splat %four : tensor<4x3x3xf32>
  %wds = arith.mulf %wd, %sd : tensor<4x3x3xf32>
  %wdq = math.floor %wds : tensor<4x3x3xf32>
  %s1 = tensor.splat %four : tensor<5x4x1x1xf32>
  %w1s = arith.mulf %w1, %s1 : tensor<5x4x1x1xf32>
  %w1q = math.floor %w1s : tensor<5x4x1x1xf32>

  // Strides (2, 1), dilations (1, 2): 5 x 7 outputs.
  %e0 = tensor.empty() : tensor<2x6x5x7xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>
  %y0 = linalg.conv_2d_nchw_fchw {strides = dense<[2, 1]> : tensor<2xi64>, dilations = dense<[1, 2]> : tensor<2xi64>}
    ins(%xq, %wq : tensor<2x4x11x11xf32>, tensor<6x4x3x3xf32>) outs(%z0 : tensor<2x6x5x7xf32>) -> tensor<2x6x5x7xf32>

  // Two groups of two input and three output channels.
  %xg = tensor.expand_shape %xq [[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 11, 11]
    : tensor<2x4x11x11xf32> into tensor<2x2x2x11x11xf32>
  %e1 = tensor.empty() : tensor<2x2x3x9x9xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x2x3x9x9xf32>) -> tensor<2x2x3x9x9xf32>
  %y1 = linalg.conv_2d_ngchw_gfchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%xg, %wgq : tensor<2x2x2x11x11xf32>, tensor<2x3x2x3x3xf32>) outs(%z1 : tensor<2x2x3x9x9xf32>) -> tensor<2x2x3x9x9xf32>

  %e2 = tensor.empty() : tensor<2x4x9x9xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>
  %y2 = linalg.depthwise_conv_2d_nchw_chw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%xq, %wdq : tensor<2x4x11x11xf32>, tensor<4x3x3xf32>) outs(%z2 : tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>

  %e3 = tensor.empty() : tensor<2x5x11x11xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x5x11x11xf32>) -> tensor<2x5x11x11xf32>
  %y3 = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%xq, %w1q : tensor<2x4x11x11xf32>, tensor<5x4x1x1xf32>) outs(%z3 : tensor<2x5x11x11xf32>) -> tensor<2x5x11x11xf32>

  %grads:2 = remat.backward {
    // The filter gradient of %y0 with %y0 as the output's gradient:
    // dW[f, c, kh, kw] += dY[n, f, oh, ow] * X[n, c, 2 oh + kh, ow + 2 kw].
    %e4 = tensor.empty() : tensor<6x4x3x3xf32>
    %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<6x4x3x3xf32>) -> tensor<6x4x3x3xf32>
    %dw = linalg.generic {
        indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>,
                         affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 * 2 + d2, d6 + d3 * 2)>,
                         affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel",
                          "reduction", "reduction", "reduction"]}
      ins(%y0, %xq : tensor<2x6x5x7xf32>, tensor<2x4x11x11xf32>) outs(%z4 : tensor<6x4x3x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
    } -> tensor<6x4x3x3xf32>
    // The same with the depthwise output (stride 1, dilation 1).
    %e5 = tensor.empty() : tensor<4x4x3x3xf32>
    %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf32>
    %dwd = linalg.generic {
        indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>,
                         affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>,
                         affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel",
                          "reduction", "reduction", "reduction"]}
      ins(%y2, %xq : tensor<2x4x9x9xf32>, tensor<2x4x11x11xf32>) outs(%z5 : tensor<4x4x3x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
    } -> tensor<4x4x3x3xf32>
    remat.yield %dw, %dwd : tensor<6x4x3x3xf32>, tensor<4x4x3x3xf32>
  } : tensor<6x4x3x3xf32>, tensor<4x4x3x3xf32>
  return %y0, %y1, %y2, %y3, %grads#0, %grads#1
    : tensor<2x6x5x7xf32>, tensor<2x2x3x9x9xf32>, tensor<2x4x9x9xf32>,
      tensor<2x5x11x11xf32>, tensor<6x4x3x3xf32>, tensor<4x4x3x3xf32>
}
