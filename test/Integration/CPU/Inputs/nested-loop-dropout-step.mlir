// A step whose forward runs dropout in nested loops: iteration (i, j) of
// i in [1, 3), j in [0, 6) step 3 writes row 2 * (i - 1) + j / 3 of the mask
// scales (p = 0.5), drawn by one random op in the inner body; the outer body
// draws one more mask before the inner loop. The backward needs the masks;
// the outer loop is marked for recomputation.
func.func @step(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>,
                %seed: i64 {remat.rng_seed})
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = scf.for %i = %c1 to %c3 step %c1 iter_args(%mo = %init) -> tensor<4x8xf32> {
    %w = remat.rng_uniform : tensor<8xf32>
    %mi = scf.for %j = %c0 to %c6 step %c3 iter_args(%ma = %mo) -> tensor<4x8xf32> {
      %row = affine.apply affine_map<(i, j) -> ((i - 1) * 2 + j floordiv 3)>(%i, %j)
      %u = remat.rng_uniform : tensor<8xf32>
      %p = arith.constant dense<0.5> : tensor<8xf32>
      %keep = arith.cmpf oge, %u, %p : tensor<8xf32>
      %two = arith.constant dense<2.0> : tensor<8xf32>
      %zeros = arith.constant dense<0.0> : tensor<8xf32>
      %s = arith.select %keep, %two, %zeros : tensor<8xi1>, tensor<8xf32>
      %mn = tensor.insert_slice %s into %ma[%row, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<4x8xf32>
      scf.yield %mn : tensor<4x8xf32>
    }
    scf.yield %mi : tensor<4x8xf32>
  } {remat.segment = 0 : i64}
  %y = arith.mulf %x, %m : tensor<4x8xf32>
  %g = remat.backward {
    %dx = arith.mulf %dy, %m : tensor<4x8xf32>
    remat.yield %dx : tensor<4x8xf32>
  } : tensor<4x8xf32>
  return %m, %g : tensor<4x8xf32>, tensor<4x8xf32>
}
