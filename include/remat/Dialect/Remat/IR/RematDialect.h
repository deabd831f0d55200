//===- RematDialect.h - The remat dialect -----------------------*- C++ -*-===//
//
// Declares the remat dialect and its side-effect resources.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_DIALECT_REMAT_IR_REMATDIALECT_H
#define REMAT_DIALECT_REMAT_IR_REMATDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "remat/Dialect/Remat/IR/RematOpsDialect.h.inc"

#include "remat/Dialect/Remat/IR/RematEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "remat/Dialect/Remat/IR/RematAttrs.h.inc"

namespace remat {

/// The state of a training step's random number generator.
struct RngStateResource
    : public mlir::SideEffects::Resource::Base<RngStateResource> {
  llvm::StringRef getName() final { return "remat::RngState"; }
};

/// A resource only `remat.barrier` writes: it pins barriers in place.
struct BarrierResource
    : public mlir::SideEffects::Resource::Base<BarrierResource> {
  llvm::StringRef getName() final { return "remat::Barrier"; }
};

} // namespace remat

#endif // REMAT_DIALECT_REMAT_IR_REMATDIALECT_H
