// Umbrella header of the fwht library.
#pragma once

#include "fwht/half.hpp"
#include "fwht/options.hpp"
#include "fwht/plan.hpp"
#include "fwht/reference.hpp"
#include "fwht/transform.hpp"
#include "fwht/transform_product.hpp"
#include "pagh/error.hpp"
