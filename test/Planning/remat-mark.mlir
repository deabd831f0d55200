// RUN: remat-opt %s -split-input-file -remat-mark="policy=sequential segments=2" | FileCheck %s --check-prefix=SEQ2
// RUN: remat-opt %s -split-input-file -remat-mark="policy=sequential segments=4" | FileCheck %s --check-prefix=SEQ4
// RUN: remat-opt %s -split-input-file -remat-mark="policy=sqrt" | FileCheck %s --check-prefix=SQRT
// RUN: remat-opt %s -split-input-file -remat-mark="policy=selective save-ops=math.exp save-names=c" | FileCheck %s --check-prefix=SEL
// RUN: remat-opt %s -split-input-file -remat-mark | FileCheck %s --check-prefix=ANN
// RUN: remat-opt %s -remat-mark="policy=budget budget-bytes=64" 2>&1 | FileCheck %s --check-prefix=B64
// RUN: remat-opt %s -remat-mark="policy=budget budget-fraction=1" 2>&1 | FileCheck %s --check-prefix=B64
// RUN: remat-opt %s -remat-mark="policy=budget budget-between=0.5" 2>&1 | FileCheck %s --check-prefix=B64
// RUN: remat-opt %s -remat-mark="policy=budget budget-between=0.5 plan-work=200" 2>&1 | FileCheck %s --check-prefix=WORK
// RUN: remat-opt %s -remat-mark="policy=budget budget-between=0.5 plan-work=10" 2>&1 | FileCheck %s --check-prefix=MODEL
// RUN: remat-opt %s -remat-mark="policy=budget budget-between=0.5 plan-candidates=1" 2>&1 | FileCheck %s --check-prefix=NO-PLANS
// RUN: remat-opt %s -split-input-file -remat-mark="policy=sequential segments=2" -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: remat-opt %s -remat-mark="policy=budget budget-bytes=64" -remat-checkpoint -remat-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: remat-opt %s -split-input-file -remat-mark="policy=sequential segments=2 predict=false" -remat-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPREDICT
// RUN: remat-opt %s -remat-mark="policy=budget budget-bytes=64" -remat-checkpoint -remat-report=format=json -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=PLANJSON

// A chain of four elementwise ops of equal FLOPs, every value needed by the
// backward region; %a carries an annotation that every policy but
// annotations replaces.

// Checks that sequential splits the chain into N runs of equal FLOPs and
// leaves the last run unmarked.
// SEQ2-LABEL: func.func @chain
// SEQ2: math.tanh %{{.*}} {remat.segment = 0 : i64}
// SEQ2: math.exp %{{.*}} {remat.segment = 0 : i64}
// SEQ2: math.tanh %{{[a-z0-9]+}} {remat.name = "c"} :
// SEQ2: math.exp %{{[a-z0-9]+}} :
// SEQ4: math.tanh %{{.*}} {remat.segment = 0 : i64}
// SEQ4: math.exp %{{.*}} {remat.segment = 1 : i64}
// SEQ4: math.tanh %{{.*}} {remat.name = "c", remat.segment = 2 : i64}
// SEQ4: math.exp %{{[a-z0-9]+}} :

// Checks that sqrt counts four layers (four ops of equal FLOPs, no
// boundary by bytes) and so makes ceil(sqrt(4)) = 2 segments.
// SQRT: math.tanh %{{.*}} {remat.segment = 0 : i64}
// SQRT: math.exp %{{.*}} {remat.segment = 0 : i64}
// SQRT: math.tanh %{{[a-z0-9]+}} {remat.name = "c"} :
// SQRT: math.exp %{{[a-z0-9]+}} :

// Checks that selective recomputes everything but the named op kinds and
// the named values, which get the save policy.
// SEL: math.tanh %{{.*}} {remat.segment = 0 : i64}
// SEL: math.exp %{{.*}} {remat.policy = "save", remat.segment = 0 : i64}
// SEL: math.tanh %{{.*}} {remat.name = "c", remat.policy = "save", remat.segment = 0 : i64}
// SEL: math.exp %{{.*}} {remat.policy = "save", remat.segment = 0 : i64}

// Checks that the default policy keeps the annotations as written.
// ANN: math.tanh %{{.*}} {remat.segment = 3 : i64}
// ANN: math.exp %{{[a-z0-9]+}} :

// Checks that the pass states its plan and that the checkpointed result
// matches it: the predicted peak is the memory plan's, the one -remat-report
// prints (the model would say 128 bytes).
// REMARK: remark: -remat-mark: policy=sequential, segments: 1, predicted peak [[PEAK:[0-9]+]] bytes, recompute FLOPs 32
// REMARK: static peak: [[PEAK]] bytes
// REMARK: recompute FLOPs: 32 in 2 recomputed ops
// Checks that predict=false marks the same ops without measuring the plan.
// NOPREDICT: remark: -remat-mark: policy=sequential, segments: 1{{$}}
// NOPREDICT: plan: policy=sequential, 1 segments{{$}}
// Checks that budget decides on the memory plans: lowered, the four
// elementwise ops fuse into the backward's one kernel, so the step holds one
// 64-byte buffer whatever is marked, and the cheapest marking within 64
// bytes (and at the unmarked peak, and half way from the smallest peak) is
// no mark at all. The model, which stores every value, would recompute.
// test/Planning/remat-mark-nested.mlir has budgets that need recomputing.
// B64: remark: -remat-mark: policy=budget, segments: 0, predicted peak 64 bytes, recompute FLOPs 0, budget 64 bytes (48 markings measured on their memory plans, 367 on the model, every one-segment marking)
// Checks that the plans' work is bounded: plan-work / ops plans (200 / 11),
// and, with room for fewer than two, the decision is the liveness model's,
// which does not see the fusion and so marks the chain to reach its 128.
// WORK: budget 64 bytes (18 markings measured on their memory plans, 367 on the model
// MODEL: remark: -remat-mark: policy=budget, segments: 1, predicted peak 128 bytes, recompute FLOPs 16, budget 128 bytes (decided on the model: plans are measured for steps of up to 5 ops, this one has 11; 367 on the model
// With fewer than two plan candidates the remark names that option, not the
// step's size, as the reason.
// NO-PLANS: budget 128 bytes (decided on the model: plan-candidates=1 measures none; 367 on the model
// B64-NOT: remat.segment
// Checks that -remat-report prints the plan, in text and JSON, and that the
// checkpointed peak agrees with it.
// PLAN: static peak: 64 bytes
// PLAN: recompute FLOPs: 0 in 0 recomputed ops
// PLAN: plan: policy=budget, 0 segments, predicted peak 64 bytes, recompute FLOPs 0, budget 64 bytes
// PLANJSON: "plan": {
// PLANJSON-NEXT: "budget": 64,
// PLANJSON-NEXT: "policy": "budget",
// PLANJSON-NEXT: "predicted_peak": 64,
// PLANJSON-NEXT: "recompute_flops": 0,
// PLANJSON-NEXT: "segments": 0
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = math.tanh %x {remat.segment = 3 : i64} : tensor<16xf32>
  %b = math.exp %a : tensor<16xf32>
  %c = math.tanh %b {remat.name = "c"} : tensor<16xf32>
  %d = math.exp %c : tensor<16xf32>
  %g = remat.backward {
    %0 = arith.mulf %d, %c : tensor<16xf32>
    %1 = arith.mulf %0, %b : tensor<16xf32>
    %2 = arith.mulf %1, %a : tensor<16xf32>
    remat.yield %2 : tensor<16xf32>
  } : tensor<16xf32>
  return %g : tensor<16xf32>
}
