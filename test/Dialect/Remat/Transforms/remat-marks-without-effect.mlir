// RUN: remat-opt %s -split-input-file -verify-diagnostics -remat-checkpoint -o /dev/null
// RUN: remat-opt %s -split-input-file -verify-diagnostics -remat-report -o /dev/null
// RUN: remat-opt %s -split-input-file -verify-diagnostics -remat-mark=policy=annotations -o /dev/null
// RUN: remat-opt %s -split-input-file -verify-diagnostics -remat-mark=policy=sqrt -o /dev/null

// The passes that read marks reject those that cannot take effect, with the
// same error, instead of silently doing nothing.

// Checks a mark in a function without a backward region.
func.func @no_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'math.tanh' op is marked for checkpointing, but its function has no 'remat.backward': marks only take effect in a training step}}
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks a mark on an op after the backward region.
func.func @after_backward(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  // expected-note @+1 {{the backward region is here}}
  %g = remat.backward {
    %d = arith.mulf %y, %y : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  // expected-error @+1 {{'math.exp' op is marked for checkpointing but follows the 'remat.backward' region; only forward ops (before it) belong to segments}}
  %z = math.exp %g {remat.segment = 1 : i64} : tensor<4xf32>
  return %y, %z : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that a policy after the backward region is rejected the same way.
func.func @policy_after_backward(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{the backward region is here}}
  %g = remat.backward {
    remat.yield %x : tensor<4xf32>
  } : tensor<4xf32>
  // expected-error @+1 {{'math.exp' op is marked for checkpointing but follows the 'remat.backward' region}}
  %z = math.exp %g {remat.segment = 0 : i64, remat.policy = "save"} : tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// Checks that unmarked functions, with or without a backward region, pass.
func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = math.tanh %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
