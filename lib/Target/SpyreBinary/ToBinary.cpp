//===- ToBinary.cpp - hardware-level IR to a program binary ---------------===//
//
// One hardware-level op is one instruction, so this is a walk that calls the
// simulator's ProgramBuilder; all encoding lives there.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Target/SpyreBinary/ToBinary.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreArch.h"
#include "spyre-mlir/Isa/DLFloat16.h"
#include "spyre-mlir/Isa/ProgramBuilder.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

/// Device and host element types of a buffer's element type.
std::pair<ISA::DType, ISA::HostDType> typesOf(Type t) {
  if (t.isF16()) return {ISA::DType::dl16, ISA::HostDType::f16};
  if (t.isBF16()) return {ISA::DType::dl16, ISA::HostDType::bf16};
  if (t.isF32()) return {ISA::DType::f32, ISA::HostDType::f32};
  if (t.isSignlessInteger(32)) return {ISA::DType::i32, ISA::HostDType::i32};
  if (t.isSignlessInteger(8)) return {ISA::DType::i8, ISA::HostDType::i8};
  return {ISA::DType::u8, ISA::HostDType::boolean}; // i1; the type verifier allows no other
}

/// The bytes of a constant in its device element type.
std::vector<uint8_t> constantBytes(ElementsAttr value, ISA::DType dtype,
                                   const ::spyre::DLFloat16 &dl) {
  std::vector<uint8_t> out;
  auto put = [&](const void *p, size_t n) {
    out.insert(out.end(), static_cast<const uint8_t *>(p), static_cast<const uint8_t *>(p) + n);
  };
  if (isa<FloatType>(value.getElementType())) {
    for (APFloat v : value.getValues<APFloat>()) {
      float f = v.convertToFloat();
      if (dtype == ISA::DType::dl16) {
        uint16_t bits = dl.fromFloat(f);
        put(&bits, 2);
      } else {
        put(&f, 4);
      }
    }
    return out;
  }
  for (APInt v : value.getValues<APInt>()) {
    int64_t i = v.getSExtValue();
    if (dtype == ISA::DType::i32) {
      int32_t w = static_cast<int32_t>(i);
      put(&w, 4);
    } else {
      uint8_t b = static_cast<uint8_t>(dtype == ISA::DType::u8 ? (i != 0) : i);
      put(&b, 1);
    }
  }
  return out;
}

class Writer {
public:
  Writer(HwProgramOp program, const ::spyre::Arch &arch)
      : program(program), arch(arch),
        builder(arch, static_cast<uint32_t>(program.getNumCores())),
        dl(arch.dlfloat16ExponentBits, arch.dlfloat16FractionBits) {}

  LogicalResult run(std::vector<uint8_t> &binary) {
    for (auto buffer : program.getBody().getOps<HwBufferOp>())
      addBuffer(buffer);
    for (auto core : program.getBody().getOps<HwCoreOp>()) {
      ::spyre::StreamBuilder stream = builder.core(static_cast<uint32_t>(core.getCore()));
      for (Operation &op : core.getBody().front())
        emit(op, stream);
    }
    ::spyre::Program p = builder.finish();
    if (std::string error = p.check(arch); !error.empty())
      return program.emitOpError() << "is not a valid program for '" << arch.name
                                   << "': " << error;
    binary = p.serialize();
    return success();
  }

private:
  void addBuffer(HwBufferOp op) {
    auto type = cast<BufferType>(op.getType());
    auto [dtype, host] = typesOf(type.getElementType());
    auto kind = static_cast<ISA::BufferKind>(op.getKind()); // same order by construction
    std::vector<uint8_t> data;
    if (op.getValue())
      data = constantBytes(*op.getValue(), dtype, dl);
    indices[op.getSymNameAttr()] =
        builder.addBuffer(op.getSymName().str(), kind, dtype, host,
                          std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
                          std::move(data));
  }

  ::spyre::OperandSpec operand(RefAttr ref) const {
    ::spyre::OperandSpec o;
    if (!ref)
      return o;
    o.buffer = ref.isLx() ? ISA::kLx : indices.lookup(ref.getBuffer().getAttr());
    o.dtype = static_cast<ISA::DType>(ref.getDtype());
    o.offset = ref.getOffset();
    o.core = static_cast<uint16_t>(ref.getCore());
    for (int i = 0; i < 3; ++i) {
      o.strides[i] = ref.getStrides()[i];
      o.loopInc[i] = ref.getInc()[i];
    }
    return o;
  }

  template <typename OpTy> ::spyre::Sync sync(OpTy op) const {
    ::spyre::Sync s;
    if (op.getWaitSem())
      s.waitSem = static_cast<uint8_t>(*op.getWaitSem());
    s.waitCount = op.getWaitCount();
    if (auto inc = op.getWaitInc())
      for (size_t i = 0; i < inc->size() && i < 3; ++i)
        s.waitInc[i] = (*inc)[i];
    if (op.getSignalSem())
      s.signalSem = static_cast<uint8_t>(*op.getSignalSem());
    return s;
  }

  static std::array<int64_t, 3> counts(ArrayRef<int64_t> c) { return {c[0], c[1], c[2]}; }

  void emit(Operation &op, ::spyre::StreamBuilder &s) {
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](HwLoopOp loop) {
          s.loop(loop.getTrips());
          for (Operation &inner : loop.getBody().front())
            emit(inner, s);
          s.endLoop();
        })
        .Case([&](HwBarrierOp) { s.barrier(); })
        .Case([&](HwKernelOp k) { s.kernel(k.getId()); })
        .Case([&](HwDmaOp o) {
          s.dma(operand(o.getDst()), operand(o.getSrc()), o.getRowBytes(), counts(o.getCounts()),
                sync(o));
        })
        .Case([&](HwRingOp o) {
          s.ring(operand(o.getDst()), operand(o.getSrc()), o.getRowBytes(), counts(o.getCounts()),
                 o.getSignalRemote(), sync(o));
        })
        .Case([&](HwGatherOp o) {
          s.gather(operand(o.getDst()), operand(o.getTable()), operand(o.getIndices()),
                   o.getRowBytes(), o.getCount(), o.getTableRows(), sync(o));
        })
        .Case([&](HwScatterOp o) {
          s.scatter(operand(o.getTable()), operand(o.getSrc()), operand(o.getIndices()),
                    o.getRowBytes(), o.getCount(), o.getTableRows(), sync(o));
        })
        .Case([&](HwMatmulOp o) {
          s.matmul(operand(o.getC()), operand(o.getA()), operand(o.getB()), o.getM(), o.getK(),
                   o.getN(), o.getTransposeA(), o.getTransposeB(), o.getAccumulate(), sync(o));
        })
        .Case([&](HwUnaryOp o) {
          s.unary(static_cast<ISA::UnaryFunc>(ISA::indexOfName(ISA::kUnaryFuncNames, o.getFunc())),
                  operand(o.getDst()), operand(o.getSrc()), o.getRows(), o.getCols(), sync(o));
        })
        .Case([&](HwBinaryOp o) {
          auto f = static_cast<ISA::BinaryFunc>(ISA::indexOfName(ISA::kBinaryFuncNames, o.getFunc()));
          if (o.getImm())
            s.binaryImm(f, operand(o.getDst()), operand(o.getLhs()), o.getImm()->convertToDouble(),
                        o.getRows(), o.getCols(), sync(o));
          else
            s.binary(f, operand(o.getDst()), operand(o.getLhs()), operand(*o.getRhs()),
                     o.getRows(), o.getCols(), sync(o));
        })
        .Case([&](HwSelectOp o) {
          s.select(operand(o.getDst()), operand(o.getCond()), operand(o.getLhs()),
                   operand(o.getRhs()), o.getRows(), o.getCols(), sync(o));
        })
        .Case([&](HwFillOp o) {
          s.iota(operand(o.getDst()), o.getStart().convertToDouble(),
                 o.getRowStep().convertToDouble(), o.getColStep().convertToDouble(), o.getRows(),
                 o.getCols(), sync(o));
        })
        .Case([&](HwReduceOp o) {
          auto f = static_cast<ISA::ReduceFunc>(ISA::indexOfName(ISA::kReduceFuncNames, o.getFunc()));
          s.reduce(f, operand(o.getDst()), operand(o.getSrc()), o.getRows(), o.getCols(),
                   o.getAccumulate(), operand(o.getAux1().value_or(RefAttr())),
                   operand(o.getAux2().value_or(RefAttr())), o.getIndexOffset().convertToDouble(),
                   sync(o));
        });
  }

  HwProgramOp program;
  const ::spyre::Arch &arch;
  ::spyre::ProgramBuilder builder;
  ::spyre::DLFloat16 dl;
  llvm::DenseMap<Attribute, uint32_t> indices;
};

} // namespace

LogicalResult mlir::spyre::writeProgram(HwProgramOp program, const ::spyre::Arch &arch,
                                       std::vector<uint8_t> &binary) {
  if (program.getNumCores() > arch.cores)
    return program.emitOpError() << "uses " << program.getNumCores() << " cores; '" << arch.name
                                 << "' has " << arch.cores;
  return Writer(program, arch).run(binary);
}

LogicalResult mlir::spyre::translateToBinary(Operation *root, const ::spyre::Arch &arch,
                                             std::vector<uint8_t> &binary) {
  SmallVector<HwProgramOp> programs;
  root->walk([&](HwProgramOp p) { programs.push_back(p); });
  if (programs.size() != 1)
    return root->emitError() << "expected one spyre.hw.program, found " << programs.size();
  return writeProgram(programs.front(), arch, binary);
}

namespace {
llvm::cl::opt<std::string> archPath(
    "arch", llvm::cl::desc("Architecture description (default: the module's spyre.arch, "
                                 "else $SPYRE_ARCH, else the card installed beside the tool)"),
    llvm::cl::init(""));

} // namespace

void mlir::spyre::registerToBinaryTranslation() {
  TranslateFromMLIRRegistration registration(
      "spyre-hw-to-binary", "Write a spyre.hw.program as a Spyre program binary",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        std::optional<::spyre::Arch> arch = archPath.empty() ? getArch(op) : loadArch(op, archPath);
        if (!arch)
          return failure();
        std::vector<uint8_t> binary;
        if (failed(translateToBinary(op, *arch, binary)))
          return failure();
        os.write(reinterpret_cast<const char *>(binary.data()), binary.size());
        return success();
      },
      [](DialectRegistry &registry) { registry.insert<SpyreDialect>(); });
}
