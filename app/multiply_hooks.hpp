// Points where a caller of run_multiply takes part in the main command without changing it: the
// distributed run (mpi_multiply.cpp) starts its workers reading once the options are known and
// puts its own backend, which sketches a share and sums the ranks' sketches, in place of the one
// selected.
#pragma once

#include <memory>

#include "backend.hpp"

namespace pagh_mm {

struct MultiplyOptions;

class MultiplyHooks {
 public:
  virtual ~MultiplyHooks() = default;
  // The options are parsed; nothing has been read yet.
  virtual void started(const MultiplyOptions& options) = 0;
  // The backend selected (--backend): returns the one the command uses instead.
  virtual std::unique_ptr<SketchBackend> backend(std::unique_ptr<SketchBackend> selected) = 0;
};

}  // namespace pagh_mm
