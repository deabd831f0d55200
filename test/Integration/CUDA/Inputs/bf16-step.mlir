// A mixed-precision step as remat-torch-export writes one under
// torch.autocast (issue 42): float32 parameters converted to bfloat16, a
// matmul of bfloat16 operands into a float32 result rounded once, a tanh
// in bfloat16 (a checkpoint segment), a loss summed in float32, and the
// backward's matmuls in bfloat16.
func.func @step(%x: tensor<64x32xf32>, %w: tensor<32x48xf32>, %dy: tensor<f32>)
    -> (tensor<f32>, tensor<32x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %xb = arith.truncf %x {remat.segment = 0 : i64} : tensor<64x32xf32> to tensor<64x32xbf16>
  %wb = arith.truncf %w {remat.segment = 0 : i64} : tensor<32x48xf32> to tensor<32x48xbf16>
  %e = tensor.empty() {remat.segment = 0 : i64} : tensor<64x48xf32>
  %z = linalg.fill {remat.segment = 0 : i64} ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %h = linalg.matmul {remat.segment = 0 : i64} ins(%xb, %wb : tensor<64x32xbf16>, tensor<32x48xbf16>)
         outs(%z : tensor<64x48xf32>) -> tensor<64x48xf32>
  %hb = arith.truncf %h {remat.segment = 0 : i64} : tensor<64x48xf32> to tensor<64x48xbf16>
  %a = math.tanh %hb {remat.segment = 0 : i64} : tensor<64x48xbf16>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%a : tensor<64x48xbf16>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
    (%in: bf16, %acc: f32) {
      %v = arith.extf %in : bf16 to f32
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }
  %gw = remat.backward {
    // d loss / d a = dy; d tanh = 1 - a^2 (in bfloat16, rounded per op).
    %eb = tensor.empty() : tensor<64x48xf32>
    %g = linalg.broadcast ins(%dy : tensor<f32>) outs(%eb : tensor<64x48xf32>) dimensions = [0, 1]
    %gb = arith.truncf %g : tensor<64x48xf32> to tensor<64x48xbf16>
    %one = arith.constant dense<1.0> : tensor<64x48xbf16>
    %a2 = arith.mulf %a, %a : tensor<64x48xbf16>
    %d = arith.subf %one, %a2 : tensor<64x48xbf16>
    %dh = arith.mulf %gb, %d : tensor<64x48xbf16>
    %et = tensor.empty() : tensor<32x64xbf16>
    %xt = linalg.transpose ins(%xb : tensor<64x32xbf16>) outs(%et : tensor<32x64xbf16>) permutation = [1, 0]
    %ew = tensor.empty() : tensor<32x48xf32>
    %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<32x48xf32>) -> tensor<32x48xf32>
    %dw = linalg.matmul ins(%xt, %dh : tensor<32x64xbf16>, tensor<64x48xbf16>)
            outs(%zw : tensor<32x48xf32>) -> tensor<32x48xf32>
    remat.yield %dw : tensor<32x48xf32>
  } : tensor<32x48xf32>
  return %loss, %gw : tensor<f32>, tensor<32x48xf32>
}
