// Dropout masks and raw uniforms of the sizes the examples draw, for
// comparing the CUDA target's bits with the CPU's.
func.func @masks(%seed: i64 {remat.rng_seed})
    -> (tensor<4096x512xf32>, tensor<2048x1024xf32>, tensor<333x7xf16>, tensor<5x3x2xbf16>) {
  %o0 = arith.constant 0 : i64
  %o1 = arith.constant 2097152 : i64
  %o2 = arith.constant 17179869190 : i64
  %o3 = arith.constant 1001 : i64
  %p = arith.constant dense<0.1> : tensor<4096x512xf32>
  %one = arith.constant dense<1.0> : tensor<4096x512xf32>
  %zero = arith.constant dense<0.0> : tensor<4096x512xf32>
  %u = remat.philox_uniform %seed, %o0 : tensor<4096x512xf32>
  %keep = arith.cmpf oge, %u, %p : tensor<4096x512xf32>
  %mask = arith.select %keep, %one, %zero : tensor<4096x512xi1>, tensor<4096x512xf32>
  %a = remat.philox_uniform %seed, %o1 : tensor<2048x1024xf32>
  %b = remat.philox_uniform %seed, %o2 : tensor<333x7xf16>
  %c = remat.philox_uniform %seed, %o3 : tensor<5x3x2xbf16>
  return %mask, %a, %b, %c : tensor<4096x512xf32>, tensor<2048x1024xf32>, tensor<333x7xf16>, tensor<5x3x2xbf16>
}
