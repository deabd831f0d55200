// RUN: remat-opt %s -split-input-file -remat-thread-rng -verify-diagnostics

// Checks that random ops without a seed are an error naming the first one.
func.func @no_seed(%x: i64) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'remat.rng_uniform' op has no seed to thread: mark an i64 argument of @no_seed with {remat.rng_seed} or add a 'remat.rng_seed' op}}
  %a = remat.rng_uniform : tensor<4xf32>
  %b = remat.rng_uniform : tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
