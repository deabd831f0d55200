// RUN: remat-opt %s -split-input-file -remat-outline -verify-diagnostics

// Checks that existing symbols are not overwritten.
// expected-note @+1 {{defined here}}
func.func private @step_fwd()
// expected-error @+1 {{'func.func' op cannot be outlined: @step_fwd exists already}}
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = remat.backward {
    remat.yield %x : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Checks that ops after the backward region are refused.
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = remat.backward {
    remat.yield %x : tensor<4xf32>
  } : tensor<4xf32>
  // expected-error @+1 {{'arith.addf' op follows 'remat.backward'; -remat-outline needs the backward region to end the step}}
  %h = arith.addf %g, %g : tensor<4xf32>
  return %h : tensor<4xf32>
}
