//===- OpPlan.h - how one kernel-level op runs on the card ------*- C++ -*-===//
//
// The schedule passes (spyre-divide-work, spyre-tile, spyre-plan-memory,
// spyre-check-lx, spyre-lower-to-hw) each decide or check one part of how a
// compute op runs: how many cores share it, the tile each core works on,
// where its tiles live in LX, and the instructions. They record decisions as
// attributes on the op (the tiled level of docs/lowering.md) and all read the
// op through this one interface, so that they agree on what a tile needs.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_TRANSFORMS_OPPLAN_H
#define SPYRE_TRANSFORMS_OPPLAN_H

#include "Arch/Arch.h"
#include "Spyre/IR/SpyreOps.h"

#include <memory>
#include <string>

namespace mlir::spyre {

/// Attribute names of the tiled level.
inline constexpr llvm::StringLiteral kCoresAttr = "spyre.cores";
inline constexpr llvm::StringLiteral kTileAttr = "spyre.tile";
inline constexpr llvm::StringLiteral kLxAttr = "spyre.lx";
inline constexpr llvm::StringLiteral kDeviceOffsetAttr = "spyre.device_offset";
inline constexpr llvm::StringLiteral kScratchBytesAttr = "spyre.scratch_bytes";

/// One region of LX an op needs while it runs. `copies` is 2 for tiles that
/// are double buffered. Slots whose live ranges [begin, end) overlap must not
/// overlap in LX; ranges count positions in the op's per-tile work.
struct LxSlot {
  std::string name;
  int64_t bytes = 0;
  int64_t copies = 1;
  int64_t begin = 0, end = INT64_MAX;
  int64_t footprint() const { return bytes * copies; }
};

/// Element offset of an operand at a point of a loop nest:
/// base + sum(strides[i] * iv[i]).
struct LinearAccess {
  int64_t base = 0;
  SmallVector<int64_t> strides;
};

/// Whether `expr` is a sum of constant multiples of dimensions and a constant.
bool isLinear(AffineExpr expr);
/// base + sum(strides[d] * d_d) of an expression of `dims` dimensions for
/// which isLinear holds.
LinearAccess linearCoefficients(AffineExpr expr, unsigned dims);
/// Element strides of a dense buffer with its layout's dimension order.
SmallVector<int64_t> elementStrides(BufferType type);
/// The access `map` makes into a buffer of `type`, if it is linear in the
/// loops; else nothing, with the reason in `why`.
std::optional<LinearAccess> linearize(AffineMap map, BufferType type, std::string &why);
/// The element type an MLIR scalar type has on the card (isa::DType).
uint8_t deviceDType(Type type);
int64_t deviceDTypeBytes(uint8_t dtype);

class HwEmitter;

/// What the schedule passes know about one compute op.
class OpPlan {
public:
  virtual ~OpPlan();
  /// The plan of a compute op (generic, matmul, batch_matmul, gather), or an
  /// error on `op` saying why it cannot run on the card. Ops that are not
  /// compute ops give nullptr without an error.
  static FailureOr<std::unique_ptr<OpPlan>> get(Operation *op, const ::spyre::Arch &arch);

  /// Independent units of work (output rows, tiles) cores can share.
  virtual int64_t parallelUnits() const = 0;
  /// The largest tile that fits `lxBytes` and still gives every one of
  /// `cores` cores work where there is enough; empty if none fits.
  virtual SmallVector<int64_t> chooseTile(int64_t cores, int64_t lxBytes) const = 0;
  /// Checks a tile (from the IR) has the right rank and positive sizes.
  virtual LogicalResult verifyTile(ArrayRef<int64_t> tile) const = 0;
  /// The LX regions a tile needs, in a fixed order (the order of `spyre.lx`).
  virtual SmallVector<LxSlot> slots(ArrayRef<int64_t> tile) const = 0;
  /// Emits the op's instructions on `cores` cores with its LX slots at
  /// `lxOffsets`.
  virtual LogicalResult lower(HwEmitter &emitter, int64_t cores, ArrayRef<int64_t> tile,
                              ArrayRef<int64_t> lxOffsets) const = 0;

  Operation *getOperation() const { return op; }

protected:
  OpPlan(Operation *op, const ::spyre::Arch &arch) : op(op), arch(arch) {}
  Operation *op;
  ::spyre::Arch arch;
};

/// Checks that every buffer of `kernel` (arguments and temporaries) can
/// exist on the card: a rank the program binary holds and no more bytes than
/// the card's usable device memory. The schedule passes check this first, so
/// that sizes no card holds are refused before any tile is searched.
LogicalResult checkBuffersFit(KernelOp kernel, const ::spyre::Arch &arch);

/// Offsets for `slots` (first fit by live range, stick aligned) and the
/// bytes of LX they span.
SmallVector<int64_t> assignLx(ArrayRef<LxSlot> slots, int64_t alignment, int64_t &total);
/// Checks that live-overlapping slots do not overlap in LX and that all fit
/// in `lxBytes`; reports the first violation on `op`.
LogicalResult checkLx(Operation *op, ArrayRef<LxSlot> slots, ArrayRef<int64_t> offsets,
                      int64_t lxBytes);

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_OPPLAN_H
