// RUN: remat-opt %s -remat-report -o /dev/null 2>&1 | FileCheck %s

// The ops the PyTorch front end emits for grouped convolutions, pooling and
// integer / boolean tensors have a cost model. linalg.conv_2d_ngchw_gfchw:
// n=1, g=2, f=1, oh=ow=2, c=1, kh=kw=3: 72 iterations of a mul and an add =
// 144 FLOPs; linalg.pooling_nchw_max: 1*2*2*2 outputs * 3*3 window = 72
// iterations of one max; the compare, the zero extension and the conversion
// 8 each: 240 forward FLOPs. The backward's square: 18.
// CHECK: forward FLOPs: 240, backward FLOPs: 18, recompute FLOPs: 0
// CHECK-NOT: ops without a cost model
func.func @step(%x: tensor<1x2x1x4x4xf32>, %w: tensor<2x1x1x3x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<2x1x1x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x2x1x2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %c = linalg.conv_2d_ngchw_gfchw ins(%x, %w : tensor<1x2x1x4x4xf32>, tensor<2x1x1x3x3xf32>) outs(%f : tensor<1x2x1x2x2xf32>) -> tensor<1x2x1x2x2xf32>
  %xs = tensor.collapse_shape %x [[0], [1, 2], [3], [4]] : tensor<1x2x1x4x4xf32> into tensor<1x2x4x4xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e2 = tensor.empty() : tensor<1x2x2x2xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %p = linalg.pooling_nchw_max ins(%xs, %win : tensor<1x2x4x4xf32>, tensor<3x3xf32>) outs(%f2 : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %cs = tensor.collapse_shape %c [[0], [1, 2], [3], [4]] : tensor<1x2x1x2x2xf32> into tensor<1x2x2x2xf32>
  %m = arith.cmpf ogt, %p, %cs : tensor<1x2x2x2xf32>
  %i = arith.extui %m : tensor<1x2x2x2xi1> to tensor<1x2x2x2xi64>
  %r = arith.sitofp %i : tensor<1x2x2x2xi64> to tensor<1x2x2x2xf32>
  %g = remat.backward {
    %sq = arith.mulf %w, %w : tensor<2x1x1x3x3xf32>
    remat.yield %sq : tensor<2x1x1x3x3xf32>
  } : tensor<2x1x1x3x3xf32>
  return %r, %g : tensor<1x2x2x2xf32>, tensor<2x1x1x3x3xf32>
}
