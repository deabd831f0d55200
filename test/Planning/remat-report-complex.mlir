// RUN: remat-opt %s -remat-report=format=json -o /dev/null | FileCheck %s
// A static tensor of complex numbers has a size: two parts of four bytes per
// element (the transposed activation is saved: 2 * 3 * 8 bytes).
// CHECK: "saved_activation_bytes": 48
// Its two buffers are planned, each rounded to the arena alignment of 64.
// CHECK: "static_peak_bytes": 128
func.func @step(%x: tensor<2x3xcomplex<f32>>)
    -> (tensor<3x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>) {
  %e = tensor.empty() : tensor<3x2xcomplex<f32>>
  %t = linalg.transpose ins(%x : tensor<2x3xcomplex<f32>>)
         outs(%e : tensor<3x2xcomplex<f32>>) permutation = [1, 0]
  %g = remat.backward {
    %f = tensor.empty() : tensor<2x3xcomplex<f32>>
    %u = linalg.transpose ins(%t : tensor<3x2xcomplex<f32>>)
           outs(%f : tensor<2x3xcomplex<f32>>) permutation = [1, 0]
    remat.yield %u : tensor<2x3xcomplex<f32>>
  } : tensor<2x3xcomplex<f32>>
  return %t, %g : tensor<3x2xcomplex<f32>>, tensor<2x3xcomplex<f32>>
}
