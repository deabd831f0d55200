//===- DenseView.h - Rank-5 views of test buffers ---------------*- C++ -*-===//
//
// The runtime tests' operands: a buffer and a dense rank-5 view of it, its
// dimensions laid out in any order.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_UNITTESTS_RUNTIME_DENSEVIEW_H
#define REMAT_UNITTESTS_RUNTIME_DENSEVIEW_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <array>
#include <cstdint>

namespace remat::test {

/// Points `view` at `data`, starting `offset` elements in, with `sizes`, its
/// dimensions in memory from `order`'s outermost to innermost, none apart.
template <typename T>
void setDenseView(StridedMemRefType<T, 5> &view, T *data, int64_t offset,
                  const std::array<int64_t, 5> &sizes,
                  const std::array<int, 5> &order = {0, 1, 2, 3, 4}) {
  view.basePtr = view.data = data;
  view.offset = offset;
  int64_t stride = 1;
  for (int i = 4; i >= 0; --i) {
    view.sizes[order[i]] = sizes[order[i]];
    view.strides[order[i]] = stride;
    stride *= sizes[order[i]];
  }
}

} // namespace remat::test

#endif // REMAT_UNITTESTS_RUNTIME_DENSEVIEW_H
