// The scanned layer of scan-mlp-step.mlir at 16 layers, batch 256, width 16
// (bench/scan_peak's step at n = 16): h <- tanh(h W[i]), the forward stacks
// each layer's input and output (16 x 256 x 16 f32, 262144 bytes each), the
// backward walks the layers in reverse.
func.func @step(%x: tensor<256x16xf32>, %w: tensor<16x16x16xf32>, %dy: tensor<256x16xf32>)
    -> (tensor<256x16xf32>, tensor<256x16xf32>, tensor<16x16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 15 : index
  %c6 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<16x256x16xf32>
  %stack = linalg.fill ins(%zero : f32) outs(%se : tensor<16x256x16xf32>) -> tensor<16x256x16xf32>
  %h, %hs, %as = scf.for %i = %c0 to %c6 step %c1
      iter_args(%hc = %x, %hsc = %stack, %asc = %stack)
      -> (tensor<256x16xf32>, tensor<16x256x16xf32>, tensor<16x256x16xf32>) {
    %wi = tensor.extract_slice %w[%i, 0, 0] [1, 16, 16] [1, 1, 1] : tensor<16x16x16xf32> to tensor<16x16xf32>
    %e = tensor.empty() : tensor<256x16xf32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<256x16xf32>) -> tensor<256x16xf32>
    %z = linalg.matmul ins(%hc, %wi : tensor<256x16xf32>, tensor<16x16xf32>) outs(%z0 : tensor<256x16xf32>) -> tensor<256x16xf32>
    %a = math.tanh %z : tensor<256x16xf32>
    %hs2 = tensor.insert_slice %hc into %hsc[%i, 0, 0] [1, 256, 16] [1, 1, 1] : tensor<256x16xf32> into tensor<16x256x16xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0, 0] [1, 256, 16] [1, 1, 1] : tensor<256x16xf32> into tensor<16x256x16xf32>
    scf.yield %a, %hs2, %as2 : tensor<256x16xf32>, tensor<16x256x16xf32>, tensor<16x256x16xf32>
  }
  %dx, %dw = remat.backward {
    %we = tensor.empty() : tensor<16x16x16xf32>
    %dw0 = linalg.fill ins(%zero : f32) outs(%we : tensor<16x16x16xf32>) -> tensor<16x16x16xf32>
    %one = arith.constant dense<1.0> : tensor<256x16xf32>
    %gx, %gw = scf.for %j = %c0 to %c6 step %c1
        iter_args(%g = %dy, %dwc = %dw0) -> (tensor<256x16xf32>, tensor<16x16x16xf32>) {
      %i = arith.subi %c5, %j : index
      %a = tensor.extract_slice %as[%i, 0, 0] [1, 256, 16] [1, 1, 1] : tensor<16x256x16xf32> to tensor<256x16xf32>
      %hin = tensor.extract_slice %hs[%i, 0, 0] [1, 256, 16] [1, 1, 1] : tensor<16x256x16xf32> to tensor<256x16xf32>
      %wi = tensor.extract_slice %w[%i, 0, 0] [1, 16, 16] [1, 1, 1] : tensor<16x16x16xf32> to tensor<16x16xf32>
      %a2 = arith.mulf %a, %a : tensor<256x16xf32>
      %d = arith.subf %one, %a2 : tensor<256x16xf32>
      %dz = arith.mulf %g, %d : tensor<256x16xf32>
      %te = tensor.empty() : tensor<16x256xf32>
      %ht = linalg.transpose ins(%hin : tensor<256x16xf32>) outs(%te : tensor<16x256xf32>) permutation = [1, 0]
      %me = tensor.empty() : tensor<16x16xf32>
      %m0 = linalg.fill ins(%zero : f32) outs(%me : tensor<16x16xf32>) -> tensor<16x16xf32>
      %dwi = linalg.matmul ins(%ht, %dz : tensor<16x256xf32>, tensor<256x16xf32>) outs(%m0 : tensor<16x16xf32>) -> tensor<16x16xf32>
      %we2 = tensor.empty() : tensor<16x16xf32>
      %wt = linalg.transpose ins(%wi : tensor<16x16xf32>) outs(%we2 : tensor<16x16xf32>) permutation = [1, 0]
      %ge = tensor.empty() : tensor<256x16xf32>
      %g0 = linalg.fill ins(%zero : f32) outs(%ge : tensor<256x16xf32>) -> tensor<256x16xf32>
      %gn = linalg.matmul ins(%dz, %wt : tensor<256x16xf32>, tensor<16x16xf32>) outs(%g0 : tensor<256x16xf32>) -> tensor<256x16xf32>
      %dwc2 = tensor.insert_slice %dwi into %dwc[%i, 0, 0] [1, 16, 16] [1, 1, 1] : tensor<16x16xf32> into tensor<16x16x16xf32>
      scf.yield %gn, %dwc2 : tensor<256x16xf32>, tensor<16x16x16xf32>
    }
    remat.yield %gx, %gw : tensor<256x16xf32>, tensor<16x16x16xf32>
  } : tensor<256x16xf32>, tensor<16x16x16xf32>
  return %h, %dx, %dw : tensor<256x16xf32>, tensor<256x16xf32>, tensor<16x16x16xf32>
}
