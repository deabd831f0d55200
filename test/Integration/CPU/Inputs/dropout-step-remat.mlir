// A small step: matmul, tanh, dropout (p = 0.25), and a backward that needs
// the activation and the mask. This copy recomputes both in the backward
// region from x, w and the seed, as -remat-checkpoint would.
func.func @step(%x: tensor<16x8xf32>, %w: tensor<8x32xf32>, %dy: tensor<16x32xf32>,
                %seed: i64 {remat.rng_seed}) -> (tensor<16x32xf32>, tensor<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = arith.constant dense<0.25> : tensor<16x32xf32>
  %scale = arith.constant dense<1.33333337> : tensor<16x32xf32>
  %zeros = arith.constant dense<0.0> : tensor<16x32xf32>
  %e = tensor.empty() : tensor<16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %h = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x32xf32>)
         outs(%init : tensor<16x32xf32>) -> tensor<16x32xf32>
  %a = math.tanh %h : tensor<16x32xf32>
  %off = arith.constant 0 : i64
  %u = remat.philox_uniform %seed, %off : tensor<16x32xf32>
  %keep = arith.cmpf oge, %u, %p : tensor<16x32xf32>
  %as = arith.mulf %a, %scale : tensor<16x32xf32>
  %y = arith.select %keep, %as, %zeros : tensor<16x32xi1>, tensor<16x32xf32>
  %g = remat.backward {
    %xb, %wb, %sb = remat.barrier %x, %w, %seed : tensor<16x8xf32>, tensor<8x32xf32>, i64
    %re = tensor.empty() : tensor<16x32xf32>
    %rinit = linalg.fill ins(%zero : f32) outs(%re : tensor<16x32xf32>) -> tensor<16x32xf32>
    %rh = linalg.matmul ins(%xb, %wb : tensor<16x8xf32>, tensor<8x32xf32>)
            outs(%rinit : tensor<16x32xf32>) -> tensor<16x32xf32>
    %ra = math.tanh %rh : tensor<16x32xf32>
    %ru = remat.philox_uniform %sb, %off : tensor<16x32xf32>
    %rkeep = arith.cmpf oge, %ru, %p : tensor<16x32xf32>
    %dys = arith.mulf %dy, %scale : tensor<16x32xf32>
    %dd = arith.select %rkeep, %dys, %zeros : tensor<16x32xi1>, tensor<16x32xf32>
    %a2 = arith.mulf %ra, %ra : tensor<16x32xf32>
    %one = arith.constant dense<1.0> : tensor<16x32xf32>
    %da = arith.subf %one, %a2 : tensor<16x32xf32>
    %dh = arith.mulf %dd, %da : tensor<16x32xf32>
    %et = tensor.empty() : tensor<8x16xf32>
    %xt = linalg.transpose ins(%x : tensor<16x8xf32>) outs(%et : tensor<8x16xf32>) permutation = [1, 0]
    %ew = tensor.empty() : tensor<8x32xf32>
    %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<8x32xf32>) -> tensor<8x32xf32>
    %gw = linalg.matmul ins(%xt, %dh : tensor<8x16xf32>, tensor<16x32xf32>)
            outs(%zw : tensor<8x32xf32>) -> tensor<8x32xf32>
    remat.yield %gw : tensor<8x32xf32>
  } : tensor<8x32xf32>
  return %y, %g : tensor<16x32xf32>, tensor<8x32xf32>
}
