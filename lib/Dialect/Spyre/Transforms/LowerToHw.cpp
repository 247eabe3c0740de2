//===- LowerToHw.cpp - scheduled kernels to hardware-level programs -------===//

#include "HwEmitter.h"
#include "Linearize.h"
#include "OpPlan.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYRELOWERTOHW
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {

struct ScheduledOp {
  Operation *op;
  std::unique_ptr<OpPlan> plan;
  int64_t cores;
  ArrayRef<int64_t> tile, lx;
};

LogicalResult collect(KernelOp kernel, const ::spyre::Arch &arch,
                      SmallVectorImpl<ScheduledOp> &work) {
  for (Operation &op : kernel.getBody().front()) {
    if (isa<AllocOp, DeallocOp, DimOp, ReturnOp, arith::ConstantOp>(op))
      continue;
    FailureOr<std::unique_ptr<OpPlan>> plan = OpPlan::get(&op, arch);
    if (failed(plan))
      return failure();
    if (!*plan)
      return op.emitError() << "has no lowering to the hardware level";
    FailureOr<Schedule> schedule =
        readSchedule(**plan, kScheduleCores | kScheduleTile | kScheduleLx);
    if (failed(schedule))
      return failure();
    work.push_back({&op, std::move(*plan), schedule->cores, schedule->tile, schedule->lx});
  }
  return success();
}

/// Whether `user`, which writes `buffer`, writes all of it. A generic writes
/// what its output map reaches: a dense run of the buffer's elements, or
/// part of it (`x.index_fill_(0, i, v)` writes a row); other ops write
/// their whole result.
bool writesWhole(Operation *user, Value buffer) {
  auto generic = dyn_cast<GenericOp>(user);
  if (!generic)
    return true;
  auto type = cast<BufferType>(buffer.getType());
  if (!type.hasStaticShape() || (type.getLayout() && type.getLayout().getStick()))
    return false;
  ArrayRef<int64_t> sizes = generic.getStaticDomain();
  for (auto [i, output] : llvm::enumerate(generic.getOutputs())) {
    if (output != buffer)
      continue;
    std::string why;
    std::optional<LinearAccess> access = linearize(generic.getOutputMap(i), type, why);
    if (access && access->base == 0 &&
        contiguousRun(access->strides, sizes) == type.getNumElements())
      return true;
  }
  return false;
}

LogicalResult lowerKernel(KernelOp kernel, const ::spyre::Arch &arch) {
  Block &body = kernel.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (!isa<BufferType>(arg.getType()))
      return kernel.emitError() << "argument " << arg.getArgNumber()
                                << " is a dynamic size; the hardware level needs static "
                                   "shapes (specialise the kernel for the size)";
  SmallVector<ScheduledOp> work;
  if (failed(checkBuffersFit(kernel, arch)) || failed(collect(kernel, arch, work)))
    return failure();
  int64_t numCores = 1;
  for (const ScheduledOp &s : work)
    numCores = std::max(numCores, s.cores);

  MLIRContext *ctx = kernel.getContext();
  OpBuilder b(kernel);
  Location loc = kernel.getLoc();
  auto program = HwProgramOp::create(b, loc, kernel.getSymName(), numCores);
  b.setInsertionPointToEnd(b.createBlock(&program.getBody()));

  DenseMap<Value, std::pair<FlatSymbolRefAttr, int64_t>> buffers;
  for (BlockArgument arg : body.getArguments()) {
    // An output is written whole before anything reads it: its content on
    // entry does not matter. Users (inside fused groups too) in kernel
    // order. Written only in part first, what the rest holds on entry is
    // read later (a row filled, then the whole tensor updated).
    bool written = false, wholly = false, readFirst = false;
    for (Operation &top : body)
      top.walk([&](Operation *user) {
        if (!llvm::is_contained(user->getOperands(), Value(arg)))
          return;
        if (!wholly && hasEffect<MemoryEffects::Read>(user, arg))
          readFirst = true;
        if (hasEffect<MemoryEffects::Write>(user, arg)) {
          written = true;
          wholly |= writesWhole(user, arg);
        }
      });
    HwBufferKind kind = !written ? HwBufferKind::input
                                 : (readFirst ? HwBufferKind::inout : HwBufferKind::output);
    std::string name = "arg" + std::to_string(arg.getArgNumber());
    if (auto given = kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "spyre.name"))
      name = given.str();
    HwBufferOp::create(b, loc, name, kind, cast<BufferType>(arg.getType()), nullptr);
    buffers[arg] = {FlatSymbolRefAttr::get(ctx, name), 0};
  }
  auto scratchBytes = kernel->getAttrOfType<IntegerAttr>(kScratchBytesAttr);
  auto allocs = llvm::to_vector(body.getOps<AllocOp>());
  if (!allocs.empty()) {
    if (!scratchBytes)
      return kernel.emitError() << "has temporaries but no spyre.scratch_bytes; run "
                                   "spyre-plan-memory first";
    HwBufferOp::create(b, loc, "scratch", HwBufferKind::scratch,
                       BufferType::get({std::max<int64_t>(1, scratchBytes.getInt())},
                                       IntegerType::get(ctx, 8)),
                       nullptr);
    for (AllocOp alloc : allocs) {
      auto offset = alloc->getAttrOfType<IntegerAttr>(kDeviceOffsetAttr);
      if (!offset)
        return alloc.emitError() << "has no spyre.device_offset; run spyre-plan-memory first";
      buffers[alloc] = {FlatSymbolRefAttr::get(ctx, "scratch"), offset.getInt()};
    }
  }

  HwEmitter emitter(program, arch, numCores, std::move(buffers));
  for (auto [i, s] : llvm::enumerate(work)) {
    emitter.beginOp(int64_t(i) + 1);
    if (failed(s.plan->lower(emitter, s.cores, s.tile, s.lx)))
      return failure();
    if (i + 1 < work.size())
      emitter.barrier();
  }
  if (failed(emitter.check(kernel)))
    return failure();
  kernel.erase();
  return success();
}

struct LowerToHw : mlir::spyre::impl::SpyreLowerToHwBase<LowerToHw> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<::spyre::Arch> arch = getArch(module);
    if (!arch)
      return signalPassFailure();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    for (KernelOp kernel : kernels)
      if (failed(lowerKernel(kernel, *arch)))
        return signalPassFailure();
  }
};

} // namespace
