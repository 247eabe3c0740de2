//===- DeviceTypes.cpp - element types and sizes on the card --------------===//

#include "DeviceTypes.h"
#include "Linearize.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Isa/Isa.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

uint8_t mlir::spyre::deviceDType(Type type) {
  if (type.isF16() || type.isBF16())
    return uint8_t(ISA::DType::dl16);
  if (isa<FloatType>(type))
    return uint8_t(ISA::DType::f32);
  if (type.isInteger(1))
    return uint8_t(ISA::DType::u8);
  if (type.isInteger(8))
    return uint8_t(ISA::DType::i8);
  return uint8_t(ISA::DType::i32); // i16, i32, i64 and index compute as i32
}

int64_t mlir::spyre::deviceDTypeBytes(uint8_t dtype) {
  return ISA::dtypeBytes(static_cast<ISA::DType>(dtype));
}

LogicalResult mlir::spyre::checkBuffersFit(KernelOp kernel, const ::spyre::Arch &arch) {
  auto check = [&](Value value, Operation *at, const Twine &what) -> LogicalResult {
    auto type = dyn_cast<BufferType>(value.getType());
    if (!type)
      return success();
    if (type.getRank() > ISA::kMaxRank)
      return at->emitError() << what << " has rank " << type.getRank()
                             << "; the program binary holds at most " << ISA::kMaxRank
                             << " dimensions";
    if (!type.hasStaticShape())
      return success(); // diagnosed where static sizes are needed
    int64_t bytes;
    if (llvm::MulOverflow(type.getNumElements(),
                          deviceDTypeBytes(deviceDType(type.getElementType())), bytes) ||
        bytes > arch.usableDeviceBytes)
      return at->emitError() << what << " (" << type << ") does not fit in the card's "
                             << arch.usableDeviceBytes << " bytes of device memory";
    return success();
  };
  Block &body = kernel.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (failed(check(arg, kernel, "argument " + Twine(arg.getArgNumber()))))
      return failure();
  for (AllocOp alloc : body.getOps<AllocOp>())
    if (failed(check(alloc, alloc, "the temporary")))
      return failure();
  return success();
}

LogicalResult mlir::spyre::checkStaticRowMajor(Operation *op) {
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<BufferType>(operand.getType());
    if (!type)
      continue;
    if (!type.hasStaticShape())
      return op->emitError() << "cannot run on the card: " << type
                             << " has a dynamic shape; specialise the kernel for the size";
    if (elementStrides(type) != elementStrides(BufferType::get(type.getShape(),
                                                               type.getElementType())))
      return op->emitError() << "cannot run on the card: " << type << " is not row-major";
  }
  return success();
}
