// The dense backward of an embedding of 41 rows of 67 columns over 300
// positions, as remat.scatter_add_rows: into a given dest, and into zeros
// with row 3 skipped (padding_idx). scatter-add-rows-generic.mlir is the
// exporter's former linalg.generic form of the same step.
func.func @step(%values: tensor<300x67xf32>, %indices: tensor<300xi64>,
                %dest: tensor<41x67xf32>) -> (tensor<41x67xf32>, tensor<41x67xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<41x67xf32>
  %zero = linalg.fill ins(%c0 : f32) outs(%e : tensor<41x67xf32>) -> tensor<41x67xf32>
  %sum = remat.scatter_add_rows %values into %dest[%indices]
           : tensor<300x67xf32>, tensor<300xi64> into tensor<41x67xf32>
  %grad = remat.scatter_add_rows %values into %zero[%indices] skip 3
            : tensor<300x67xf32>, tensor<300xi64> into tensor<41x67xf32>
  return %sum, %grad : tensor<41x67xf32>, tensor<41x67xf32>
}
