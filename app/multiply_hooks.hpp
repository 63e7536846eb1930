// Points where a caller of run_multiply takes part in the main command without changing it: the
// distributed run (mpi_multiply.cpp) starts its workers reading once the options are known and
// puts its own backend, which sketches a share and sums the ranks' sketches, in place of the one
// selected.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include "backend.hpp"
#include "inputs.hpp"

namespace pagh_mm {

struct MultiplyOptions;

class MultiplyHooks {
 public:
  virtual ~MultiplyHooks() = default;
  // The options are parsed; nothing has been read yet.
  virtual void started(const MultiplyOptions& options) = 0;
  // Reads A and B in place of read_input, or nullopt to leave it to run_multiply (the distributed
  // run gives each rank its share: shared_operands.hpp).
  virtual std::optional<std::pair<InputMatrix, InputMatrix>> read_inputs(const MultiplyOptions&) { return std::nullopt; }
  // The backend selected (--backend): returns the one the command uses instead.
  virtual std::unique_ptr<SketchBackend> backend(std::unique_ptr<SketchBackend> selected) = 0;
};

}  // namespace pagh_mm
