//===- GenericLower.cpp - a spyre.generic as per-core instructions --------===//
//
// Each core runs its share of output tiles; a step loads the input tiles,
// runs one SFU instruction per body op over the tile, reduces into
// accumulators (accumulate after the first reduction tile) and stores.
//
//===----------------------------------------------------------------------===//

#include "GenericPlan.h"
#include "HwEmitter.h"
#include "spyre-mlir/Isa/Isa.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::spyre;
namespace ISA = ::spyre::isa;


GenericPlan::Geometry GenericPlan::geometry(ArrayRef<int64_t> tile, ArrayRef<int64_t> lx) const {
  Geometry g;
  g.tile = tile;
  g.lx = lx;
  g.slots = slots(tile);
  for (auto [i, slot] : llvm::enumerate(g.slots))
    g.slotIndex[slot.name] = unsigned(i);
  int64_t n = sizes.size();
  g.tr = rowSize(tile);
  g.tc = tile[col];
  for (int64_t i = 0; i < n; ++i) {
    g.ntiles.push_back(llvm::divideCeil(sizes[i], tile[i]));
    if (i != col)
      (reduction[i] ? g.red : g.par).push_back(i);
  }
  (reduction[col] ? g.red : g.par).push_back(col);
  for (int64_t i : g.par)
    g.groups *= g.ntiles[i];
  for (int64_t i : g.red)
    g.perGroup *= g.ntiles[i];
  return g;
}

SmallVector<bool> GenericPlan::heldOnCore(const Geometry &g, int64_t firstGroup,
                                          int64_t endGroup) const {
  SmallVector<bool> held(inputs.size(), endGroup > firstGroup);
  for (auto [k, access] : llvm::enumerate(inputs)) {
    // Steps of one output tile walk the reduced loops' tiles.
    for (int64_t r : g.red)
      if (g.ntiles[r] > 1 && access.strides[r] != 0)
        held[k] = false;
    // Output tiles number the parallel loops' tiles, the last fastest.
    int64_t inner = 1;
    for (int64_t p : llvm::reverse(g.par)) {
      auto tileOf = [&](int64_t group) { return group / inner % g.ntiles[p]; };
      if (access.strides[p] != 0)
        for (int64_t group = firstGroup + 1; held[k] && group < endGroup; ++group)
          held[k] = tileOf(group) == tileOf(firstGroup);
      inner *= g.ntiles[p];
    }
  }
  return held;
}

LogicalResult GenericPlan::lower(HwEmitter &em, int64_t cores, ArrayRef<int64_t> tile,
                                 ArrayRef<int64_t> lx) const {
  Geometry g = geometry(tile, lx);
  for (int64_t core = 0; core < cores; ++core) {
    int64_t gBegin = g.groups * core / cores, gEnd = g.groups * (core + 1) / cores;
    SmallVector<bool> held = heldOnCore(g, gBegin, gEnd);
    em.pipeline(core, generic.getLoc(), (gEnd - gBegin) * g.perGroup, [&](int64_t i) {
      return buildStep(em, g, gBegin + i / g.perGroup, i % g.perGroup, i, nullptr, nullptr,
                       nullptr, held);
    });
  }
  return success();
}

TileStep GenericPlan::buildStep(HwEmitter &em, const Geometry &g, int64_t group, int64_t s,
                                int64_t i, const Overrides *overrides,
                                SmallVectorImpl<RefAttr> *results,
                                SmallVectorImpl<RefAttr> *inputViewsOut,
                                ArrayRef<bool> heldOnCore) const {
  int64_t n = sizes.size();
  int64_t tr = g.tr, tc = g.tc;
  ArrayRef<int64_t> tile = g.tile;
  auto slotAt = [&](const std::string &name, int64_t copy) { return g.slotAt(name, copy); };
  auto stride = [&](const LinearAccess &a, int loop) { return loop < 0 ? 0 : a.strides[loop]; };
  auto deviceOffset = [&](const LinearAccess &a, ArrayRef<int64_t> origin, int64_t es) {
    int64_t offset = a.base;
    for (int64_t d = 0; d < n; ++d)
      offset += a.strides[d] * origin[d];
    return offset * es;
  };
  Block &block = generic.getBody().front();
  Location loc = generic.getLoc();

  int64_t local = i / g.perGroup;
  SmallVector<int64_t> origin(n, 0);
  int64_t rest = group;
  for (int64_t p : llvm::reverse(g.par)) {
    origin[p] = rest % g.ntiles[p] * tile[p];
    rest /= g.ntiles[p];
  }
  rest = s;
  for (int64_t r : llvm::reverse(g.red)) {
    origin[r] = rest % g.ntiles[r] * tile[r];
    rest /= g.ntiles[r];
  }
  int64_t rows = row < 0 ? 1 : std::min(tr, sizes[row] - origin[row]);
  int64_t cols = std::min(tc, sizes[col] - origin[col]);
  int64_t planes = plane < 0 ? 1 : std::min(tile[plane], sizes[plane] - origin[plane]);
  assert((planes == 1 || !overrides) && "fused members run one plane");
  bool first = s == 0, last = s == g.perGroup - 1;
  int64_t inCopy = i % 2, outCopy = local % 2;

  TileStep step;
  // Views of each plane of every operand ([plane][operand]).
  SmallVector<SmallVector<RefAttr>> inputViews(planes, SmallVector<RefAttr>(inputs.size()));
  // Loads of this step's inputs: what each moves, where to, whether resident.
  SmallVector<std::pair<Transfer, std::pair<int64_t, bool>>> loaded;
  SmallVector<int64_t> inputAt(inputs.size(), -1); // LX offset of each input's tile
  // Inputs that load their own tiles first, then those reading a leader's
  // runs (shareRuns).
  auto order = llvm::to_vector(llvm::seq<unsigned>(0, inputs.size()));
  std::stable_partition(order.begin(), order.end(), [&](unsigned k) { return runLeader[k] < 0; });
  for (unsigned k : order) {
    const LinearAccess &access = inputs[k];
    if (overrides && overrides->inputViews.count(k)) {
      assert(!sharesRuns(k) && "FusedPlan drops the runs of inputs it reads elsewhere");
      inputViews[0][k] = overrides->inputViews.lookup(k);
      continue;
    }
    uint8_t dtype = inputTypes[k];
    int64_t es = deviceDTypeBytes(dtype);
    int leader = runLeader[k];
    PlanedLayout pl = layoutPlanes(access, es, tile, rows, cols, planes, arch.stickBytes,
                                   leader < 0 ? runExtra[k] : runExtra[leader]);
    const TileLayout &l = pl.tile;
    if (leader >= 0) { // the leader's runs, shifted
      inputAt[k] = inputAt[leader] + runShift[k] * es;
      for (int64_t p = 0; p < planes; ++p)
        inputViews[p][k] = em.lx(dtype, inputAt[k] + pl.viewOffset(p, planes),
                                 {l.rowStride, pl.colStride, 0});
      continue;
    }
    bool resident = isResident(k, tile) || (!heldOnCore.empty() && heldOnCore[k]);
    int64_t at = slotAt("input" + std::to_string(k), resident ? 0 : inCopy);
    Transfer load{em.lx(dtype, at, l.lxStrides),
                  em.device(generic.getInputs()[k], dtype,
                            deviceOffset(access, origin, es) + pl.deviceShift * es,
                            l.deviceStrides),
                  l.rowBytes, l.counts};
    // An input that moves the same bytes into the same layout as an earlier
    // one (a rotary embedding's head and its rotated halves, a whole run of
    // planes each) reads that one's copy.
    auto same = llvm::find_if(loaded, [&](const auto &other) {
      const Transfer &t = other.first;
      return t.src == load.src && t.rowBytes == load.rowBytes && t.counts == load.counts &&
             t.dst.getStrides() == load.dst.getStrides() && other.second.second == resident;
    });
    if (same != loaded.end()) {
      at = same->second.first;
    } else {
      loaded.push_back({load, {at, resident}});
      if (!resident || i == 0)
        step.loads.push_back(load);
    }
    inputAt[k] = at;
    for (int64_t p = 0; p < planes; ++p)
      inputViews[p][k] = em.lx(dtype, at + pl.viewOffset(p, planes),
                               {l.rowStride, pl.colStride, 0});
  }
  if (inputViewsOut)
    inputViewsOut->assign(inputViews[0].begin(), inputViews[0].end());
  auto internal = [&](size_t k) {
    return overrides && overrides->internalOutputs.contains(unsigned(k));
  };
  SmallVector<SmallVector<RefAttr>> outputViews(planes);
  SmallVector<RefAttr> accViews, bestViews, stagingViews;
  for (auto [k, out] : llvm::enumerate(outputs)) {
    std::string name = "output" + std::to_string(k);
    int64_t es = deviceDTypeBytes(out.dtype);
    if (out.combiner == CombinerKind::none) {
      PlanedLayout pl = layoutPlanes(out.access, es, tile, rows, cols, planes, outputSpan(out));
      const TileLayout &l = pl.tile;
      int64_t at = slotAt(name, inCopy);
      for (int64_t p = 0; p < planes; ++p)
        outputViews[p].push_back(
            em.lx(out.dtype, at + pl.viewOffset(p, planes), {l.rowStride, pl.colStride, 0}));
      if (!internal(k)) {
        RefAttr device = em.device(generic.getOutputs()[k], out.dtype,
                                   deviceOffset(out.access, origin, es) + pl.deviceShift * es,
                                   l.deviceStrides);
        RefAttr local = em.lx(out.dtype, at, l.lxStrides);
        if (rewritesRuns(out))
          step.loads.push_back({local, device, l.rowBytes, l.counts});
        step.stores.push_back({device, local, l.rowBytes, l.counts});
      }
      accViews.push_back({});
      bestViews.push_back({});
      stagingViews.push_back({});
      if (results)
        results->push_back(outputViews[0].back());
      continue;
    }
    outputViews[0].push_back({});
    uint8_t acc = accType(out);
    int64_t accAt = slotAt(name + ".acc", outCopy);
    accViews.push_back(em.lx(acc, accAt, {deviceDTypeBytes(acc), 0, 0}));
    bestViews.push_back(g.slotIndex.count(name + ".best")
                            ? em.lx(uint8_t(ISA::DType::f32), slotAt(name + ".best", outCopy),
                                    {4, 0, 0})
                            : RefAttr());
    int64_t stored = needsStaging(out) ? slotAt(name + ".staging", outCopy) : accAt;
    stagingViews.push_back(needsStaging(out) ? em.lx(out.dtype, stored, {es, 0, 0})
                                             : RefAttr());
    if (results) // the final value, broadcast along the reduced columns
      results->push_back(em.lx(out.dtype, stored, {es, 0, 0}));
    if (last && !internal(k)) {
      TileLayout l = layoutTile(stride(out.access, row), 0, tr, 1, rows, 1, es);
      step.stores.push_back({em.device(generic.getOutputs()[k], out.dtype,
                                       deviceOffset(out.access, origin, es), l.deviceStrides),
                             em.lx(out.dtype, stored, l.lxStrides), l.rowBytes, l.counts});
    }
  }
  step.compute = [=, this, &block, &em, &g](StepCompute &sc) {
    for (int64_t p = 0; p < planes; ++p)
      computePlane(sc, em, g, block, origin, p, rows, cols, first, last, inputViews[p],
                   outputViews[p], accViews, bestViews, stagingViews);
  };
  return step;
}

void GenericPlan::computePlane(StepCompute &sc, HwEmitter &em, const Geometry &g, Block &block,
                               ArrayRef<int64_t> origin, int64_t p, int64_t rows, int64_t cols,
                               bool first, bool last, ArrayRef<RefAttr> inputViews,
                               ArrayRef<RefAttr> outputViews, ArrayRef<RefAttr> accViews,
                               ArrayRef<RefAttr> bestViews,
                               ArrayRef<RefAttr> stagingViews) const {
  int64_t n = sizes.size(), tc = g.tc;
  Location loc = generic.getLoc();
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
      return em.lx(info.dtype, g.slotAt("temp" + std::to_string(info.index), 0),
                   {tc * es, es, 0});
    }
    }
  };
  auto fill = [&](RefAttr dst, double start, double rowStep, double colStep, int64_t r,
                  int64_t c) {
    sc.add(HwFillOp::create(b, loc, dst, APFloat(start), APFloat(rowStep),
                            APFloat(colStep), r, c, nullptr, 0, nullptr, nullptr));
  };
  auto coefficients = [&](IndexExprOp expr) {
    return linearCoefficients(expr.getMap().getResult(0), n);
  };
  emitBody(
      sc, loc, body, rows, cols, view,
      [&](IndexExprOp expr, RefAttr dst, int64_t filled) {
        LinearAccess value = coefficients(expr);
        double start = double(value.base);
        for (int64_t d = 0; d < n; ++d)
          start += double(value.strides[d]) * double(origin[d] + (d == plane ? p : 0));
        fill(dst, start, row < 0 ? 0.0 : double(value.strides[row]),
             double(value.strides[col]), rows, filled);
      },
      [&](IndexExprOp expr) { return coefficients(expr).strides[col] == 0; });
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
}
