//===- ParserHazards.cpp - Inputs MLIR 22's parser crashes on -------------===//
//
// A scan of textual IR for the op forms MLIR 22's parser crashes on (found
// by fuzz/remat-fuzz; test/Malformed/upstream-linalg-*.mlir). It reads just
// enough of MLIR's lexical structure not to be fooled by comments, strings
// and names: bare identifiers, `//` comments, string literals, and the
// sigils that start the names of values, blocks, symbols, attributes and
// types.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/ParserHazards.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

using namespace llvm;

namespace {

/// A cursor over textual IR that skips what MLIR's lexer skips.
class Scanner {
public:
  explicit Scanner(StringRef text, size_t position = 0)
      : text(text), position(position) {}

  size_t getOffset() const { return position; }
  bool atEnd() const { return position >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[position]; }
  void skip() { ++position; }

  /// Skips whitespace and `//` comments (MLIR's lexer skips space, tab,
  /// newline, carriage return and NUL bytes before the buffer's end; not
  /// '\v' or '\f').
  void skipSpace() {
    while (!atEnd()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0') {
        ++position;
      } else if (text.drop_front(position).starts_with("//")) {
        size_t end = text.find('\n', position);
        position = end == StringRef::npos ? text.size() : end;
      } else {
        return;
      }
    }
  }

  /// Skips the string literal that starts here, escapes included.
  void skipString() {
    for (++position; !atEnd(); ++position) {
      if (peek() == '\\') {
        ++position;
      } else if (peek() == '"' || peek() == '\n') {
        ++position;
        return;
      }
    }
  }

  /// Skips what starts here if it cannot name an op: a string literal
  /// (and with it the generic form of every op), or a sigil and the name
  /// after it (%x, ^bb0, @f, #linalg.iterator_type, !llvm.ptr). Returns
  /// whether it skipped anything.
  bool skipStringOrSigilName() {
    char c = peek();
    if (c == '"') {
      skipString();
      return true;
    }
    if (c != '%' && c != '^' && c != '@' && c != '#' && c != '!')
      return false;
    ++position;
    readIdentifier(/*afterSigil=*/true);
    return true;
  }

  /// Moves to the next character that may be part of an op's name or
  /// syntax, past space, comments, strings and sigils' names; returns
  /// false at the end of the text.
  bool skipToSyntax() {
    while (true) {
      skipSpace();
      if (atEnd())
        return false;
      if (!skipStringOrSigilName())
        return true;
    }
  }

  /// Whether `c` continues a bare identifier (`linalg.transpose`); the
  /// names after sigils (`%x-1`) may also hold '-'.
  static bool isIdentifierChar(char c, bool afterSigil = false) {
    return isAlnum(c) || c == '_' || c == '$' || c == '.' ||
           (afterSigil && c == '-');
  }

  /// Reads the identifier, or the name after a sigil, that starts here.
  StringRef readIdentifier(bool afterSigil = false) {
    size_t start = position;
    while (!atEnd() && isIdentifierChar(peek(), afterSigil))
      ++position;
    return text.slice(start, position);
  }

  /// Whether a list, `[` elements separated by commas `]`, starts here,
  /// each element one `readElement` reads (it returns whether it did).
  bool readList(function_ref<bool()> readElement) {
    if (peek() != '[')
      return false;
    ++position;
    skipSpace();
    if (peek() == ']')
      return true;
    while (true) {
      if (!readElement())
        return false;
      skipSpace();
      if (peek() == ']')
        return true;
      if (peek() != ',')
        return false;
      ++position;
      skipSpace();
    }
  }

  /// Whether a list of i64s starts here (the parser also mishandles an
  /// integer too large for one).
  bool readIntegerList() {
    return readList([&] {
      size_t start = position;
      if (peek() == '-')
        ++position;
      while (isDigit(peek()))
        ++position;
      int64_t value;
      return !text.slice(start, position).getAsInteger(10, value);
    });
  }

  /// Whether a list of string literals starts here.
  bool readStringList() {
    return readList([&] {
      if (peek() != '"')
        return false;
      skipString();
      return true;
    });
  }

  /// Moves to the next bare identifier outside the parentheses, brackets
  /// and braces that open from here on, and returns it; returns an empty
  /// reference at anything else (the next op's `%` result, a region's end).
  StringRef nextTopLevelIdentifier() {
    int depth = 0;
    while (true) {
      if (!skipToSyntax())
        return {};
      char c = peek();
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
        ++position;
      } else if (c == ')' || c == ']' || c == '}') {
        if (--depth < 0)
          return {};
        ++position;
      } else if (depth > 0) {
        if (isIdentifierChar(c))
          readIdentifier();
        else
          ++position;
      } else if (isAlpha(c) || c == '_') {
        return readIdentifier();
      } else {
        return {};
      }
    }
  }

private:
  StringRef text;
  size_t position;
};

} // namespace

/// The hazard of the attribute dictionary of a linalg.generic that starts
/// at `scanner`, if any: its parser formats an error about an
/// `iterator_types` element that is not a string from memory it does not
/// own, and crashes.
static std::optional<remat::ParserHazard>
checkGenericAttributes(Scanner scanner) {
  scanner.skip();
  int depth = 0;
  while (scanner.skipToSyntax()) {
    char c = scanner.peek();
    if (c == '-') {
      // The arrow of an affine map is no closing angle.
      scanner.skip();
      if (scanner.peek() == '>')
        scanner.skip();
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      ++depth;
      scanner.skip();
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (--depth < 0)
        return std::nullopt;
      scanner.skip();
    } else if (!Scanner::isIdentifierChar(c)) {
      scanner.skip();
    } else if (size_t at = scanner.getOffset();
               scanner.readIdentifier() == "iterator_types" && depth == 0) {
      scanner.skipSpace();
      if (scanner.peek() != '=')
        continue;
      scanner.skip();
      scanner.skipSpace();
      if (scanner.peek() != '[' || scanner.readStringList())
        return std::nullopt;
      return remat::ParserHazard{
          at, "`iterator_types` of linalg.generic must be a list of strings "
              "(\"parallel\", \"reduction\"): MLIR 22's parser crashes on "
              "anything else, so remat rejects the file before parsing it"};
    }
  }
  return std::nullopt;
}

/// The hazard of the linalg op `name` (without `linalg.`) whose custom form
/// continues at `scanner`, if any.
static std::optional<remat::ParserHazard> checkLinalgOp(StringRef name,
                                                        Scanner scanner) {
  scanner.skipSpace();
  if (scanner.peek() == '<') {
    size_t at = scanner.getOffset();
    scanner.skip();
    scanner.skipSpace();
    if (scanner.peek() == '{')
      return std::nullopt;
    return remat::ParserHazard{
        at, ("`<` after linalg." + name +
             " must open a properties dictionary `<{...}>`: MLIR 22's "
             "parsers of linalg ops take any attribute there for one and "
             "crash, so remat rejects the file before parsing it")
                .str()};
  }
  if (name == "generic" && scanner.peek() == '{')
    return checkGenericAttributes(scanner);
  StringRef key = StringSwitch<StringRef>(name)
                      .Case("transpose", "permutation")
                      .Cases({"broadcast", "reduce"}, "dimensions")
                      .Default("");
  if (key.empty())
    return std::nullopt;
  // `ins(...) outs(...) key = [...]`: the key is the first identifier
  // outside the operand lists.
  StringRef word = scanner.nextTopLevelIdentifier();
  while (word == "ins" || word == "outs")
    word = scanner.nextTopLevelIdentifier();
  if (word != key)
    return std::nullopt;
  size_t at = scanner.getOffset() - key.size();
  scanner.skipSpace();
  if (scanner.peek() != '=')
    return std::nullopt;
  scanner.skip();
  scanner.skipSpace();
  if (scanner.readIntegerList())
    return std::nullopt;
  return remat::ParserHazard{
      at, ("`" + key + " =` of linalg." + name +
           " must be followed by a list of integers `[...]`: MLIR 22's "
           "parser crashes on anything else, so remat rejects the file "
           "before parsing it")
              .str()};
}

std::optional<remat::ParserHazard> remat::findParserHazard(StringRef text) {
  Scanner scanner(text);
  while (scanner.skipToSyntax()) {
    if (!Scanner::isIdentifierChar(scanner.peek())) {
      scanner.skip();
      continue;
    }
    StringRef word = scanner.readIdentifier();
    if (word.consume_front("linalg."))
      if (std::optional<ParserHazard> hazard = checkLinalgOp(word, scanner))
        return hazard;
  }
  return std::nullopt;
}

LogicalResult remat::checkParserHazards(const SourceMgr &sourceMgr,
                                        raw_ostream &os) {
  const MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<ParserHazard> hazard = findParserHazard(buffer->getBuffer());
  if (!hazard)
    return success();
  sourceMgr.PrintMessage(
      os, SMLoc::getFromPointer(buffer->getBufferStart() + hazard->offset),
      SourceMgr::DK_Error, hazard->message);
  return failure();
}
