//===- ParserHazards.h - Inputs MLIR 22's parser crashes on -----*- C++ -*-===//
//
// MLIR 22's parsers of a few upstream ops crash on malformed input instead of
// reporting an error (docs/Rationale.md, "Inputs MLIR's parser crashes on").
// remat's tools look for those forms in the text before they parse it, and
// reject the file with a located error.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SUPPORT_PARSERHAZARDS_H
#define REMAT_SUPPORT_PARSERHAZARDS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace remat {

/// A place in a file's text where MLIR 22's parser would crash.
struct ParserHazard {
  /// The byte offset of the offending token.
  size_t offset = 0;
  /// What is wrong there, as an error message.
  std::string message;
};

/// Returns the first hazard in `text`, MLIR's textual IR, if any: in the
/// custom form of a linalg op, `<` not followed by `{` (the named ops take
/// whatever attribute follows for their properties dictionary), or the
/// `permutation =` of linalg.transpose or `dimensions =` of linalg.broadcast
/// and linalg.reduce not followed by a list of integers, or `iterator_types`
/// of linalg.generic other than a list of strings. Comments, strings,
/// generic forms ("linalg.transpose"(...)) and attribute or type names
/// (#linalg.iterator_type<parallel>) are not hazards.
std::optional<ParserHazard> findParserHazard(llvm::StringRef text);

/// Prints the first hazard of `sourceMgr`'s main buffer as a located error
/// on `os` and fails; succeeds when there is none.
llvm::LogicalResult checkParserHazards(const llvm::SourceMgr &sourceMgr,
                                       llvm::raw_ostream &os);

} // namespace remat

#endif // REMAT_SUPPORT_PARSERHAZARDS_H
