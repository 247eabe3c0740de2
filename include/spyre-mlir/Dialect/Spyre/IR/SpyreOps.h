//===- SpyreOps.h - Spyre ops -----------------------------------*- C++ -*-===//

#ifndef SPYRE_IR_SPYREOPS_H
#define SPYRE_IR_SPYREOPS_H

#include "spyre-mlir/Dialect/Spyre/IR/SpyreDialect.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define GET_OP_CLASSES
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h.inc"

#endif // SPYRE_IR_SPYREOPS_H
