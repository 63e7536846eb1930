#include "gzip_blocks.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "matrix_io/error.hpp"

namespace pagh::matrix_io::detail {

struct GzipBlocks::Stream {
  z_stream z{};
  std::string_view rest;  // compressed bytes not yet given to zlib
  bool initialized = false;
  ~Stream() {
    if (initialized) inflateEnd(&z);
  }
};

GzipBlocks::GzipBlocks(std::string_view compressed, const std::string& name)
    : stream_(std::make_unique<Stream>()), name_(name), buffer_(new char[block_bytes]), capacity_(block_bytes) {
  // 16 + MAX_WBITS: gzip framing only (header, CRC-32 and length checked by zlib).
  if (inflateInit2(&stream_->z, 16 + MAX_WBITS) != Z_OK) fail("cannot start gzip decompression (zlib)");
  stream_->initialized = true;
  stream_->rest = compressed;
}

GzipBlocks::~GzipBlocks() = default;

void GzipBlocks::fail(const std::string& reason) const { throw MatrixMarketError(name_, 0, reason); }

void GzipBlocks::fill() {
  // Keep the unfinished line at the front; grow when one line fills the whole buffer.
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, filled_ - begin_);
    filled_ -= begin_;
    begin_ = 0;
  }
  if (filled_ == capacity_) {
    if (capacity_ >= max_line_bytes)
      fail("corrupt input: a line of the decompressed text is longer than " + std::to_string(max_line_bytes >> 20) +
           " MiB");
    std::unique_ptr<char[]> larger(new char[capacity_ * 2]);
    std::memcpy(larger.get(), buffer_.get(), filled_);
    buffer_ = std::move(larger);
    capacity_ *= 2;
  }
  z_stream& z = stream_->z;
  while (filled_ < capacity_ && !finished_) {
    const auto in = static_cast<uInt>(std::min<std::size_t>(stream_->rest.size(), std::numeric_limits<uInt>::max()));
    const auto out = static_cast<uInt>(std::min<std::size_t>(capacity_ - filled_, std::numeric_limits<uInt>::max()));
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stream_->rest.data()));
    z.avail_in = in;
    z.next_out = reinterpret_cast<Bytef*>(buffer_.get() + filled_);
    z.avail_out = out;
    const int status = inflate(&z, Z_NO_FLUSH);
    stream_->rest.remove_prefix(in - z.avail_in);
    filled_ += out - z.avail_out;
    if (status == Z_STREAM_END) {
      // Another member may follow (concatenated gzip files); anything else after a stream is an error.
      if (stream_->rest.empty()) {
        finished_ = true;
      } else if (is_gzip(stream_->rest)) {
        if (inflateReset(&z) != Z_OK) fail("cannot restart gzip decompression (zlib)");
      } else {
        fail("corrupt gzip data: " + std::to_string(stream_->rest.size()) +
             " bytes that are not a gzip stream follow the compressed data");
      }
      continue;
    }
    if (status == Z_DATA_ERROR) {
      const std::string detail = z.msg != nullptr ? z.msg : "invalid data";
      if (detail == "incorrect data check" || detail == "incorrect length check")
        fail("corrupt gzip data: " + detail + " (the decompressed text does not match the checksum)");
      fail("corrupt gzip data: " + detail);
    }
    if (status == Z_MEM_ERROR) throw std::bad_alloc();
    // No progress possible: zlib needs input that is not there.
    if (status == Z_BUF_ERROR && stream_->rest.empty()) fail("truncated gzip data: the compressed stream ends early");
    if (status == Z_OK && in == 0 && out == z.avail_out && stream_->rest.empty())
      fail("truncated gzip data: the compressed stream ends early");
    if (status != Z_OK && status != Z_BUF_ERROR) fail("corrupt gzip data (zlib status " + std::to_string(status) + ")");
  }
}

std::string_view GzipBlocks::next_block() {
  for (;;) {
    const char* begin = buffer_.get() + begin_;
    const std::size_t pending = filled_ - begin_;
    if (finished_) {  // the rest, last line with or without its '\n'
      begin_ = filled_;
      return {begin, pending};
    }
    // Hand out up to the last '\n' once the buffer is full; keep the unfinished line for later.
    if (filled_ == capacity_ && begin_ == 0) {
      for (std::size_t i = pending; i > 0; --i) {
        if (begin[i - 1] == '\n') {
          begin_ += i;
          return {begin, i};
        }
      }
    }
    fill();
  }
}

}  // namespace pagh::matrix_io::detail
