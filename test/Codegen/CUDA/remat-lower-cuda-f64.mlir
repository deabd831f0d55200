// RUN: remat-opt %s -remat-lower-cuda -split-input-file -verify-diagnostics

// A float64 step (remat-torch-export --float64) is the CPU's: the CUDA
// lowering refuses it at its function, before bufferizing anything.
// expected-error @below {{'step' is a float64 step: -remat-lower-cuda lowers float32, bfloat16 and float16 steps; float64 steps run on the CPU (-remat-lower-cpu)}}
func.func @step(%x: tensor<4x8xf64>, %w: tensor<8x2xf64>) -> tensor<4x2xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x2xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<4x2xf64>) -> tensor<4x2xf64>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf64>, tensor<8x2xf64>) outs(%f : tensor<4x2xf64>) -> tensor<4x2xf64>
  return %y : tensor<4x2xf64>
}

// -----

// Only the signature decides: an f64 result is a float64 step too.
// expected-error @below {{'loss' is a float64 step}}
func.func @loss(%x: tensor<4xf32>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %s = linalg.reduce ins(%x : tensor<4xf32>) outs(%f : tensor<f64>) dimensions = [0]
    (%in: f32, %acc: f64) {
      %w = arith.extf %in : f32 to f64
      %t = arith.addf %w, %acc : f64
      linalg.yield %t : f64
    }
  return %s : tensor<f64>
}
