//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// This file implements reading and writing the NumPy .npy format.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace remat;

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

static Error npyError(StringRef path, const Twine &message) {
  return createStringError(inconvertibleErrorCode(),
                           "'" + path + "': " + message);
}

/// Returns the text of the value of `key` in the header dictionary: a
/// quoted string, a parenthesized tuple or a bare word.
static std::optional<StringRef> findValue(StringRef header, StringRef key) {
  size_t keyPos = header.find(("'" + key + "'").str());
  if (keyPos == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(keyPos + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  char close = rest.starts_with("(") ? ')' : rest.starts_with("'") ? '\'' : 0;
  if (close) {
    size_t end = rest.find(close, 1);
    if (end == StringRef::npos)
      return std::nullopt;
    return rest.take_front(end + 1);
  }
  return rest.take_until([](char c) { return c == ',' || c == '}'; }).trim();
}

Expected<NpyArray> remat::readNpy(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(path);
  if (!file)
    return npyError(path, "cannot read: " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  if (bytes.size() < kMagicSize + 4 ||
      bytes.take_front(kMagicSize) != StringRef(kMagic, kMagicSize))
    return npyError(path, "not a .npy file (bad magic)");

  uint8_t major = bytes[kMagicSize];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError(path, "truncated header");
    headerLength = uint32_t(uint8_t(bytes[8])) |
                   uint32_t(uint8_t(bytes[9])) << 8 |
                   uint32_t(uint8_t(bytes[10])) << 16 |
                   uint32_t(uint8_t(bytes[11])) << 24;
    headerStart = 12;
  } else {
    return npyError(path, "unsupported .npy version " + Twine(major));
  }
  if (bytes.size() < headerStart + headerLength)
    return npyError(path, "truncated header");
  StringRef header = bytes.substr(headerStart, headerLength);

  NpyArray array;
  std::optional<StringRef> descr = findValue(header, "descr");
  std::optional<StringRef> order = findValue(header, "fortran_order");
  std::optional<StringRef> shape = findValue(header, "shape");
  if (!descr || !order || !shape)
    return npyError(path, "header lacks descr, fortran_order or shape");
  if (*order != "False")
    return npyError(path, "Fortran-order arrays are not supported");
  array.dtype = descr->trim("'\"").str();
  if (array.dtype.size() < 3 ||
      (array.dtype[0] != '<' && array.dtype[0] != '|'))
    return npyError(path, "dtype '" + array.dtype +
                              "' is not little-endian or byte-sized");

  SmallVector<StringRef> dims;
  shape->trim("()").split(dims, ',', -1, /*KeepEmpty=*/false);
  int64_t elements = 1;
  for (StringRef dim : dims) {
    int64_t size;
    if (dim.trim().getAsInteger(10, size) || size < 0)
      return npyError(path, "bad shape " + *shape);
    array.shape.push_back(size);
    elements *= size;
  }
  int64_t elementSize;
  if (StringRef(array.dtype).drop_front(2).getAsInteger(10, elementSize))
    return npyError(path, "bad dtype '" + array.dtype + "'");

  StringRef payload = bytes.drop_front(headerStart + headerLength);
  if (static_cast<int64_t>(payload.size()) != elements * elementSize)
    return npyError(path, "holds " + Twine(payload.size()) +
                              " bytes of data, the header says " +
                              Twine(elements * elementSize));
  array.data.assign(payload.bytes_begin(), payload.bytes_end());
  return array;
}

Error remat::writeNpy(StringRef path, const NpyArray &array) {
  std::string shape = "(";
  for (int64_t dim : array.shape)
    shape += std::to_string(dim) + ",";
  if (array.shape.size() > 1)
    shape.pop_back();
  shape += ")";
  std::string header = "{'descr': '" + array.dtype +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic, version and length take 10 bytes; pad the header with spaces to
  // a multiple of 64 and end it with a newline, as NumPy does.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return npyError(path, "cannot write: " + ec.message());
  os.write(kMagic, kMagicSize);
  os << '\x01' << '\x00';
  os << char(header.size() & 0xff) << char(header.size() >> 8);
  os << header;
  os.write(reinterpret_cast<const char *>(array.data.data()),
           array.data.size());
  return Error::success();
}
