// The budget planner's chain dynamic program (ChainPlanner.h) writes nested
// segments. On this chain of 8 tanh ops, each read by the backward region,
// the plans are measured with elementwise fusion off (PLAN below), which
// otherwise computes the whole chain inside the backward's kernels: the
// default lowering holds one 256-byte buffer and the planner marks nothing
// (FUSED). Without fusion no one-segment marking peaks below 1024 bytes; at
// 768 bytes the program nests two segments inside two others, and the
// smallest peak, 512 bytes, takes six levels, one op per level, Revolve's
// shape for a single checkpoint slot. -remat-checkpoint applies the marks
// and the report measures the same peaks.

// DEFINE: %{plan} = func.func(remat-thread-rng),remat-bufferize{plan-arena=false fuse-elementwise=false}
// RUN: remat-opt %s -remat-mark="policy=budget budget-bytes=768 plan-pipeline=%{plan}" 2>&1 | FileCheck %s
// RUN: remat-opt %s -remat-mark="policy=budget budget-bytes=768 plan-pipeline=%{plan}" -remat-checkpoint -remat-verify -remat-report="plan-pipeline=%{plan}" 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: remat-opt %s -remat-mark="policy=budget budget-bytes=512 plan-pipeline=%{plan}" -remat-checkpoint -remat-verify -remat-report="plan-pipeline=%{plan}" 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: not remat-opt %s -remat-mark="policy=budget budget-bytes=511 plan-pipeline=%{plan}" 2>&1 | FileCheck %s --check-prefix=INFEASIBLE
// RUN: remat-opt %s -remat-mark="policy=budget budget-between=0" 2>&1 | FileCheck %s --check-prefix=FUSED

// CHECK: remark: -remat-mark: policy=budget, segments: 4, predicted peak 768 bytes, recompute FLOPs 448, budget 768 bytes
// CHECK: math.tanh %{{.*}} {remat.segment = 0 : i64}
// CHECK: math.tanh %{{.*}} {remat.segment = [0, 1]}
// CHECK: math.tanh %{{.*}} {remat.segment = 0 : i64}
// CHECK: math.tanh %{{.*}} : tensor<64xf32>
// CHECK: math.tanh %{{.*}} {remat.segment = [2, 3]}
// CHECK: math.tanh %{{.*}} {remat.segment = 2 : i64}
// CHECK: math.tanh %{{.*}} : tensor<64xf32>
// CHECK: math.tanh %{{.*}} : tensor<64xf32>

// REPORT: static peak: 768 bytes
// REPORT: recompute FLOPs: 448 in 7 recomputed ops
// REPORT: segment [0, 1]: 1 ops, 2 recomputed (128 FLOPs)
// REPORT: segment [2, 3]: 1 ops, 2 recomputed (128 FLOPs)

// DEEP: static peak: 512 bytes
// DEEP: recompute FLOPs: 1344 in 21 recomputed ops
// DEEP: segment [0, 1, 2, 3, 4, 5]: 1 ops, 6 recomputed (384 FLOPs)
// DEEP: math.tanh %arg0 {{.*}}remat.segment = [0, 1, 2, 3, 4, 5]}
// DEEP: remat.segment = [0, 1, 2, 3, 4]}
// DEEP: remat.segment = [0, 1, 2, 3]}
// DEEP: remat.segment = [0, 1, 2]}
// DEEP: remat.segment = [0, 1]}
// DEEP: remat.segment = 0 : i64}

// INFEASIBLE: error: -remat-mark: budget of 511 bytes is infeasible: the smallest peak the planner reached is 512 bytes (unmarked: 2048 bytes)

// FUSED: remark: -remat-mark: policy=budget, segments: 0, predicted peak 256 bytes, recompute FLOPs 0, budget 256 bytes

func.func @deep(%x: tensor<64xf32>) -> tensor<64xf32> {
  %v0 = math.tanh %x : tensor<64xf32>
  %v1 = math.tanh %v0 : tensor<64xf32>
  %v2 = math.tanh %v1 : tensor<64xf32>
  %v3 = math.tanh %v2 : tensor<64xf32>
  %v4 = math.tanh %v3 : tensor<64xf32>
  %v5 = math.tanh %v4 : tensor<64xf32>
  %v6 = math.tanh %v5 : tensor<64xf32>
  %v7 = math.tanh %v6 : tensor<64xf32>
  %g = remat.backward {
    %s7 = arith.mulf %v7, %v7 : tensor<64xf32>
    %a7 = arith.addf %x, %s7 : tensor<64xf32>
    %s6 = arith.mulf %v6, %v6 : tensor<64xf32>
    %a6 = arith.addf %a7, %s6 : tensor<64xf32>
    %s5 = arith.mulf %v5, %v5 : tensor<64xf32>
    %a5 = arith.addf %a6, %s5 : tensor<64xf32>
    %s4 = arith.mulf %v4, %v4 : tensor<64xf32>
    %a4 = arith.addf %a5, %s4 : tensor<64xf32>
    %s3 = arith.mulf %v3, %v3 : tensor<64xf32>
    %a3 = arith.addf %a4, %s3 : tensor<64xf32>
    %s2 = arith.mulf %v2, %v2 : tensor<64xf32>
    %a2 = arith.addf %a3, %s2 : tensor<64xf32>
    %s1 = arith.mulf %v1, %v1 : tensor<64xf32>
    %a1 = arith.addf %a2, %s1 : tensor<64xf32>
    %s0 = arith.mulf %v0, %v0 : tensor<64xf32>
    %a0 = arith.addf %a1, %s0 : tensor<64xf32>
    remat.yield %a0 : tensor<64xf32>
  } : tensor<64xf32>
  return %g : tensor<64xf32>
}
