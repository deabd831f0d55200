// Row and column reductions of odd widths (37 = 4 tiles of 8 + 5, or 2 of
// 16 + 5) and elementwise ops around them: a layer norm's mean and variance,
// a softmax, and a bias gradient (sum over rows), as a step returns them;
// erf and tanh, which libm computes lane by lane.
#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @step(%x: tensor<6x37xf32>) -> (tensor<6x37xf32>, tensor<6x37xf32>, tensor<37xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %n = arith.constant 37.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e6 = tensor.empty() : tensor<6xf32>
  %z6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<6xf32>) -> tensor<6xf32>
  %sum = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x37xf32>) outs(%z6 : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %e = tensor.empty() : tensor<6x37xf32>
  %centered = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<6x37xf32>, tensor<6xf32>) outs(%e : tensor<6x37xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %mean = arith.divf %s, %n : f32
    %c = arith.subf %in, %mean : f32
    linalg.yield %c : f32
  } -> tensor<6x37xf32>
  %z6b = linalg.fill ins(%zero : f32) outs(%e6 : tensor<6xf32>) -> tensor<6xf32>
  %sq = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%centered : tensor<6x37xf32>) outs(%z6b : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %e2 = tensor.empty() : tensor<6x37xf32>
  %norm = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%centered, %sq : tensor<6x37xf32>, tensor<6xf32>) outs(%e2 : tensor<6x37xf32>) {
  ^bb0(%in: f32, %v: f32, %o: f32):
    %var = arith.divf %v, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %y = arith.mulf %in, %r : f32
    %g = math.erf %y : f32
    linalg.yield %g : f32
  } -> tensor<6x37xf32>
  %m6 = linalg.fill ins(%ninf : f32) outs(%e6 : tensor<6xf32>) -> tensor<6xf32>
  %max = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x37xf32>) outs(%m6 : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<6xf32>
  %e3 = tensor.empty() : tensor<6x37xf32>
  %exp = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<6x37xf32>, tensor<6xf32>) outs(%e3 : tensor<6x37xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %t = math.exp %d : f32
    linalg.yield %t : f32
  } -> tensor<6x37xf32>
  %z6c = linalg.fill ins(%zero : f32) outs(%e6 : tensor<6xf32>) -> tensor<6xf32>
  %den = linalg.generic {indexing_maps = [#row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<6x37xf32>) outs(%z6c : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %e4 = tensor.empty() : tensor<6x37xf32>
  %softmax = linalg.generic {indexing_maps = [#row, #col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %den : tensor<6x37xf32>, tensor<6xf32>) outs(%e4 : tensor<6x37xf32>) {
  ^bb0(%in: f32, %d: f32, %o: f32):
    %q = arith.divf %in, %d : f32
    %t = math.tanh %q : f32
    linalg.yield %t : f32
  } -> tensor<6x37xf32>
  %e37 = tensor.empty() : tensor<37xf32>
  %z37 = linalg.fill ins(%zero : f32) outs(%e37 : tensor<37xf32>) -> tensor<37xf32>
  %colsum = linalg.generic {indexing_maps = [#row, #bias], iterator_types = ["reduction", "parallel"]}
      ins(%norm : tensor<6x37xf32>) outs(%z37 : tensor<37xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<37xf32>
  return %norm, %softmax, %colsum : tensor<6x37xf32>, tensor<6x37xf32>, tensor<37xf32>
}
