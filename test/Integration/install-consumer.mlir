// REQUIRES: cmake
// RUN: rm -rf %t && mkdir -p %t
// RUN: %cmake --install %remat_obj_root --prefix %t/install > %t/install.log
// RUN: %cmake -G Ninja -S %S/Inputs/consumer -B %t/build \
// RUN:   -DCMAKE_CXX_COMPILER=%cxx -DCMAKE_PREFIX_PATH=%t/install \
// RUN:   -DMLIR_DIR=%mlir_dir > %t/configure.log
// RUN: %cmake --build %t/build > %t/build.log
// RUN: %t/build/consumer-opt %s -remat-thread-rng -remat-checkpoint -remat-verify | FileCheck %s

// Checks that remat works as a library: installed, found with
// find_package(Remat) by another project, its passes registered in that
// project's own tool and run there.
// CHECK-LABEL: func.func @step(
// CHECK:         %[[A:.*]] = math.tanh %{{.*}} {remat.id = 0 : i64, remat.segment = 0 : i64}
// CHECK:         remat.backward {
// CHECK:           %[[B:.*]] = remat.barrier
// CHECK:           math.tanh %[[B]] {remat.clone_of = 0 : i64}
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %a, %dy : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %a, %g : tensor<4xf32>, tensor<4xf32>
}
