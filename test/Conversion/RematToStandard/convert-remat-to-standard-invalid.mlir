// RUN: remat-opt %s -split-input-file -convert-remat-to-standard -verify-diagnostics

// Checks that stateful random ops are refused rather than lowered with fresh
// bits each time they run.
func.func @stateful() -> tensor<4xf32> {
  // expected-error @+1 {{'remat.rng_uniform' op reads the generator state and cannot be lowered; run -remat-thread-rng first}}
  %u = remat.rng_uniform : tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

func.func @seed_op() -> i64 {
  // expected-error @+1 {{'remat.rng_seed' op reads the generator state and cannot be lowered; run -remat-thread-rng first}}
  %s = remat.rng_seed
  return %s : i64
}
