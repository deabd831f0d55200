//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// This file implements reading and writing the NumPy .npy format.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
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

/// Returns the header of the .npy file `bytes` (its dictionary text), after
/// the magic, the version and the header's length.
static Expected<StringRef> readHeader(StringRef path, StringRef bytes) {
  if (!bytes.starts_with(StringRef(kMagic, kMagicSize)))
    return npyError(path, "not a .npy file (bad magic)");

  // Magic, major and minor version, then the header's length: 2 bytes
  // (version 1) or 4 (versions 2 and 3), little-endian.
  if (bytes.size() < kMagicSize + 2)
    return npyError(path, "truncated header: the file ends after " +
                              Twine(bytes.size()) +
                              " bytes, inside the format version");
  unsigned major = uint8_t(bytes[kMagicSize]);
  unsigned minor = uint8_t(bytes[kMagicSize + 1]);
  size_t lengthSize;
  if (major == 1)
    lengthSize = 2;
  else if (major == 2 || major == 3)
    lengthSize = 4;
  else
    return npyError(path, "unsupported .npy format version " + Twine(major) +
                              "." + Twine(minor) +
                              " (remat-run reads versions 1, 2 and 3)");
  size_t headerStart = kMagicSize + 2 + lengthSize;
  if (bytes.size() < headerStart)
    return npyError(path, "truncated header: the file ends after " +
                              Twine(bytes.size()) +
                              " bytes, inside the header length");
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthSize; ++i)
    headerLength |= uint64_t(uint8_t(bytes[kMagicSize + 2 + i])) << (8 * i);
  if (bytes.size() - headerStart < headerLength)
    return npyError(path, "truncated header: it should take " +
                              Twine(headerLength) + " bytes, the file has " +
                              Twine(bytes.size() - headerStart) +
                              " after the header length");
  return bytes.substr(headerStart, headerLength);
}

/// Checks the header's dtype ("<f4", "|b1": the byte order, a kind letter,
/// the size in bytes) and returns its element size.
static Expected<int64_t> parseDtype(StringRef path, StringRef dtype) {
  int64_t elementSize;
  if (dtype.size() < 3 || !StringRef("<>|").contains(dtype[0]) ||
      !isAlpha(dtype[1]) || dtype.drop_front(2).getAsInteger(10, elementSize) ||
      elementSize <= 0)
    return npyError(path, "bad dtype '" + dtype + "'");
  if (dtype[0] == '>')
    return npyError(path, "dtype '" + dtype +
                              "' is big-endian; remat-run reads little-endian "
                              "('<') data");

  return elementSize;
}

/// Appends the dimensions of the header's shape tuple to `dims`; returns
/// the number of elements.
static Expected<int64_t> parseShape(StringRef path, StringRef shape,
                                    SmallVectorImpl<int64_t> &dims) {
  StringRef dimsText = shape;
  if (!dimsText.consume_front("(") || !dimsText.consume_back(")"))
    return npyError(path, "bad shape " + shape);
  SmallVector<StringRef> dimTexts;
  dimsText.split(dimTexts, ',', -1, /*KeepEmpty=*/false);
  int64_t elements = 1;
  for (StringRef dim : dimTexts) {
    int64_t size;
    if (dim.trim().getAsInteger(10, size) || size < 0)
      return npyError(path, "bad shape " + shape);
    dims.push_back(size);
    if (MulOverflow(elements, size, elements))
      return npyError(path, "shape " + shape +
                                " has more elements than int64 counts");
  }
  return elements;
}

/// Checks that `payload` holds `dataBytes` bytes, and that a boolean array's
/// bytes are 0 or 1.
static Error checkPayload(StringRef path, StringRef payload, StringRef dtype,
                          int64_t dataBytes) {
  if (static_cast<uint64_t>(payload.size()) != uint64_t(dataBytes))
    return npyError(path, "holds " + Twine(payload.size()) +
                              " bytes of data, the header says " +
                              Twine(dataBytes));
  // Generated code loads booleans as i1, which is undefined for bytes other
  // than 0 and 1.
  if (dtype == "|b1")
    for (size_t i = 0; i < payload.size(); ++i)
      if (uint8_t(payload[i]) > 1)
        return npyError(
            path, "element " + Twine(i) + " of the boolean array is the byte " +
                      Twine(unsigned(uint8_t(payload[i]))) + ", not 0 or 1");
  return Error::success();
}

Expected<NpyArray> remat::readNpy(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(path);
  if (!file)
    return npyError(path, "cannot read: " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  Expected<StringRef> header = readHeader(path, bytes);
  if (!header)
    return header.takeError();

  NpyArray array;
  std::optional<StringRef> descr = findValue(*header, "descr");
  std::optional<StringRef> order = findValue(*header, "fortran_order");
  std::optional<StringRef> shape = findValue(*header, "shape");
  if (!descr || !order || !shape)
    return npyError(path, "header lacks descr, fortran_order or shape");
  if (*order == "True")
    return npyError(path, "Fortran-order (column-major) arrays are not "
                          "supported; save a C-order copy "
                          "(numpy.ascontiguousarray)");
  if (*order != "False")
    return npyError(path, "bad fortran_order " + *order);

  array.dtype = descr->trim("'\"").str();
  Expected<int64_t> elementSize = parseDtype(path, array.dtype);
  if (!elementSize)
    return elementSize.takeError();
  Expected<int64_t> elements = parseShape(path, *shape, array.shape);
  if (!elements)
    return elements.takeError();
  int64_t dataBytes;
  if (MulOverflow(*elements, *elementSize, dataBytes))
    return npyError(path, "shape " + *shape + " of dtype '" + array.dtype +
                              "' has more bytes than int64 counts");

  StringRef payload = bytes.drop_front(header->end() - bytes.begin());
  if (Error error = checkPayload(path, payload, array.dtype, dataBytes))
    return std::move(error);
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
