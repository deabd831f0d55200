//===- consumer-opt.cpp - An opt tool of another compiler -----------------===//
//
// Registers remat's dialect and passes next to the compiler's own, the way a
// compiler links remat as a library.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematDialect.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"
#include "remat/Planning/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<remat::RematDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::math::MathDialect,
                  mlir::tensor::TensorDialect>();
  remat::registerRematTransformsPasses();
  remat::registerRematPlanningPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "consumer of remat\n", registry));
}
