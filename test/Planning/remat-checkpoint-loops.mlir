// RUN: remat-opt %s -split-input-file -remat-checkpoint-loops=every=2 -verify-diagnostics | FileCheck %s
// RUN: remat-opt %s -split-input-file -remat-checkpoint-loops=every=2 -cse -canonicalize -verify-diagnostics -o /dev/null

// Checks the rewrite of a scan of 4 iterations at k = 2: the forward writes
// its carry to slot b of a 2-slot checkpoint stack before each block of 2
// iterations and no longer stacks its tanh; the backward loop walks the
// blocks last first, reruns a block's 2 iterations from its checkpoint into
// a 2-slot local stack, then runs the block's 2 backward iterations reading
// slot 1 - t (iteration n - 1 - j = 2 b + 1 - t). The rerun loop names the
// loop over blocks (remat.rerun_of = its remat.id) for -remat-report.
// CHECK-LABEL: func.func @scan
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>, %[[DY:.*]]: tensor<2xf32>)
// CHECK:      %[[CKE:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK:      %[[FWD:.*]]:2 = scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[H:.*]] = %[[X]], %[[CK:.*]] = %[[CKE]])
// CHECK-NEXT:   %[[CK2:.*]] = tensor.insert_slice %[[H]] into %[[CK]][%[[B]], 0] [1, 2] [1, 1]
// CHECK-NEXT:   arith.muli %[[B]]
// CHECK-NEXT:   %[[IN:.*]] = scf.for {{.*}} iter_args(%[[HI:.*]] = %[[H]])
// CHECK-NEXT:     arith.addi
// CHECK-NEXT:     %[[A:.*]] = math.tanh %[[HI]]
// CHECK-NEXT:     scf.yield %[[A]]
// CHECK:        scf.yield %[[IN]], %[[CK2]]
// CHECK-NEXT: } {remat.id = 0 : i64}
// CHECK:      remat.backward
// CHECK:        scf.for %[[RB:.*]] = {{.*}} iter_args(%[[G:.*]] = %[[DY]])
// CHECK-NEXT:     %[[BLK:.*]] = arith.subi %{{.*}}, %[[RB]]
// CHECK-NEXT:     %[[START:.*]] = tensor.extract_slice %[[FWD]]#1[%[[BLK]], 0] [1, 2] [1, 1]
// CHECK-NEXT:     %[[LOC0:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT:     arith.muli %[[BLK]]
// CHECK-NEXT:     %[[REC:.*]]:2 = scf.for %[[T:.*]] = {{.*}} iter_args(%[[HR:.*]] = %[[START]], %[[LOC:.*]] = %[[LOC0]])
// CHECK-NEXT:       arith.addi
// CHECK-NEXT:       %[[AR:.*]] = math.tanh %[[HR]]
// CHECK-NEXT:       %[[LOC2:.*]] = tensor.insert_slice %[[AR]] into %[[LOC]][%[[T]], 0] [1, 2] [1, 1]
// CHECK-NEXT:       scf.yield %[[AR]], %[[LOC2]]
// CHECK-NEXT:     } {remat.rerun_of = 0 : i64}
// CHECK:          scf.for %[[TP:.*]] = {{.*}} iter_args(%[[GI:.*]] = %[[G]])
// CHECK:            %[[AT:.*]] = arith.subi %{{.*}}, %[[TP]]
// CHECK:            tensor.extract_slice %[[REC]]#1[%[[AT]], 0] [1, 2] [1, 1]
// CHECK:      return %[[FWD]]#0
func.func @scan(%x: tensor<2xf32>, %dy: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %s0 = tensor.empty() : tensor<4x2xf32>
  // expected-remark @+1 {{-remat-checkpoint-loops: a scan of 4 iterations saves its carries every 2 iterations (2 checkpoints, 16 bytes) instead of its stacks (32 bytes); the backward recomputes 4 iterations into stacks of 2 slots (16 bytes)}}
  %h, %as = scf.for %i = %c0 to %c4 step %c1 iter_args(%hc = %x, %asc = %s0) -> (tensor<2xf32>, tensor<4x2xf32>) {
    %a = math.tanh %hc : tensor<2xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<4x2xf32>
    scf.yield %a, %as2 : tensor<2xf32>, tensor<4x2xf32>
  }
  %g = remat.backward {
    %one = arith.constant dense<1.0> : tensor<2xf32>
    %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%gc = %dy) -> (tensor<2xf32>) {
      %i = arith.subi %c3, %j : index
      %a = tensor.extract_slice %as[%i, 0] [1, 2] [1, 1] : tensor<4x2xf32> to tensor<2xf32>
      %a2 = arith.mulf %a, %a : tensor<2xf32>
      %d = arith.subf %one, %a2 : tensor<2xf32>
      %gn = arith.mulf %gc, %d : tensor<2xf32>
      scf.yield %gn : tensor<2xf32>
    }
    remat.yield %r : tensor<2xf32>
  } : tensor<2xf32>
  return %h, %g : tensor<2xf32>, tensor<2xf32>
}

// -----

// Checks that a loop whose stack the forward returns is left alone.
func.func @stack_returned(%x: tensor<2xf32>, %dy: tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %s0 = tensor.empty() : tensor<4x2xf32>
  // expected-remark @+1 {{-remat-checkpoint-loops: the loop is not a scan with a reverse backward loop: stack #1 is used other than by a loop directly in the backward region}}
  %h, %as = scf.for %i = %c0 to %c4 step %c1 iter_args(%hc = %x, %asc = %s0) -> (tensor<2xf32>, tensor<4x2xf32>) {
    %a = math.tanh %hc : tensor<2xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<4x2xf32>
    scf.yield %a, %as2 : tensor<2xf32>, tensor<4x2xf32>
  }
  %g = remat.backward {
    %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%gc = %dy) -> (tensor<2xf32>) {
      %i = arith.subi %c3, %j : index
      %a = tensor.extract_slice %as[%i, 0] [1, 2] [1, 1] : tensor<4x2xf32> to tensor<2xf32>
      %gn = arith.mulf %gc, %a : tensor<2xf32>
      scf.yield %gn : tensor<2xf32>
    }
    remat.yield %r : tensor<2xf32>
  } : tensor<2xf32>
  return %as, %g : tensor<4x2xf32>, tensor<2xf32>
}

// -----

// Checks that a backward loop reading the stack in forward order (slot j,
// not n - 1 - j) leaves the scan alone.
func.func @forward_order(%x: tensor<2xf32>, %dy: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s0 = tensor.empty() : tensor<4x2xf32>
  // expected-remark @+1 {{stack #1 is read other than at slot n - 1 - j}}
  %h, %as = scf.for %i = %c0 to %c4 step %c1 iter_args(%hc = %x, %asc = %s0) -> (tensor<2xf32>, tensor<4x2xf32>) {
    %a = math.tanh %hc : tensor<2xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<4x2xf32>
    scf.yield %a, %as2 : tensor<2xf32>, tensor<4x2xf32>
  }
  %g = remat.backward {
    %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%gc = %dy) -> (tensor<2xf32>) {
      %a = tensor.extract_slice %as[%j, 0] [1, 2] [1, 1] : tensor<4x2xf32> to tensor<2xf32>
      %gn = arith.mulf %gc, %a : tensor<2xf32>
      scf.yield %gn : tensor<2xf32>
    }
    remat.yield %r : tensor<2xf32>
  } : tensor<2xf32>
  return %h, %g : tensor<2xf32>, tensor<2xf32>
}

// -----

// Checks that a loop in a checkpoint segment, which -remat-checkpoint
// recomputes whole, and a loop of 3 iterations that k = 2 does not divide
// are left alone, and that a stateful random op in the body is reported.
func.func @left_alone(%x: tensor<2xf32>, %dy: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %s0 = tensor.empty() : tensor<3x2xf32>
  // expected-remark @+1 {{-remat-checkpoint-loops: the loop is in a checkpoint segment, which recomputes it whole}}
  %h, %as = scf.for %i = %c0 to %c3 step %c1 iter_args(%hc = %x, %asc = %s0) -> (tensor<2xf32>, tensor<3x2xf32>) {
    %a = math.tanh %hc : tensor<2xf32>
    %as2 = tensor.insert_slice %a into %asc[%i, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
    scf.yield %a, %as2 : tensor<2xf32>, tensor<3x2xf32>
  } {remat.segment = 0 : i64}
  // expected-remark @+1 {{-remat-checkpoint-loops: 2 does not divide the loop's 3 iterations}}
  %h2, %bs = scf.for %i = %c0 to %c3 step %c1 iter_args(%hc = %x, %bsc = %s0) -> (tensor<2xf32>, tensor<3x2xf32>) {
    %a = math.exp %hc : tensor<2xf32>
    %bs2 = tensor.insert_slice %a into %bsc[%i, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
    scf.yield %a, %bs2 : tensor<2xf32>, tensor<3x2xf32>
  }
  // expected-remark @+1 {{its body has an op with memory effects (a stateful random op: run -remat-thread-rng first)}}
  %h3, %cs = scf.for %i = %c0 to %c3 step %c1 iter_args(%hc = %x, %csc = %s0) -> (tensor<2xf32>, tensor<3x2xf32>) {
    %u = remat.rng_uniform : tensor<2xf32>
    %a = arith.mulf %hc, %u : tensor<2xf32>
    %cs2 = tensor.insert_slice %a into %csc[%i, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
    scf.yield %a, %cs2 : tensor<2xf32>, tensor<3x2xf32>
  }
  %g:2 = remat.backward {
    %r, %r2 = scf.for %j = %c0 to %c3 step %c1 iter_args(%gc = %dy, %gc2 = %dy) -> (tensor<2xf32>, tensor<2xf32>) {
      %c2 = arith.constant 2 : index
      %i = arith.subi %c2, %j : index
      %a = tensor.extract_slice %as[%i, 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
      %b = tensor.extract_slice %bs[%i, 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
      %c = tensor.extract_slice %cs[%i, 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
      %gn = arith.mulf %gc, %a : tensor<2xf32>
      %gb = arith.mulf %gc2, %b : tensor<2xf32>
      %gn2 = arith.mulf %gb, %c : tensor<2xf32>
      scf.yield %gn, %gn2 : tensor<2xf32>, tensor<2xf32>
    }
    remat.yield %r, %r2 : tensor<2xf32>, tensor<2xf32>
  } : tensor<2xf32>, tensor<2xf32>
  return %h, %h2, %g#0, %g#1 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Checks that a loop over i32 is left alone.
func.func @i32_loop(%x: tensor<2xf32>, %dy: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  // expected-remark @+1 {{-remat-checkpoint-loops: the loop is not a scan with a reverse backward loop: it does not run over index from 0 to a constant n step 1}}
  %h = scf.for %i = %c0 to %c4 step %c1 iter_args(%hc = %x) -> (tensor<2xf32>) : i32 {
    %a = math.tanh %hc : tensor<2xf32>
    scf.yield %a : tensor<2xf32>
  }
  %g = remat.backward {
    %d = arith.mulf %dy, %h : tensor<2xf32>
    remat.yield %d : tensor<2xf32>
  } : tensor<2xf32>
  return %h, %g : tensor<2xf32>, tensor<2xf32>
}
