#ifndef SPYRE_PYTHON_OPS_TD
#define SPYRE_PYTHON_OPS_TD

include "Spyre/IR/SpyreOps.td"

#endif
