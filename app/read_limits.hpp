// What pagh-mm lets the Matrix Market reader allocate for one input, and how the reader's refusals
// are worded for a command-line user, who cannot set the reader's options that the library's
// messages name (ReadOptions::max_result_bytes, the storage index type).
#pragma once

#include <string>

#include "matrix_io/read.hpp"

namespace pagh_mm {

// The reader's options for an input: the result may take at most the memory available now.
pagh::matrix_io::ReadOptions input_read_options();

// The reader's message with its API hints replaced by what they mean here.
std::string without_reader_api_names(std::string message);

}  // namespace pagh_mm
