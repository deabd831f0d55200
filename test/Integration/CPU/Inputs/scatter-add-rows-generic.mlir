// scatter-add-rows-step.mlir as the exporter emitted it before
// remat.scatter_add_rows: a linalg.generic over [rows, columns] that
// reduces over every position with a compare and a select.
#index = affine_map<(d0, d1, d2) -> (d2)>
#values = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @step(%values: tensor<300x67xf32>, %indices: tensor<300xi64>,
                %dest: tensor<41x67xf32>) -> (tensor<41x67xf32>, tensor<41x67xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<41x67xf32>
  %zero = linalg.fill ins(%c0 : f32) outs(%e : tensor<41x67xf32>) -> tensor<41x67xf32>
  %sum = linalg.generic {indexing_maps = [#index, #values, #out],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%indices, %values : tensor<300xi64>, tensor<300x67xf32>)
      outs(%dest : tensor<41x67xf32>) {
  ^bb0(%ix: i64, %g: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %ix, %vi : i64
    %part = arith.addf %acc, %g : f32
    %y = arith.select %hit, %part, %acc : f32
    linalg.yield %y : f32
  } -> tensor<41x67xf32>
  %grad = linalg.generic {indexing_maps = [#index, #values, #out],
                          iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%indices, %values : tensor<300xi64>, tensor<300x67xf32>)
      outs(%zero : tensor<41x67xf32>) {
  ^bb0(%ix: i64, %g: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %ix, %vi : i64
    %k = arith.constant 3 : i64
    %n = arith.cmpi ne, %vi, %k : i64
    %b = arith.andi %hit, %n : i1
    %part = arith.addf %acc, %g : f32
    %y = arith.select %b, %part, %acc : f32
    linalg.yield %y : f32
  } -> tensor<41x67xf32>
  return %sum, %grad : tensor<41x67xf32>, tensor<41x67xf32>
}
