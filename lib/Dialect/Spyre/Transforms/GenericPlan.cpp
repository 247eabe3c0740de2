//===- GenericPlan.cpp - running a spyre.generic on the card --------------===//
//
// A tile of a generic is two-dimensional: `row` and `col` loops may have
// tiles larger than one, every other loop steps one point at a time. The
// vector unit reduces along cols, so `col` is a reduction loop when there is
// one. Tiles of parallel loops are shared among cores in contiguous runs;
// reduction tiles of one output tile run on one core, combined with the
// `accumulate` form of the ISA's reduce.
//
//===----------------------------------------------------------------------===//

#include "GenericBody.h"
#include "PlanKinds.h"
#include "Spyre/Transforms/HwEmitter.h"
#include "Simulator/Isa.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;

namespace {

/// How an operand's tile is stored in LX and moved by DMA. Offsets are
/// relative to the tile origin; `rows` x `cols` is the actual tile.
struct TileLayout {
  int64_t bytes = 0;                  ///< LX bytes of a full tile
  int64_t rowStride = 0, colStride = 0; ///< LX bytes (0 broadcasts)
  int64_t rowBytes = 0;
  std::array<int64_t, 3> counts = {1, 1, 1};
  std::array<int64_t, 3> deviceStrides = {0, 0, 0}, lxStrides = {0, 0, 0};
};

/// Element strides of the operand along the tile's row and col loops.
TileLayout layoutTile(int64_t lr, int64_t lc, int64_t tr, int64_t tc, int64_t rows,
                      int64_t cols, int64_t es) {
  TileLayout t;
  int64_t r = lr ? tr : 1, c = lc ? tc : 1;
  if (lc == 1) { // rows of the tile are contiguous on the device
    t.bytes = r * tc * es;
    t.rowStride = lr ? tc * es : 0;
    t.colStride = es;
    t.rowBytes = cols * es;
    t.counts = {lr ? rows : 1, 1, 1};
    t.deviceStrides = {lr * es, 0, 0};
    t.lxStrides = {tc * es, 0, 0};
  } else if (lr == 1) { // columns are: store the tile transposed
    t.bytes = c * tr * es;
    t.rowStride = es;
    t.colStride = lc ? tr * es : 0;
    t.rowBytes = rows * es;
    t.counts = {lc ? cols : 1, 1, 1};
    t.deviceStrides = {lc * es, 0, 0};
    t.lxStrides = {tr * es, 0, 0};
  } else { // element by element
    t.bytes = r * c * es;
    t.rowStride = lr ? c * es : 0;
    t.colStride = lc ? es : 0;
    t.rowBytes = es;
    t.counts = {lc ? cols : 1, lr ? rows : 1, 1};
    t.deviceStrides = {lc * es, lr * es, 0};
    t.lxStrides = {es, c * es, 0};
  }
  return t;
}

class GenericPlan : public OpPlan {
public:
  GenericPlan(GenericOp op, const ::spyre::Arch &arch) : OpPlan(op, arch), generic(op) {}
  LogicalResult analyze();

  int64_t parallelUnits() const override {
    int64_t units = 1;
    for (auto [size, red] : llvm::zip(sizes, reduction))
      units *= red ? 1 : size;
    return units;
  }
  SmallVector<int64_t> chooseTile(int64_t cores, int64_t lxBytes) const override;
  LogicalResult verifyTile(ArrayRef<int64_t> tile) const override;
  SmallVector<LxSlot> slots(ArrayRef<int64_t> tile) const override;
  LogicalResult lower(HwEmitter &emitter, int64_t cores, ArrayRef<int64_t> tile,
                      ArrayRef<int64_t> lxOffsets) const override;

private:
  struct Output {
    LinearAccess access;
    uint8_t dtype;
    CombinerKind combiner; ///< of the yielded value that writes it
    unsigned value;        ///< index of that yielded value
    unsigned part;         ///< 0, or 0..2 for welford (mean, m2, count)
  };
  /// The output written by part `part` of yielded value `value`.
  unsigned outputOf(unsigned value, unsigned part = 0) const {
    for (auto [i, out] : llvm::enumerate(outputs))
      if (out.value == value && out.part == part)
        return unsigned(i);
    llvm_unreachable("no such output");
  }
  bool reduces() const { return llvm::is_contained(reduction, true); }
  int64_t rowSize(ArrayRef<int64_t> tile) const { return row < 0 ? 1 : tile[row]; }
  uint8_t accType(const Output &out) const;
  bool needsStaging(const Output &out) const { return accType(out) != out.dtype; }
  int64_t fitsBytes(ArrayRef<int64_t> tile) const {
    int64_t total;
    assignLx(slots(tile), arch.stickBytes, total);
    return total;
  }

  mutable GenericOp generic;
  SmallVector<int64_t> sizes;
  SmallVector<bool> reduction;
  int row = -1, col = 0;
  SmallVector<LinearAccess> inputs;
  SmallVector<uint8_t> inputTypes;
  SmallVector<Output> outputs;
  BodyPlan body;
};

uint8_t GenericPlan::accType(const Output &out) const {
  switch (out.combiner) {
  case CombinerKind::none: return out.dtype;
  case CombinerKind::argmax: case CombinerKind::argmin: return uint8_t(ISA::DType::i32);
  case CombinerKind::any: case CombinerKind::all: return uint8_t(ISA::DType::u8);
  case CombinerKind::welford: return uint8_t(ISA::DType::f32);
  default:
    return out.dtype == uint8_t(ISA::DType::dl16) ? uint8_t(ISA::DType::f32) : out.dtype;
  }
}

LogicalResult GenericPlan::analyze() {
  for (auto [i, size] : llvm::enumerate(generic.getStaticDomain()))
    if (ShapedType::isDynamic(size))
      return generic.emitError() << "cannot run on the card: loop " << i
                                 << " has a dynamic size; tiling needs static sizes "
                                    "(specialise the kernel for the size)";
  sizes.assign(generic.getStaticDomain().begin(), generic.getStaticDomain().end());
  for (auto [i, size] : llvm::enumerate(sizes))
    if (size == 0)
      return generic.emitError() << "cannot run on the card: loop " << i << " is empty";
  reduction.assign(sizes.size(), false);
  for (unsigned i : generic.getReductionLoops())
    reduction[i] = true;
  if (!generic.getSymbols().empty())
    return generic.emitError() << "cannot run on the card: the generic has symbols "
                                  "(run-time offsets), which tiling does not handle yet";

  std::string why;
  for (auto [i, input] : llvm::enumerate(generic.getInputs())) {
    auto type = cast<BufferType>(input.getType());
    std::optional<LinearAccess> access = linearize(generic.getInputMap(i), type, why);
    if (!access)
      return generic.emitError() << "cannot run on the card: input " << i << ": " << why;
    inputs.push_back(*access);
    inputTypes.push_back(deviceDType(type.getElementType()));
  }
  SmallVector<CombinerKind> combiners = generic.getCombinerKinds();
  unsigned outIndex = 0;
  for (auto [value, kind] : llvm::enumerate(combiners))
    for (unsigned part = 0; part < GenericOp::getNumOutputsOf(kind); ++part, ++outIndex) {
      auto type = cast<BufferType>(generic.getOutputs()[outIndex].getType());
      std::optional<LinearAccess> access =
          linearize(generic.getOutputMap(outIndex), type, why);
      if (!access)
        return generic.emitError() << "cannot run on the card: output " << outIndex << ": "
                                   << why;
      outputs.push_back({*access, deviceDType(type.getElementType()), kind, unsigned(value),
                         part});
    }

  // `col`: the innermost reduction loop if there is one, else the loop the
  // first output is contiguous along (so stores move whole rows), else the
  // last. `row`: the parallel loop the first output is densest along.
  int64_t n = sizes.size();
  auto densest = [&](const LinearAccess &a, bool wantReduction, int skip) {
    int best = -1;
    for (int64_t i = n - 1; i >= 0; --i) {
      if (reduction[i] != wantReduction || i == skip || sizes[i] == 1)
        continue;
      int64_t s = std::abs(a.strides[i]);
      if (s && (best < 0 || s < std::abs(a.strides[best])))
        best = int(i);
    }
    return best;
  };
  if (reduces()) {
    col = inputs.empty() ? -1 : densest(inputs[0], true, -1);
    if (col < 0)
      for (int64_t i = n - 1; i >= 0 && col < 0; --i)
        if (reduction[i])
          col = int(i);
  } else {
    col = n ? densest(outputs[0].access, false, -1) : -1;
    if (col < 0)
      col = int(n) - 1;
  }
  row = densest(outputs[0].access, false, col);
  if (n == 0)
    return generic.emitError() << "cannot run on the card: a generic without loops";

  int64_t reducedLoops = llvm::count_if(llvm::seq<int64_t>(0, n),
                                        [&](int64_t i) { return reduction[i] && sizes[i] > 1; });
  for (const Output &out : outputs) {
    if (out.combiner == CombinerKind::none) {
      for (int64_t i = 0; i < n; ++i)
        if (sizes[i] > 1 && out.access.strides[i] == 0)
          return generic.emitError() << "cannot run on the card: output writes the same "
                                        "element for every iteration of loop "
                                     << i;
    } else if ((out.combiner == CombinerKind::argmax || out.combiner == CombinerKind::argmin) &&
               reducedLoops > 1) {
      return generic.emitError() << "cannot run on the card: "
                                 << stringifyCombinerKind(out.combiner)
                                 << " over more than one loop";
    }
  }

  FailureOr<BodyPlan> planned = planBody(generic);
  if (failed(planned))
    return failure();
  body = std::move(*planned);
  return success();
}

LogicalResult GenericPlan::verifyTile(ArrayRef<int64_t> tile) const {
  if (tile.size() != sizes.size())
    return generic.emitError() << "spyre.tile has " << tile.size() << " sizes for "
                               << sizes.size() << " loops";
  for (auto [i, t] : llvm::enumerate(tile)) {
    if (t < 1 || t > sizes[i])
      return generic.emitError() << "spyre.tile size " << t << " of loop " << i
                                 << " is not in [1, " << sizes[i] << "]";
    if (t > 1 && int(i) != row && int(i) != col)
      return generic.emitError() << "spyre.tile: loop " << i
                                 << " must step one point at a time (only loops " << row
                                 << " and " << col << " are tiled)";
  }
  return success();
}

SmallVector<LxSlot> GenericPlan::slots(ArrayRef<int64_t> tile) const {
  SmallVector<LxSlot> result;
  int64_t tr = rowSize(tile), tc = tile[col];
  auto stride = [&](const LinearAccess &a, int loop) { return loop < 0 ? 0 : a.strides[loop]; };
  for (auto [i, access] : llvm::enumerate(inputs)) {
    int64_t es = deviceDTypeBytes(inputTypes[i]);
    TileLayout l = layoutTile(stride(access, row), stride(access, col), tr, tc, tr, tc, es);
    result.push_back({"input" + std::to_string(i), l.bytes, 2});
  }
  for (auto [i, out] : llvm::enumerate(outputs)) {
    std::string name = "output" + std::to_string(i);
    if (out.combiner == CombinerKind::none) {
      int64_t es = deviceDTypeBytes(out.dtype);
      TileLayout l =
          layoutTile(stride(out.access, row), stride(out.access, col), tr, tc, tr, tc, es);
      result.push_back({name, l.bytes, 2});
      continue;
    }
    result.push_back({name + ".acc", tr * deviceDTypeBytes(accType(out)), 2});
    if (out.combiner == CombinerKind::argmax || out.combiner == CombinerKind::argmin)
      result.push_back({name + ".best", tr * 4, 2});
    if (needsStaging(out))
      result.push_back({name + ".staging", tr * deviceDTypeBytes(out.dtype), 2});
  }
  for (auto [i, temp] : llvm::enumerate(body.temps))
    result.push_back({"temp" + std::to_string(i), tr * tc * deviceDTypeBytes(temp.dtype), 1,
                      temp.begin, temp.end});
  return result;
}

SmallVector<int64_t> GenericPlan::chooseTile(int64_t cores, int64_t lxBytes) const {
  int64_t n = sizes.size();
  SmallVector<int64_t> tile(n, 1);
  auto fits = [&](SmallVector<int64_t> t) { return fitsBytes(t) <= lxBytes; };
  int64_t stickElems = arch.stickBytes / 2;
  auto parallelTiles = [&](ArrayRef<int64_t> t, int skip) {
    int64_t count = 1;
    for (int64_t i = 0; i < n; ++i)
      if (!reduction[i] && i != skip)
        count *= llvm::divideCeil(sizes[i], t[i]);
    return count;
  };
  // Cols: whole rows when they fit; a parallel col loop is also split when
  // the other loops give too few tiles for every core.
  int64_t colLimit = sizes[col];
  if (!reduction[col] && row < 0) {
    int64_t others = parallelTiles(tile, col);
    int64_t pieces = std::max<int64_t>(1, llvm::divideCeil(cores, others));
    colLimit = std::min<int64_t>(sizes[col], llvm::alignTo(llvm::divideCeil(sizes[col], pieces),
                                                  stickElems));
  }
  tile[col] = largestFitting(colLimit, stickElems, [&](int64_t c) {
    SmallVector<int64_t> t = tile;
    t[col] = c;
    return fits(t);
  });
  if (tile[col] == 0)
    return {};
  if (row >= 0) {
    int64_t others = parallelTiles(tile, row);
    int64_t pieces = std::max<int64_t>(1, llvm::divideCeil(cores, others));
    int64_t rowLimit = llvm::divideCeil(sizes[row], pieces);
    tile[row] = largestFitting(rowLimit, 1, [&](int64_t r) {
      SmallVector<int64_t> t = tile;
      t[row] = r;
      return fits(t);
    });
    if (tile[row] == 0)
      return {};
  }
  return tile;
}

} // namespace

FailureOr<std::unique_ptr<OpPlan>> mlir::spyre::makeGenericPlan(GenericOp op,
                                                               const ::spyre::Arch &arch) {
  auto plan = std::make_unique<GenericPlan>(op, arch);
  if (failed(plan->analyze()))
    return failure();
  return std::unique_ptr<OpPlan>(std::move(plan));
}


namespace {

/// base + sum(coefficients[d] * iv[d]) for a linear expression of the loops.
std::pair<int64_t, SmallVector<int64_t>> coefficients(AffineExpr expr, unsigned dims) {
  MLIRContext *ctx = expr.getContext();
  auto at = [&](int64_t dim) {
    SmallVector<AffineExpr> point(dims, getAffineConstantExpr(0, ctx));
    if (dim >= 0)
      point[dim] = getAffineConstantExpr(1, ctx);
    return cast<AffineConstantExpr>(expr.replaceDims(point)).getValue();
  };
  int64_t base = at(-1);
  SmallVector<int64_t> coeffs;
  for (unsigned d = 0; d < dims; ++d)
    coeffs.push_back(at(d) - base);
  return {base, coeffs};
}

} // namespace

LogicalResult GenericPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                                 ArrayRef<int64_t> lx) const {
  SmallVector<LxSlot> slotList = slots(tile);
  llvm::StringMap<unsigned> slotIndex;
  for (auto [i, slot] : llvm::enumerate(slotList))
    slotIndex[slot.name] = unsigned(i);
  auto slotAt = [&](const std::string &name, int64_t copy) {
    unsigned i = slotIndex.at(name);
    return lx[i] + copy * slotList[i].bytes;
  };

  int64_t n = sizes.size();
  int64_t tr = rowSize(tile), tc = tile[col];
  SmallVector<int64_t> ntiles, par, red;
  for (int64_t i = 0; i < n; ++i) {
    ntiles.push_back(llvm::divideCeil(sizes[i], tile[i]));
    if (i != col)
      (reduction[i] ? red : par).push_back(i);
  }
  (reduction[col] ? red : par).push_back(col);
  int64_t groups = 1, perGroup = 1;
  for (int64_t i : par)
    groups *= ntiles[i];
  for (int64_t i : red)
    perGroup *= ntiles[i];

  auto stride = [&](const LinearAccess &a, int loop) { return loop < 0 ? 0 : a.strides[loop]; };
  auto deviceOffset = [&](const LinearAccess &a, ArrayRef<int64_t> origin, int64_t es) {
    int64_t offset = a.base;
    for (int64_t i = 0; i < n; ++i)
      offset += a.strides[i] * origin[i];
    return offset * es;
  };
  Block &block = generic.getBody().front();
  Location loc = generic.getLoc();

  for (int64_t core = 0; core < cores; ++core) {
    int64_t gBegin = groups * core / cores, gEnd = groups * (core + 1) / cores;
    auto stepAt = [&, gBegin](int64_t i) {
      int64_t local = i / perGroup, s = i % perGroup;
      SmallVector<int64_t> origin(n, 0);
      int64_t rest = gBegin + local;
      for (int64_t p : llvm::reverse(par)) {
        origin[p] = rest % ntiles[p] * tile[p];
        rest /= ntiles[p];
      }
      rest = s;
      for (int64_t r : llvm::reverse(red)) {
        origin[r] = rest % ntiles[r] * tile[r];
        rest /= ntiles[r];
      }
      int64_t rows = row < 0 ? 1 : std::min(tr, sizes[row] - origin[row]);
      int64_t cols = std::min(tc, sizes[col] - origin[col]);
      bool first = s == 0, last = s == perGroup - 1;
      int64_t inCopy = i % 2, outCopy = local % 2;

      TileStep step;
      SmallVector<RefAttr> inputViews;
      for (auto [k, access] : llvm::enumerate(inputs)) {
        uint8_t dtype = inputTypes[k];
        int64_t es = deviceDTypeBytes(dtype);
        TileLayout l = layoutTile(stride(access, row), stride(access, col), tr, tc, rows, cols, es);
        int64_t at = slotAt("input" + std::to_string(k), inCopy);
        step.loads.push_back({em.lx(dtype, at, l.lxStrides),
                              em.device(generic.getInputs()[k], dtype,
                                        deviceOffset(access, origin, es), l.deviceStrides),
                              l.rowBytes, l.counts});
        inputViews.push_back(em.lx(dtype, at, {l.rowStride, l.colStride, 0}));
      }
      SmallVector<RefAttr> outputViews, accViews, bestViews, stagingViews;
      for (auto [k, out] : llvm::enumerate(outputs)) {
        std::string name = "output" + std::to_string(k);
        int64_t es = deviceDTypeBytes(out.dtype);
        if (out.combiner == CombinerKind::none) {
          TileLayout l = layoutTile(stride(out.access, row), stride(out.access, col), tr, tc,
                                    rows, cols, es);
          int64_t at = slotAt(name, inCopy);
          outputViews.push_back(em.lx(out.dtype, at, {l.rowStride, l.colStride, 0}));
          step.stores.push_back({em.device(generic.getOutputs()[k], out.dtype,
                                           deviceOffset(out.access, origin, es), l.deviceStrides),
                                 em.lx(out.dtype, at, l.lxStrides), l.rowBytes, l.counts});
          accViews.push_back({});
          bestViews.push_back({});
          stagingViews.push_back({});
          continue;
        }
        outputViews.push_back({});
        uint8_t acc = accType(out);
        int64_t accAt = slotAt(name + ".acc", outCopy);
        accViews.push_back(em.lx(acc, accAt, {deviceDTypeBytes(acc), 0, 0}));
        bestViews.push_back(slotIndex.count(name + ".best")
                                ? em.lx(uint8_t(ISA::DType::f32), slotAt(name + ".best", outCopy),
                                        {4, 0, 0})
                                : RefAttr());
        int64_t stored = needsStaging(out) ? slotAt(name + ".staging", outCopy) : accAt;
        stagingViews.push_back(needsStaging(out) ? em.lx(out.dtype, stored, {es, 0, 0})
                                                 : RefAttr());
        if (last) {
          TileLayout l = layoutTile(stride(out.access, row), 0, tr, 1, rows, 1, es);
          step.stores.push_back({em.device(generic.getOutputs()[k], out.dtype,
                                           deviceOffset(out.access, origin, es), l.deviceStrides),
                                 em.lx(out.dtype, stored, l.lxStrides), l.rowBytes, l.counts});
        }
      }

      step.compute = [=, this, &block, &em](StepCompute &sc) {
        OpBuilder &b = sc.b();
        auto view = [&](Value v) -> RefAttr {
          const BodyValue &info = body.values.at(v);
          switch (info.kind) {
          case BodyValue::Kind::input:
            return inputViews[info.index];
          case BodyValue::Kind::output:
            return outputViews[outputOf(info.index)];
          default: {
            int64_t es = deviceDTypeBytes(info.dtype);
            return em.lx(info.dtype, slotAt("temp" + std::to_string(info.index), 0),
                         {tc * es, es, 0});
          }
          }
        };
        auto imm = [&](Value v) -> std::optional<double> {
          const BodyValue &info = body.values.at(v);
          if (info.kind == BodyValue::Kind::immediate)
            return info.immediate;
          return std::nullopt;
        };
        auto fill = [&](RefAttr dst, double start, double rowStep, double colStep, int64_t r,
                        int64_t c) {
          sc.add(HwFillOp::create(b, loc, dst, APFloat(start), APFloat(rowStep),
                                  APFloat(colStep), r, c, nullptr, 0, nullptr, nullptr));
        };
        for (auto &[op, vop] : body.ops) {
          Value result = op->getResult(0);
          RefAttr dst = view(result);
          if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
            fill(dst, body.values.at(result).immediate, 0, 0, rows, cols);
            continue;
          }
          if (auto expr = dyn_cast<IndexExprOp>(op)) {
            auto [base, coeffs] = coefficients(expr.getMap().getResult(0), n);
            double start = double(base);
            for (int64_t d = 0; d < n; ++d)
              start += double(coeffs[d]) * double(origin[d]);
            fill(dst, start, row < 0 ? 0.0 : double(coeffs[row]), double(coeffs[col]), rows,
                 cols);
            continue;
          }
          switch (vop.kind) {
          case VectorOp::Kind::unary:
            sc.add(HwUnaryOp::create(b, loc, vop.func, dst, view(op->getOperand(0)), rows, cols,
                                     nullptr, 0, nullptr, nullptr));
            break;
          case VectorOp::Kind::binary: {
            Value lhs = op->getOperand(0), rhs = op->getOperand(1);
            StringRef func = vop.func;
            if (imm(lhs)) {
              std::swap(lhs, rhs);
              func = vop.swappedFunc;
            }
            std::optional<double> value = imm(rhs);
            sc.add(HwBinaryOp::create(b, loc, func, dst, view(lhs),
                                      value ? Attribute() : Attribute(view(rhs)),
                                      value ? b.getF64FloatAttr(*value) : FloatAttr(), rows,
                                      cols, nullptr, 0, nullptr, nullptr));
            break;
          }
          case VectorOp::Kind::select:
            sc.add(HwSelectOp::create(b, loc, dst, view(op->getOperand(0)),
                                      view(op->getOperand(1)), view(op->getOperand(2)), rows,
                                      cols, nullptr, 0, nullptr, nullptr));
            break;
          case VectorOp::Kind::iota:
            break;
          }
        }
        auto yield = cast<YieldOp>(block.getTerminator());
        SmallVector<CombinerKind> combiners = generic.getCombinerKinds();
        for (auto [v, yielded] : llvm::enumerate(yield.getValues())) {
          CombinerKind kind = combiners[v];
          unsigned o = outputOf(unsigned(v));
          if (kind == CombinerKind::none) {
            const BodyValue &info = body.values.at(yielded);
            if (info.kind != BodyValue::Kind::output || outputOf(info.index) != o)
              sc.add(HwUnaryOp::create(b, loc, "copy", outputViews[o], view(yielded), rows,
                                       cols, nullptr, 0, nullptr, nullptr));
            continue;
          }
          StringRef func = stringifyCombinerKind(kind);
          RefAttr src = view(yielded);
          if (kind == CombinerKind::argmax || kind == CombinerKind::argmin) {
            // The ISA's argmax only keeps running values when accumulating:
            // start every output tile from "nothing seen" (index -1).
            if (first) {
              fill(accViews[o], -1, 0, 0, rows, 1);
              fill(bestViews[o], 0, 0, 0, rows, 1);
            }
            sc.add(HwReduceOp::create(b, loc, func, accViews[o], src, bestViews[o], nullptr,
                                      true, APFloat(double(origin[col])), rows, cols, nullptr, 0,
                                      nullptr, nullptr));
          } else if (kind == CombinerKind::welford) {
            sc.add(HwReduceOp::create(b, loc, func, accViews[o], src,
                                      accViews[outputOf(unsigned(v), 1)],
                                      accViews[outputOf(unsigned(v), 2)], !first, APFloat(0.0),
                                      rows, cols, nullptr, 0, nullptr, nullptr));
          } else {
            sc.add(HwReduceOp::create(b, loc, func, accViews[o], src, nullptr, nullptr, !first,
                                      APFloat(0.0), rows, cols, nullptr, 0, nullptr, nullptr));
          }
        }
        if (last)
          for (auto [k, out] : llvm::enumerate(outputs))
            if (out.combiner != CombinerKind::none && stagingViews[k])
              sc.add(HwUnaryOp::create(b, loc, "copy", stagingViews[k], accViews[k], rows, 1,
                                       nullptr, 0, nullptr, nullptr));
      };
      return step;
    };
    em.pipeline(core, loc, (gEnd - gBegin) * perGroup, stepAt);
  }
  return success();
}
