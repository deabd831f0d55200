// A step with every kind of work the runtime's kernels split over threads:
// a 3x3 convolution over several images (im2col tiles, GEMMs in blocks), a
// 1x1 convolution of one image (one GEMM in blocks), a depthwise
// convolution (direct loops), the 3x3 filter's gradient (one tap tile, its
// GEMMs in blocks), a matmul and a batch matmul. Random float inputs: any
// change in the order of a sum shows in the bits.
func.func @step(%x: tensor<8x32x18x18xf32>, %w: tensor<64x32x3x3xf32>,
                %x1: tensor<1x128x16x16xf32>, %w1: tensor<256x128x1x1xf32>,
                %wd: tensor<32x3x3xf32>, %a: tensor<300x200xf32>,
                %b: tensor<200x130xf32>, %ba: tensor<4x64x48xf32>,
                %bb: tensor<4x48x80xf32>)
    -> (tensor<8x64x16x16xf32>, tensor<1x256x16x16xf32>,
        tensor<8x32x16x16xf32>, tensor<64x32x3x3xf32>, tensor<300x130xf32>,
        tensor<4x64x80xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x64x16x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x64x16x16xf32>) -> tensor<8x64x16x16xf32>
  %y0 = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<8x32x18x18xf32>, tensor<64x32x3x3xf32>) outs(%z0 : tensor<8x64x16x16xf32>) -> tensor<8x64x16x16xf32>
  %e1 = tensor.empty() : tensor<1x256x16x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
  %y1 = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x1, %w1 : tensor<1x128x16x16xf32>, tensor<256x128x1x1xf32>) outs(%z1 : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
  %e2 = tensor.empty() : tensor<8x32x16x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x32x16x16xf32>) -> tensor<8x32x16x16xf32>
  %y2 = linalg.depthwise_conv_2d_nchw_chw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %wd : tensor<8x32x18x18xf32>, tensor<32x3x3xf32>) outs(%z2 : tensor<8x32x16x16xf32>) -> tensor<8x32x16x16xf32>
  %e3 = tensor.empty() : tensor<300x130xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<300x130xf32>) -> tensor<300x130xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<300x200xf32>, tensor<200x130xf32>) outs(%z3 : tensor<300x130xf32>) -> tensor<300x130xf32>
  %e4 = tensor.empty() : tensor<4x64x80xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x64x80xf32>) -> tensor<4x64x80xf32>
  %bmm = linalg.batch_matmul ins(%ba, %bb : tensor<4x64x48xf32>, tensor<4x48x80xf32>) outs(%z4 : tensor<4x64x80xf32>) -> tensor<4x64x80xf32>
  %dw = remat.backward {
    // The filter gradient of %y0 with %y0 as the output's gradient.
    %e5 = tensor.empty() : tensor<64x32x3x3xf32>
    %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<64x32x3x3xf32>) -> tensor<64x32x3x3xf32>
    %g = linalg.generic {
        indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>,
                         affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>,
                         affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel",
                          "reduction", "reduction", "reduction"]}
      ins(%y0, %x : tensor<8x64x16x16xf32>, tensor<8x32x18x18xf32>) outs(%z5 : tensor<64x32x3x3xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
    } -> tensor<64x32x3x3xf32>
    remat.yield %g : tensor<64x32x3x3xf32>
  } : tensor<64x32x3x3xf32>
  return %y0, %y1, %y2, %dw, %mm, %bmm : tensor<8x64x16x16xf32>, tensor<1x256x16x16xf32>, tensor<8x32x16x16xf32>, tensor<64x32x3x3xf32>, tensor<300x130xf32>, tensor<4x64x80xf32>
}
