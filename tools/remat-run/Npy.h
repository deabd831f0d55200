//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes the NumPy .npy format (versions 1 to 3, C order,
// little-endian) for remat-run's inputs and outputs.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_REMATRUN_NPY_H
#define REMAT_TOOLS_REMATRUN_NPY_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

/// An n-dimensional array: NumPy dtype descriptor ("<f4", "|b1", ...), shape
/// and the raw little-endian bytes in C order.
struct NpyArray {
  std::string dtype;
  llvm::SmallVector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// Reads `path`; the error names the file and what is wrong with it.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);

/// Writes `array` to `path` (format version 1.0).
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

} // namespace remat

#endif // REMAT_TOOLS_REMATRUN_NPY_H
