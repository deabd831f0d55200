// Float32 rounded to bfloat16 and float16, and a chain of 2-byte ops
// (x * x + x, each op in float32 rounded before the next), for
// half-rounding.test: 720903 inputs, not a multiple of any vector width, so
// the vector loops have a scalar remainder.
#map = affine_map<(d0) -> (d0)>
func.func @step(%x: tensor<720903xf32>) -> (tensor<720903xbf16>, tensor<720903xf16>, tensor<720903xbf16>, tensor<720903xf16>) {
  %e0 = tensor.empty() : tensor<720903xbf16>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<720903xf32>) outs(%e0 : tensor<720903xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<720903xbf16>
  %e1 = tensor.empty() : tensor<720903xf16>
  %h = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<720903xf32>) outs(%e1 : tensor<720903xf16>) {
  ^bb0(%in: f32, %o: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<720903xf16>
  %e2 = tensor.empty() : tensor<720903xbf16>
  %bc = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%b : tensor<720903xbf16>) outs(%e2 : tensor<720903xbf16>) {
  ^bb0(%in: bf16, %o: bf16):
    %p = arith.mulf %in, %in : bf16
    %s = arith.addf %p, %in : bf16
    linalg.yield %s : bf16
  } -> tensor<720903xbf16>
  %e3 = tensor.empty() : tensor<720903xf16>
  %hc = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%h : tensor<720903xf16>) outs(%e3 : tensor<720903xf16>) {
  ^bb0(%in: f16, %o: f16):
    %p = arith.mulf %in, %in : f16
    %s = arith.addf %p, %in : f16
    linalg.yield %s : f16
  } -> tensor<720903xf16>
  return %b, %h, %bc, %hc : tensor<720903xbf16>, tensor<720903xf16>, tensor<720903xbf16>, tensor<720903xf16>
}
