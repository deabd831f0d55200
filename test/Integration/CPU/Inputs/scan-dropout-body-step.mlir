// A scanned layer with dropout, h <- dropout(tanh(h W[i])), in the form of
// scan-mlp-step.mlir: the forward stacks each layer's input, its tanh and its
// dropout scale (the mask over 1 - p), the backward loop reads them at
// n - 1 - j. The body's matmul, tanh and dropout are one segment
// (-remat-checkpoint-loops recomputes them per iteration from the stacked
// input, the mask from the same Philox offsets). The step returns h and the
// gradients of x and W for the cotangent dy of h.
func.func @step(%x: tensor<4x8xf32>, %w: tensor<6x8x8xf32>, %dy: tensor<4x8xf32>,
                %seed: i64 {remat.rng_seed})
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<6x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %p = arith.constant dense<0.25> : tensor<4x8xf32>
  %scale = arith.constant dense<1.33333337> : tensor<4x8xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x8xf32>
  %se = tensor.empty() : tensor<6x4x8xf32>
  %stack = linalg.fill ins(%zero : f32) outs(%se : tensor<6x4x8xf32>) -> tensor<6x4x8xf32>
  %h, %hs, %as, %ms = scf.for %i = %c0 to %c6 step %c1
      iter_args(%hc = %x, %hsc = %stack, %asc = %stack, %msc = %stack)
      -> (tensor<4x8xf32>, tensor<6x4x8xf32>, tensor<6x4x8xf32>, tensor<6x4x8xf32>) {
    %wi = tensor.extract_slice %w[%i, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<6x8x8xf32> to tensor<8x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %z = linalg.matmul {remat.segment = 0 : i64} ins(%hc, %wi : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z0 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %a = math.tanh %z {remat.segment = 0 : i64} : tensor<4x8xf32>
    %u = remat.rng_uniform {remat.segment = 0 : i64} : tensor<4x8xf32>
    %keep = arith.cmpf oge, %u, %p {remat.segment = 0 : i64} : tensor<4x8xf32>
    %m = arith.select %keep, %scale, %zeros {remat.segment = 0 : i64} : tensor<4x8xi1>, tensor<4x8xf32>
    %y = arith.mulf %a, %m : tensor<4x8xf32>
    %hs2 = tensor.insert_slice %hc into %hsc[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<6x4x8xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<6x4x8xf32>
    %ms2 = tensor.insert_slice %m into %msc[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<4x8xf32> into tensor<6x4x8xf32>
    scf.yield %y, %hs2, %as2, %ms2 : tensor<4x8xf32>, tensor<6x4x8xf32>, tensor<6x4x8xf32>, tensor<6x4x8xf32>
  }
  %dx, %dw = remat.backward {
    %we = tensor.empty() : tensor<6x8x8xf32>
    %dw0 = linalg.fill ins(%zero : f32) outs(%we : tensor<6x8x8xf32>) -> tensor<6x8x8xf32>
    %one = arith.constant dense<1.0> : tensor<4x8xf32>
    %gx, %gw = scf.for %j = %c0 to %c6 step %c1
        iter_args(%g = %dy, %dwc = %dw0) -> (tensor<4x8xf32>, tensor<6x8x8xf32>) {
      %i = arith.subi %c5, %j : index
      %a = tensor.extract_slice %as[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<6x4x8xf32> to tensor<4x8xf32>
      %m = tensor.extract_slice %ms[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<6x4x8xf32> to tensor<4x8xf32>
      %hin = tensor.extract_slice %hs[%i, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<6x4x8xf32> to tensor<4x8xf32>
      %wi = tensor.extract_slice %w[%i, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<6x8x8xf32> to tensor<8x8xf32>
      %ga = arith.mulf %g, %m : tensor<4x8xf32>
      %a2 = arith.mulf %a, %a : tensor<4x8xf32>
      %d = arith.subf %one, %a2 : tensor<4x8xf32>
      %dz = arith.mulf %ga, %d : tensor<4x8xf32>
      %te = tensor.empty() : tensor<8x4xf32>
      %ht = linalg.transpose ins(%hin : tensor<4x8xf32>) outs(%te : tensor<8x4xf32>) permutation = [1, 0]
      %me = tensor.empty() : tensor<8x8xf32>
      %m0 = linalg.fill ins(%zero : f32) outs(%me : tensor<8x8xf32>) -> tensor<8x8xf32>
      %dwi = linalg.matmul ins(%ht, %dz : tensor<8x4xf32>, tensor<4x8xf32>) outs(%m0 : tensor<8x8xf32>) -> tensor<8x8xf32>
      %we2 = tensor.empty() : tensor<8x8xf32>
      %wt = linalg.transpose ins(%wi : tensor<8x8xf32>) outs(%we2 : tensor<8x8xf32>) permutation = [1, 0]
      %ge = tensor.empty() : tensor<4x8xf32>
      %g0 = linalg.fill ins(%zero : f32) outs(%ge : tensor<4x8xf32>) -> tensor<4x8xf32>
      %gn = linalg.matmul ins(%dz, %wt : tensor<4x8xf32>, tensor<8x8xf32>) outs(%g0 : tensor<4x8xf32>) -> tensor<4x8xf32>
      %dwc2 = tensor.insert_slice %dwi into %dwc[%i, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<8x8xf32> into tensor<6x8x8xf32>
      scf.yield %gn, %dwc2 : tensor<4x8xf32>, tensor<6x8x8xf32>
    }
    remat.yield %gx, %gw : tensor<4x8xf32>, tensor<6x8x8xf32>
  } : tensor<4x8xf32>, tensor<6x8x8xf32>
  return %h, %dx, %dw : tensor<4x8xf32>, tensor<4x8xf32>, tensor<6x8x8xf32>
}
