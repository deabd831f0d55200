//===- BufferizableOpInterfaceImpl.cpp - remat bufferization --------------===//
//
// This file implements the bufferization of remat.barrier, which must survive
// one-shot bufferization so that nothing merges recomputed tensors with their
// originals before they live in separate buffers.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/Transforms/BufferizableOpInterfaceImpl.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace remat;

namespace {

struct BarrierOpInterface
    : public BufferizableOpInterface::ExternalModel<BarrierOpInterface,
                                                    BarrierOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &opOperand,
                              const AnalysisState &state) const {
    return false;
  }

  bool bufferizesToMemoryWrite(Operation *op, OpOperand &opOperand,
                               const AnalysisState &state) const {
    return false;
  }

  AliasingValueList getAliasingValues(Operation *op, OpOperand &opOperand,
                                      const AnalysisState &state) const {
    return {{op->getResult(opOperand.getOperandNumber()),
             BufferRelation::Equivalent}};
  }

  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value value, const BufferizationOptions &options,
                const BufferizationState &state,
                SmallVector<Value> &invocationStack) const {
    Value input = cast<BarrierOp>(op)
                      .getInputs()[cast<OpResult>(value).getResultNumber()];
    return bufferization::getBufferType(input, options, state, invocationStack);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto barrier = cast<BarrierOp>(op);
    SmallVector<Value> inputs;
    for (Value input : barrier.getInputs()) {
      if (!isa<TensorType>(input.getType())) {
        inputs.push_back(input);
        continue;
      }
      FailureOr<Value> buffer = getBuffer(rewriter, input, options, state);
      if (failed(buffer))
        return failure();
      inputs.push_back(*buffer);
    }
    auto newBarrier = BarrierOp::create(rewriter, op->getLoc(), inputs);
    newBarrier->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    replaceOpWithBufferizedValues(rewriter, op, newBarrier.getResults());
    return success();
  }
};

} // namespace

void remat::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, RematDialect *dialect) {
    BarrierOp::attachInterface<BarrierOpInterface>(*context);
  });
}
