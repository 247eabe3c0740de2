//===- SpyreTypes.h - Spyre types -------------------------------*- C++ -*-===//

#ifndef SPYRE_IR_SPYRETYPES_H
#define SPYRE_IR_SPYRETYPES_H

#include "spyre-mlir/Dialect/Spyre/IR/SpyreAttrs.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "spyre-mlir/Dialect/Spyre/IR/SpyreTypes.h.inc"

#endif // SPYRE_IR_SPYRETYPES_H
