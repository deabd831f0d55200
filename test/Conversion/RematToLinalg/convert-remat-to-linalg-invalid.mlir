// RUN: remat-opt %s -split-input-file -convert-remat-to-linalg -verify-diagnostics

// Checks that stateful random ops are refused rather than lowered with fresh
// bits each time they run.
func.func @stateful() -> tensor<4xf32> {
  // expected-error @+1 {{'remat.rng_uniform' op draws from the step's stateful generator, which has no lowering; -remat-thread-rng turns it into a 'remat.philox_uniform' with an explicit seed and offset}}
  %u = remat.rng_uniform : tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

// Checks that the seed's lowering does not call a function of the same name
// that is not the runtime's.
// expected-note @+1 {{the symbol is defined here}}
func.func private @remat_rng_seed() -> i32

func.func @seed_op() -> i64 {
  // expected-error @+1 {{'remat.rng_seed' op lowers to a call of the runtime's @remat_rng_seed : () -> i64, but the module defines that symbol otherwise}}
  %s = remat.rng_seed
  return %s : i64
}

// -----

// expected-note @+1 {{the symbol is defined here}}
func.func @remat_rng_seed() -> i64 {
  %c = arith.constant 1 : i64
  return %c : i64
}

func.func @seed_op() -> i64 {
  // expected-error @+1 {{'remat.rng_seed' op lowers to a call of the runtime's @remat_rng_seed : () -> i64, but the module defines that symbol otherwise}}
  %s = remat.rng_seed
  return %s : i64
}
