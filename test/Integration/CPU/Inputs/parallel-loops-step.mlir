// Generated loops of each kind -remat-outline-parallel-loops splits over
// the runtime's pool: an elementwise op with a broadcast and erf (vector
// tiles, libm lane by lane), a softmax over rows of odd width (row
// reductions in order inside each unit), a transpose (scalar loops) and a
// 2x2 max pooling (windows, scalar loops); and loops that stay on one
// thread: a bias gradient (a sum over rows, cut into 8 parts of 32 rows by
// -remat-split-reductions, whose odd last column is a scalar loop that
// shares the parts' partials: not provably private to a unit), the fills
// of 256 accumulators and a small elementwise op. Random float inputs: any change in the order of a sum shows in the
// bits.
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @step(%x: tensor<256x333xf32>, %b: tensor<333xf32>,
                %img: tensor<8x16x64x64xf32>, %s: tensor<4x8xf32>)
    -> (tensor<256x333xf32>, tensor<256x333xf32>, tensor<333xf32>,
        tensor<333x256xf32>, tensor<8x16x32x32xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<256x333xf32>
  %act = linalg.generic {indexing_maps = [#row, #bias, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<256x333xf32>, tensor<333xf32>) outs(%e : tensor<256x333xf32>) {
  ^bb0(%in: f32, %bi: f32, %o: f32):
    %a = arith.addf %in, %bi : f32
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<256x333xf32>

  // Softmax over rows: max, exp of the difference, sum, division.
  %e256 = tensor.empty() : tensor<256xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e256 : tensor<256xf32>) -> tensor<256xf32>
  %max = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x333xf32>) outs(%m0 : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %ex = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<256x333xf32>, tensor<256xf32>) outs(%e : tensor<256x333xf32>) {
  ^bb0(%in: f32, %mx: f32, %o: f32):
    %d = arith.subf %in, %mx : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<256x333xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e256 : tensor<256xf32>) -> tensor<256xf32>
  %sum = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<256x333xf32>) outs(%s0 : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %soft = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<256x333xf32>, tensor<256xf32>) outs(%e : tensor<256x333xf32>) {
  ^bb0(%in: f32, %t: f32, %o: f32):
    %r = arith.divf %in, %t : f32
    linalg.yield %r : f32
  } -> tensor<256x333xf32>

  // A bias gradient: the sum over rows of each column.
  %e333 = tensor.empty() : tensor<333xf32>
  %g0 = linalg.fill ins(%zero : f32) outs(%e333 : tensor<333xf32>) -> tensor<333xf32>
  %gb = linalg.generic {indexing_maps = [#row, #bias], iterator_types = ["reduction", "parallel"]}
      ins(%act : tensor<256x333xf32>) outs(%g0 : tensor<333xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<333xf32>

  %et = tensor.empty() : tensor<333x256xf32>
  %t = linalg.transpose ins(%soft : tensor<256x333xf32>) outs(%et : tensor<333x256xf32>) permutation = [1, 0]

  %win = tensor.empty() : tensor<2x2xf32>
  %ep = tensor.empty() : tensor<8x16x32x32xf32>
  %p0 = linalg.fill ins(%ninf : f32) outs(%ep : tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%img, %win : tensor<8x16x64x64xf32>, tensor<2x2xf32>) outs(%p0 : tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>

  %es = tensor.empty() : tensor<4x8xf32>
  %small = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%es : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %act, %soft, %gb, %t, %pool, %small
      : tensor<256x333xf32>, tensor<256x333xf32>, tensor<333xf32>,
        tensor<333x256xf32>, tensor<8x16x32x32xf32>, tensor<4x8xf32>
}
