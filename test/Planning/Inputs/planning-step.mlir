// One training step, which remat-planning-threads.test copies under many
// names into one module: a dense layer with tanh and dropout, then a scan of
// 16 tanh layers whose backward loop reads the stacked activations.
func.func @step(%x: tensor<256x16xf32>, %w: tensor<16x16xf32>, %dy: tensor<256x16xf32>, %seed: i64 {remat.rng_seed}) -> (tensor<256x16xf32>, tensor<256x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  %f0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x16xf32>
  %z = linalg.fill ins(%f0 : f32) outs(%e : tensor<256x16xf32>) -> tensor<256x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<256x16xf32>, tensor<16x16xf32>) outs(%z : tensor<256x16xf32>) -> tensor<256x16xf32>
  %t = math.tanh %h : tensor<256x16xf32>
  %u = remat.rng_uniform : tensor<256x16xf32>
  %p = arith.constant dense<0.1> : tensor<256x16xf32>
  %m = arith.cmpf oge, %u, %p : tensor<256x16xf32>
  %zero = arith.constant dense<0.0> : tensor<256x16xf32>
  %d = arith.select %m, %t, %zero : tensor<256x16xi1>, tensor<256x16xf32>
  %s = tensor.empty() : tensor<16x256x16xf32>
  %hs, %st = scf.for %i = %c0 to %c16 step %c1
      iter_args(%hc = %d, %sc = %s) -> (tensor<256x16xf32>, tensor<16x256x16xf32>) {
    %a = math.tanh %hc : tensor<256x16xf32>
    %s2 = tensor.insert_slice %a into %sc[%i, 0, 0] [1, 256, 16] [1, 1, 1] : tensor<256x16xf32> into tensor<16x256x16xf32>
    scf.yield %a, %s2 : tensor<256x16xf32>, tensor<16x256x16xf32>
  }
  %gh = remat.backward {
    %g = scf.for %j = %c0 to %c16 step %c1 iter_args(%gc = %dy) -> (tensor<256x16xf32>) {
      %i = arith.subi %c15, %j : index
      %a = tensor.extract_slice %st[%i, 0, 0] [1, 256, 16] [1, 1, 1] : tensor<16x256x16xf32> to tensor<256x16xf32>
      %ga = arith.mulf %gc, %a : tensor<256x16xf32>
      scf.yield %ga : tensor<256x16xf32>
    }
    %gd = arith.select %m, %g, %zero : tensor<256x16xi1>, tensor<256x16xf32>
    %one = arith.constant dense<1.0> : tensor<256x16xf32>
    %t2 = arith.mulf %t, %t : tensor<256x16xf32>
    %dt = arith.subf %one, %t2 : tensor<256x16xf32>
    %gt = arith.mulf %gd, %dt : tensor<256x16xf32>
    remat.yield %gt : tensor<256x16xf32>
  } : tensor<256x16xf32>
  return %hs, %gh : tensor<256x16xf32>, tensor<256x16xf32>
}
