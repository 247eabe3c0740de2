//===- OpPlan.cpp - what the schedule passes share ------------------------===//

#include "Spyre/Transforms/OpPlan.h"
#include "PlanKinds.h"
#include "Isa/Isa.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

OpPlan::~OpPlan() = default;

FailureOr<std::unique_ptr<OpPlan>> OpPlan::get(Operation *op, const ::spyre::Arch &arch) {
  if (auto generic = dyn_cast<GenericOp>(op))
    return makeGenericPlan(generic, arch);
  if (isa<MatmulOp, BatchMatmulOp>(op))
    return makeMatmulPlan(op, arch);
  if (auto gather = dyn_cast<GatherOp>(op))
    return makeGatherPlan(gather, arch);
  if (auto fused = dyn_cast<FusedOp>(op))
    return makeGroupPlan(fused, arch);
  if (isa<CopyOp, PermuteOp, BroadcastOp, SliceOp, ConcatOp, FillOp, ConstantOp>(op))
    return op->emitError() << "'" << op->getName()
                           << "' must be rewritten as spyre.generic (spyre-generalize) first";
  return std::unique_ptr<OpPlan>();
}

SmallVector<int64_t> mlir::spyre::elementStrides(BufferType type) {
  int64_t rank = type.getRank();
  SmallVector<int64_t> strides(rank, 0);
  SmallVector<int64_t> order;
  if (LayoutAttr layout = type.getLayout())
    order.assign(layout.getOrder().begin(), layout.getOrder().end());
  else
    order = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    strides[order[i]] = stride;
    stride *= type.getDimSize(order[i]);
  }
  return strides;
}

bool mlir::spyre::isLinear(AffineExpr expr) {
  if (!expr.isPureAffine())
    return false;
  bool linear = true;
  expr.walk([&](AffineExpr e) {
    if (isa<AffineBinaryOpExpr>(e) && e.getKind() != AffineExprKind::Add &&
        e.getKind() != AffineExprKind::Mul)
      linear = false;
  });
  return linear;
}

std::optional<LinearAccess> mlir::spyre::linearize(AffineMap map, BufferType type,
                                                   std::string &why) {
  if (LayoutAttr layout = type.getLayout(); layout && layout.getStick()) {
    why = "its buffer is stored in sticks, which tiling does not address yet";
    return std::nullopt;
  }
  if (map.getNumSymbols()) {
    why = "its indexing map has symbols (run-time offsets)";
    return std::nullopt;
  }
  SmallVector<int64_t> bufferStrides = elementStrides(type);
  unsigned dims = map.getNumDims();
  LinearAccess access;
  access.strides.assign(dims, 0);
  for (auto [j, expr] : llvm::enumerate(map.getResults())) {
    if (!isLinear(expr)) {
      why = "its indexing map is not linear in the loops (floordiv, mod or a product)";
      return std::nullopt;
    }
    LinearAccess result = linearCoefficients(expr, dims);
    access.base += result.base * bufferStrides[j];
    for (unsigned d = 0; d < dims; ++d)
      access.strides[d] += result.strides[d] * bufferStrides[j];
  }
  return access;
}

LinearAccess mlir::spyre::linearCoefficients(AffineExpr expr, unsigned dims) {
  // A linear expression is its value at 0 plus its increments along each
  // dimension.
  MLIRContext *ctx = expr.getContext();
  auto valueAt = [&](int64_t dim) {
    SmallVector<AffineExpr> point(dims, getAffineConstantExpr(0, ctx));
    if (dim >= 0)
      point[dim] = getAffineConstantExpr(1, ctx);
    return cast<AffineConstantExpr>(expr.replaceDims(point)).getValue();
  };
  LinearAccess result;
  result.base = valueAt(-1);
  for (unsigned d = 0; d < dims; ++d)
    result.strides.push_back(valueAt(d) - result.base);
  return result;
}

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

SmallVector<int64_t> mlir::spyre::assignLx(ArrayRef<LxSlot> slots, int64_t alignment,
                                           int64_t &total) {
  SmallVector<int64_t> offsets(slots.size(), 0);
  SmallVector<unsigned> placed;
  total = 0;
  // Largest first, each at the lowest aligned offset free over its live range.
  SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(0, slots.size()));
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return slots[a].footprint() > slots[b].footprint();
  });
  for (unsigned i : order) {
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (unsigned j : placed)
      if (slots[i].begin < slots[j].end && slots[j].begin < slots[i].end)
        busy.push_back({offsets[j], offsets[j] + slots[j].footprint()});
    llvm::sort(busy);
    int64_t at = 0;
    for (auto [lo, hi] : busy) {
      if (at + slots[i].footprint() <= lo)
        break;
      at = std::max<int64_t>(at, llvm::alignTo(hi, alignment));
    }
    offsets[i] = at;
    total = std::max(total, at + slots[i].footprint());
    placed.push_back(i);
  }
  return offsets;
}

LogicalResult mlir::spyre::checkLx(Operation *op, ArrayRef<LxSlot> slots,
                                   ArrayRef<int64_t> offsets, int64_t lxBytes) {
  if (offsets.size() != slots.size())
    return op->emitError() << "spyre.lx has " << offsets.size() << " offsets for "
                           << slots.size() << " LX slots";
  for (auto [i, slot] : llvm::enumerate(slots)) {
    if (offsets[i] < 0 || offsets[i] + slot.footprint() > lxBytes)
      return op->emitError() << "LX slot '" << slot.name << "' at [" << offsets[i] << ", "
                             << offsets[i] + slot.footprint()
                             << ") does not fit in the usable LX of " << lxBytes << " bytes";
    for (size_t j = 0; j < i; ++j) {
      const LxSlot &other = slots[j];
      bool liveTogether = slot.begin < other.end && other.begin < slot.end;
      bool overlap = offsets[i] < offsets[j] + other.footprint() &&
                     offsets[j] < offsets[i] + slot.footprint();
      if (liveTogether && overlap)
        return op->emitError() << "LX slots '" << other.name << "' and '" << slot.name
                               << "' are live together and overlap";
    }
  }
  return success();
}

int64_t mlir::spyre::largestFitting(int64_t limit, int64_t granule,
                                    function_ref<bool(int64_t)> fits) {
  // Candidates: multiples of the granule up to the limit (and the limit
  // itself), then 1 .. granule - 1 for sizes below a granule.
  auto candidate = [&](int64_t i) { return i <= 0 ? 0 : std::min(limit, i * granule); };
  int64_t lo = 0, hi = llvm::divideCeil(limit, granule);
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (fits(candidate(mid)))
      lo = mid;
    else
      hi = mid - 1;
  }
  if (lo > 0)
    return candidate(lo);
  int64_t small = 0, top = std::min(limit, granule - 1);
  while (small < top) {
    int64_t mid = (small + top + 1) / 2;
    if (fits(mid))
      small = mid;
    else
      top = mid - 1;
  }
  return small;
}
