// tanh, erf, erfc and exp of 4099 inputs (512 tiles of 8 lanes and a scalar
// remainder of 3), for approximate-math-accuracy.test.
func.func @step(%x: tensor<4099xf32>) -> (tensor<4099xf32>, tensor<4099xf32>, tensor<4099xf32>, tensor<4099xf32>) {
  %e0 = tensor.empty() : tensor<4099xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4099xf32>) outs(%e0 : tensor<4099xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<4099xf32>
  %e1 = tensor.empty() : tensor<4099xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4099xf32>) outs(%e1 : tensor<4099xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.erf %in : f32
    linalg.yield %r : f32
  } -> tensor<4099xf32>
  %e2 = tensor.empty() : tensor<4099xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4099xf32>) outs(%e2 : tensor<4099xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.erfc %in : f32
    linalg.yield %r : f32
  } -> tensor<4099xf32>
  %e3 = tensor.empty() : tensor<4099xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4099xf32>) outs(%e3 : tensor<4099xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4099xf32>
  return %t, %f, %g, %h : tensor<4099xf32>, tensor<4099xf32>, tensor<4099xf32>, tensor<4099xf32>
}
