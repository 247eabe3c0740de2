//===- GenericBody.cpp - a spyre.generic body as vector instructions ------===//

#include "GenericBody.h"
#include "HwEmitter.h"
#include "OpPlan.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::spyre;

namespace {

using K = VectorOp::Kind;

VectorOp unary(StringRef f) { return {K::unary, f.str(), ""}; }
/// `swapped`: the function that gives the same result with operands swapped.
VectorOp binary(StringRef f, StringRef swapped = "") {
  return {K::binary, f.str(), swapped.str()};
}
VectorOp commutative(StringRef f) { return binary(f, f); }

std::optional<VectorOp> compare(StringRef predicate) {
  // Ordered float predicates and signed integer ones are IEEE / two's
  // complement comparisons, which is what the SFU computes; unordered and
  // unsigned variants are not, so they are refused rather than approximated.
  static const std::pair<StringRef, StringRef> mirrored[] = {
      {"eq", "eq"}, {"ne", "ne"}, {"lt", "gt"}, {"le", "ge"}, {"gt", "lt"}, {"ge", "le"}};
  for (auto [f, m] : mirrored)
    if (predicate == f)
      return binary(f, m);
  return std::nullopt;
}

StringRef floatPredicate(arith::CmpFPredicate p) {
  using P = arith::CmpFPredicate;
  switch (p) {
  case P::OEQ: return "eq";
  case P::UNE: return "ne";
  case P::OLT: return "lt";
  case P::OLE: return "le";
  case P::OGT: return "gt";
  case P::OGE: return "ge";
  default: return "";
  }
}

StringRef intPredicate(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::eq: return "eq";
  case P::ne: return "ne";
  case P::slt: return "lt";
  case P::sle: return "le";
  case P::sgt: return "gt";
  case P::sge: return "ge";
  default: return "";
  }
}

bool isBool(Operation &op) { return op.getResult(0).getType().isInteger(1); }

/// Whether only instructions of the body read `v`: not the yield (its caller
/// copies a yielded value over the whole tile) nor a conversion the SFU does
/// for free (which renames `v` rather than reading it). Such a value may be
/// stored in fewer elements than the tile and read with zero strides.
bool readByBodyInstructionsOnly(Value v) {
  return llvm::none_of(v.getUsers(), [](Operation *user) {
    return isa<YieldOp, arith::ExtFOp, arith::TruncFOp>(user);
  });
}

} // namespace

std::optional<VectorOp> mlir::spyre::vectorOpFor(Operation &op, std::string &why) {
  std::optional<VectorOp> result =
      llvm::TypeSwitch<Operation *, std::optional<VectorOp>>(&op)
          // Conversions: a copy into the result's element type.
          .Case<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
                arith::FPToSIOp, arith::ExtSIOp, arith::IndexCastOp>(
              [](auto) { return unary("copy"); })
          .Case([](arith::ExtUIOp e) -> std::optional<VectorOp> {
            // Zero extension is a copy only from booleans (stored as 0 / 1).
            if (e.getIn().getType().isInteger(1))
              return unary("copy");
            return std::nullopt;
          })
          .Case([](arith::TruncIOp t) -> std::optional<VectorOp> {
            if (t.getType().isInteger(1))
              return std::nullopt; // keeps the low bit, not "!= 0"
            return unary("copy");
          })
          .Case([](arith::NegFOp) { return unary("neg"); })
          .Case<math::AbsFOp, math::AbsIOp>([](auto) { return unary("abs"); })
          .Case([](math::ExpOp) { return unary("exp"); })
          .Case([](math::Exp2Op) { return unary("exp2"); })
          .Case([](math::ExpM1Op) { return unary("expm1"); })
          .Case([](math::LogOp) { return unary("log"); })
          .Case([](math::Log1pOp) { return unary("log1p"); })
          .Case([](math::Log2Op) { return unary("log2"); })
          .Case([](math::Log10Op) { return unary("log10"); })
          .Case([](math::TanhOp) { return unary("tanh"); })
          .Case([](math::ErfOp) { return unary("erf"); })
          .Case([](math::ErfcOp) { return unary("erfc"); })
          .Case([](math::SqrtOp) { return unary("sqrt"); })
          .Case([](math::RsqrtOp) { return unary("rsqrt"); })
          .Case([](math::SinOp) { return unary("sin"); })
          .Case([](math::CosOp) { return unary("cos"); })
          .Case([](math::TanOp) { return unary("tan"); })
          .Case([](math::AsinOp) { return unary("asin"); })
          .Case([](math::AcosOp) { return unary("acos"); })
          .Case([](math::AtanOp) { return unary("atan"); })
          .Case([](math::SinhOp) { return unary("sinh"); })
          .Case([](math::CoshOp) { return unary("cosh"); })
          .Case([](math::AsinhOp) { return unary("asinh"); })
          .Case([](math::AcoshOp) { return unary("acosh"); })
          .Case([](math::AtanhOp) { return unary("atanh"); })
          .Case([](math::FloorOp) { return unary("floor"); })
          .Case([](math::CeilOp) { return unary("ceil"); })
          .Case([](math::RoundEvenOp) { return unary("round"); })
          .Case([](math::TruncOp) { return unary("trunc"); })
          .Case([](math::IsNaNOp) { return unary("isnan"); })
          .Case([](math::IsInfOp) { return unary("isinf"); })
          .Case<arith::AddFOp, arith::AddIOp>([](auto) { return commutative("add"); })
          .Case<arith::SubFOp, arith::SubIOp>([](auto) { return binary("sub"); })
          .Case<arith::MulFOp, arith::MulIOp>([](auto) { return commutative("mul"); })
          .Case([](arith::DivFOp) { return binary("div"); })
          .Case([](arith::RemFOp) { return binary("fmod"); })
          .Case([](arith::RemSIOp) { return binary("fmod"); })
          .Case([](arith::FloorDivSIOp) { return binary("floordiv"); })
          .Case<arith::MaximumFOp, arith::MaxSIOp>([](auto) { return commutative("max"); })
          .Case<arith::MinimumFOp, arith::MinSIOp>([](auto) { return commutative("min"); })
          .Case([](math::PowFOp) { return binary("pow"); })
          .Case([](math::Atan2Op) { return binary("atan2"); })
          .Case([](math::CopySignOp) { return binary("copysign"); })
          .Case([&](arith::AndIOp) {
            return commutative(isBool(op) ? "logical_and" : "bitwise_and");
          })
          .Case([&](arith::OrIOp) {
            return commutative(isBool(op) ? "logical_or" : "bitwise_or");
          })
          .Case([&](arith::XOrIOp) {
            return commutative(isBool(op) ? "logical_xor" : "bitwise_xor");
          })
          .Case([](arith::ShLIOp) { return binary("shl"); })
          .Case([](arith::ShRSIOp) { return binary("shr"); })
          .Case([](arith::CmpFOp c) { return compare(floatPredicate(c.getPredicate())); })
          .Case([](arith::CmpIOp c) { return compare(intPredicate(c.getPredicate())); })
          .Case([](arith::SelectOp) { return VectorOp{K::select, "", ""}; })
          .Case([](IndexExprOp) { return VectorOp{K::iota, "", ""}; })
          .Default([](Operation *) { return std::nullopt; });
  if (!result) {
    why = "'" + op.getName().getStringRef().str() + "'";
    if (auto cmpf = dyn_cast<arith::CmpFOp>(op))
      why += " with predicate " + arith::stringifyCmpFPredicate(cmpf.getPredicate()).str();
    if (auto cmpi = dyn_cast<arith::CmpIOp>(op))
      why += " with predicate " + arith::stringifyCmpIPredicate(cmpi.getPredicate()).str();
    why += " has no vector-unit instruction";
  }
  return result;
}

FailureOr<BodyPlan> mlir::spyre::planBody(GenericOp generic) {
  BodyPlan plan;
  Block &body = generic.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<CombinerKind> combiners = generic.getCombinerKinds();
  for (BlockArgument arg : body.getArguments())
    plan.values[arg] = {BodyValue::Kind::input, arg.getArgNumber(), 0,
                        deviceDType(arg.getType())};

  // Position of every op; the yield is last.
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = int64_t(i);

  // A constant can be an immediate when every use is a binary instruction
  // that takes it as its second operand (possibly after swapping).
  auto immediateOnly = [&](Value constant) {
    for (OpOperand &use : constant.getUses()) {
      std::string why;
      std::optional<VectorOp> vop = vectorOpFor(*use.getOwner(), why);
      if (!vop || vop->kind != K::binary)
        return false;
      Value other = use.getOwner()->getOperand(1 - use.getOperandNumber());
      if (other.getDefiningOp<arith::ConstantOp>())
        return false;
      if (use.getOperandNumber() == 0 && vop->swappedFunc.empty())
        return false;
    }
    return true;
  };
  // The output a value can be computed into directly: yielded once, with
  // no combiner, and used by nothing else.
  auto directOutput = [&](Value v) -> std::optional<unsigned> {
    if (!v.hasOneUse() || v.getUses().begin()->getOwner() != yield)
      return std::nullopt;
    unsigned index = v.getUses().begin()->getOperandNumber();
    if (combiners[index] != CombinerKind::none)
      return std::nullopt;
    return index;
  };
  // A widening renames its operand (below): the operand's temporary lives
  // as long as the widened value is read.
  std::function<int64_t(Value)> lastUser = [&](Value v) {
    int64_t last = -1;
    for (Operation *user : v.getUsers()) {
      last = std::max(last, position[user]);
      if (isa<arith::ExtFOp>(user))
        last = std::max(last, lastUser(user->getResult(0)));
    }
    return last;
  };
  auto lastUse = [&](Value v) { return lastUser(v) + 1; };
  auto newTemp = [&](Value v, int64_t begin) {
    plan.temps.push_back({deviceDType(v.getType()), begin, lastUse(v)});
    return unsigned(plan.temps.size() - 1);
  };

  // Conversions the vector unit does for free. It reads any element type
  // and computes in f32, so widening a float (an input, or a value the body
  // narrowed, as Inductor rounds an fp16 model's intermediates) is only
  // another view of it. It rounds to the destination's type on store (after
  // rounding to f32), so an op whose only use narrows its float result
  // stores the narrow type directly: the same value, one instruction and
  // one f32 stream fewer.
  auto narrowedBy = [&](Value v) -> arith::TruncFOp {
    if (!v.hasOneUse() || !isa<FloatType>(v.getType()))
      return {};
    return dyn_cast<arith::TruncFOp>(*v.getUsers().begin());
  };
  DenseSet<Operation *> foldedNarrowings;

  for (Operation &op : body.without_terminator()) {
    // An alias copies its source's entry before inserting: `values[a] =
    // values.at(b)` reads a reference that the insertion's rehash frees, and
    // which input a widened argument then named depended on heap addresses.
    auto alias = [&](Value v, Value source) {
      BodyValue info = plan.values.at(source);
      plan.values[v] = info;
      plan.renamed[v] = source;
    };
    if (auto widen = dyn_cast<arith::ExtFOp>(op)) {
      alias(widen.getResult(), widen.getIn());
      continue;
    }
    if (foldedNarrowings.contains(&op)) {
      alias(op.getResult(0), op.getOperand(0));
      continue;
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      double value;
      if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
        value = f.getValueAsDouble();
      else if (auto i = dyn_cast<IntegerAttr>(constant.getValue()))
        value = op.getResult(0).getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                                        : double(i.getInt());
      else
        return generic.emitError() << "body constant " << constant.getValue()
                                   << " is not a scalar";
      Value result = constant.getResult();
      BodyValue info{BodyValue::Kind::immediate, 0, value, deviceDType(result.getType())};
      if (!immediateOnly(result)) {
        info.kind = BodyValue::Kind::temp;
        info.index = newTemp(result, position[&op]);
        // One element, read with zero strides.
        info.scalar = readByBodyInstructionsOnly(result);
        plan.ops.push_back({&op, VectorOp{K::iota, "", ""}}); // a fill
      }
      plan.values[result] = info;
      continue;
    }
    std::string why;
    std::optional<VectorOp> vop = vectorOpFor(op, why);
    if (!vop)
      return generic.emitError() << "cannot run on the card: body op " << why;
    if (auto expr = dyn_cast<IndexExprOp>(op); expr && !isLinear(expr.getMap().getResult(0)))
      return generic.emitError() << "cannot run on the card: spyre.index_expr "
                                 << AffineMapAttr::get(expr.getMap())
                                 << " is not linear in the loops";
    Value result = op.getResult(0);
    Value stored = result; // the value this instruction's store produces
    if (arith::TruncFOp narrow = narrowedBy(result); narrow && vop->kind != K::iota) {
      foldedNarrowings.insert(narrow);
      stored = narrow.getResult();
    }
    BodyValue info{BodyValue::Kind::temp, 0, 0, deviceDType(stored.getType())};
    if (std::optional<unsigned> out = directOutput(stored)) {
      info.kind = BodyValue::Kind::output;
      info.index = *out;
    } else {
      info.index = newTemp(stored, position[&op]);
    }
    plan.values[result] = info;
    plan.ops.push_back({&op, *vop});
  }
  return plan;
}

void mlir::spyre::emitBody(StepCompute &sc, Location loc, const BodyPlan &plan, int64_t rows,
                           int64_t viewCols, function_ref<RefAttr(Value)> viewOf,
                           function_ref<void(IndexExprOp, RefAttr, int64_t)> index,
                           function_ref<bool(IndexExprOp)> indexAlongRowsOnly) {
  emitBody(
      sc, loc, plan, rows, viewCols, 1, [&](Value v, int64_t) { return viewOf(v); },
      [&](IndexExprOp expr, RefAttr dst, int64_t cols, int64_t) { index(expr, dst, cols); },
      indexAlongRowsOnly);
}

void mlir::spyre::emitBody(StepCompute &sc, Location loc, const BodyPlan &plan, int64_t rows,
                           int64_t viewCols, int64_t blocks,
                           function_ref<RefAttr(Value, int64_t)> viewOf,
                           function_ref<void(IndexExprOp, RefAttr, int64_t, int64_t)> index,
                           function_ref<bool(IndexExprOp)> indexAlongRowsOnly) {
  OpBuilder &b = sc.b();
  auto imm = [&](Value v) -> std::optional<double> {
    const BodyValue &info = plan.values.at(v);
    if (info.kind == BodyValue::Kind::immediate)
      return info.immediate;
    return std::nullopt;
  };
  // A constant held in LX (an operand no instruction takes as an immediate,
  // such as a select's) is one element read with zero strides: its fill
  // costs the SFU's startup, not a pass over the tile.
  // A temporary computed from values constant along the columns only (row
  // statistics: a maximum, a sum, the input of a row-broadcast load, an
  // index of the row) is computed once per row, its column 0, and read with
  // a zero column stride.
  DenseSet<Value> perRow;
  // Conversions the SFU does for free (plan.renamed) emit nothing and
  // rename their operand: a value and its renamings are one temporary.
  // Inductor rounds row statistics through the narrow type (an RMSNorm's
  // mean square: divide, narrow, widen, add epsilon, rsqrt), and a rule
  // that stopped at the folded narrowing ran all of them over whole rows.
  auto renames = [&](Operation *op) {
    return op->getNumResults() == 1 && plan.renamed.count(op->getResult(0));
  };
  auto source = [&](Value v) {
    for (auto it = plan.renamed.find(v); it != plan.renamed.end(); it = plan.renamed.find(v))
      v = it->second;
    return v;
  };
  // Whether only instructions read `v` and its renamings: not the yield,
  // whose caller copies a yielded value over the whole tile.
  std::function<bool(Value)> readByInstructionsOnly = [&](Value v) {
    return llvm::all_of(v.getUsers(), [&](Operation *user) {
      if (isa<YieldOp>(user))
        return false;
      return !renames(user) || readByInstructionsOnly(user->getResult(0));
    });
  };
  auto withStrides = [](RefAttr r, int64_t rowStride) {
    return RefAttr::get(r.getContext(), r.getBuffer(), r.getDtype(), r.getOffset(),
                        {rowStride, 0, 0}, r.getInc(), r.getCore());
  };
  auto viewOfBlock = [&](Value v, int64_t blk) -> RefAttr {
    RefAttr r = viewOf(v, blk);
    if (plan.values.at(v).scalar)
      return withStrides(r, 0);
    if (perRow.contains(source(v)))
      return withStrides(r, r.getStrides()[0]);
    return r;
  };
  auto constantAlongColumns = [&](Value v) {
    const BodyValue &info = plan.values.at(v);
    return info.kind == BodyValue::Kind::immediate || info.scalar || perRow.contains(source(v)) ||
           (info.kind == BodyValue::Kind::input && viewOf(v, 0).getStrides()[1] == 0);
  };
  auto rowTemp = [&](Operation *op) {
    Value result = op->getResult(0);
    return !isa<arith::ConstantOp, IndexExprOp>(op) &&
           plan.values.at(result).kind == BodyValue::Kind::temp &&
           readByInstructionsOnly(result) &&
           llvm::all_of(op->getOperands(), constantAlongColumns);
  };
  // Every op over every block before the next op: a block's result may
  // overwrite what another block's earlier ops read (an epilogue writing
  // its output in place over the product it reads elsewhere).
  for (auto &[op, vop] : plan.ops) {
    Value result = op->getResult(0);
    if (auto expr = dyn_cast<IndexExprOp>(op)) {
      bool once = plan.values.at(result).kind == BodyValue::Kind::temp &&
                  readByInstructionsOnly(result) && indexAlongRowsOnly(expr);
      if (once)
        perRow.insert(result);
      for (int64_t blk = 0; blk < blocks; ++blk)
        index(expr, viewOfBlock(result, blk), once ? 1 : viewCols, blk);
      continue;
    }
    int64_t cols = viewCols;
    if (rowTemp(op)) {
      perRow.insert(result);
      cols = 1;
    }
    for (int64_t blk = 0; blk < blocks; ++blk) {
      auto view = [&](Value v) { return viewOfBlock(v, blk); };
      RefAttr dst = view(result);
      if (isa<arith::ConstantOp>(op)) {
        const BodyValue &info = plan.values.at(result);
        int64_t r = info.scalar ? 1 : rows, c = info.scalar ? 1 : cols;
        sc.add(HwFillOp::create(b, loc, dst, APFloat(info.immediate), APFloat(0.0),
                                APFloat(0.0), r, c, nullptr, 0, nullptr, nullptr));
        continue;
      }
      switch (vop.kind) {
      case K::unary:
        sc.add(HwUnaryOp::create(b, loc, vop.func, dst, view(op->getOperand(0)), rows, cols,
                                 nullptr, 0, nullptr, nullptr));
        break;
      case K::binary: {
        Value lhs = op->getOperand(0), rhs = op->getOperand(1);
        StringRef func = vop.func;
        if (imm(lhs)) {
          std::swap(lhs, rhs);
          func = vop.swappedFunc;
        }
        std::optional<double> value = imm(rhs);
        sc.add(HwBinaryOp::create(b, loc, func, dst, view(lhs),
                                  value ? Attribute() : Attribute(view(rhs)),
                                  value ? b.getF64FloatAttr(*value) : FloatAttr(), rows, cols,
                                  nullptr, 0, nullptr, nullptr));
        break;
      }
      case K::select:
        sc.add(HwSelectOp::create(b, loc, dst, view(op->getOperand(0)), view(op->getOperand(1)),
                                  view(op->getOperand(2)), rows, cols, nullptr, 0, nullptr,
                                  nullptr));
        break;
      case K::iota:
        break;
      }
    }
  }
}
