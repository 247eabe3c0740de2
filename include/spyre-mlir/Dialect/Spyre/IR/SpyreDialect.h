//===- SpyreDialect.h - Spyre dialect ---------------------------*- C++ -*-===//

#ifndef SPYRE_IR_SPYREDIALECT_H
#define SPYRE_IR_SPYREDIALECT_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Dialect.h"

#include "spyre-mlir/Dialect/Spyre/IR/SpyreDialect.h.inc"

#endif // SPYRE_IR_SPYREDIALECT_H
