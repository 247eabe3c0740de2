//===- SpyreAttrs.h - Spyre attributes --------------------------*- C++ -*-===//

#ifndef SPYRE_IR_SPYREATTRS_H
#define SPYRE_IR_SPYREATTRS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

#include "spyre-mlir/Dialect/Spyre/IR/SpyreEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "spyre-mlir/Dialect/Spyre/IR/SpyreAttrs.h.inc"

#endif // SPYRE_IR_SPYREATTRS_H
