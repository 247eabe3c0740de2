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

#include "DeviceTypes.h"
#include "Linearize.h"
#include "LxPlan.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>

namespace mlir::spyre {

/// Attribute names of the tiled level.
inline constexpr llvm::StringLiteral kCoresAttr = "spyre.cores";
inline constexpr llvm::StringLiteral kTileAttr = "spyre.tile";
inline constexpr llvm::StringLiteral kTileCandidatesAttr = "spyre.tile_candidates";
inline constexpr llvm::StringLiteral kLxAttr = "spyre.lx";
inline constexpr llvm::StringLiteral kDeviceOffsetAttr = "spyre.device_offset";
inline constexpr llvm::StringLiteral kScratchBytesAttr = "spyre.scratch_bytes";

class HwEmitter;

/// What the schedule passes know about one compute op.
class OpPlan {
public:
  virtual ~OpPlan();
  /// The plan of a compute op (generic, matmul, batch_matmul, gather,
  /// attention, conv2d), or an error on `op` saying why it cannot run on the card.
  /// Ops that are not compute ops give nullptr without an error.
  static FailureOr<std::unique_ptr<OpPlan>> get(Operation *op, const ::spyre::Arch &arch);

  /// Independent units of work (output rows, tiles) cores can share.
  virtual int64_t parallelUnits() const = 0;
  /// The largest tile that fits `lxBytes` and still gives every one of
  /// `cores` cores work where there is enough; empty if none fits.
  virtual SmallVector<int64_t> chooseTile(int64_t cores, int64_t lxBytes) const = 0;
  /// Tiles worth trying when tuning by simulated time (spyre-tile's
  /// `candidates` option): at most `count`, chooseTile's first, then those
  /// the plan ranks next. Only chooseTile's for plans that rank no others.
  virtual SmallVector<SmallVector<int64_t>> tileCandidates(int64_t cores, int64_t lxBytes,
                                                           int64_t count) const;
  /// Checks a tile (from the IR) has the right rank and positive sizes.
  virtual LogicalResult verifyTile(ArrayRef<int64_t> tile) const = 0;
  /// The plan's estimate of its cycles on `cores` cores with chooseTile's
  /// tile, for plans that estimate (a fusion compares them); else nothing.
  virtual std::optional<double> estimatedCycles(int64_t cores, int64_t lxBytes) const {
    return std::nullopt;
  }
  /// The LX regions a tile needs, in a fixed order (the order of `spyre.lx`).
  virtual SmallVector<LxSlot> slots(ArrayRef<int64_t> tile) const = 0;
  /// Emits the op's instructions on `cores` cores with its LX slots at
  /// `lxOffsets`.
  virtual LogicalResult lower(HwEmitter &emitter, int64_t cores, ArrayRef<int64_t> tile,
                              ArrayRef<int64_t> lxOffsets) const = 0;

  Operation *getOperation() const { return op; }
  const ::spyre::Arch &getArch() const { return arch; }

protected:
  OpPlan(Operation *op, const ::spyre::Arch &arch) : op(op), arch(arch) {}
  Operation *op;
  ::spyre::Arch arch;
};

/// The overrides every kind of plan (GenericPlan, MatmulPlan, FusedPlan, ...)
/// declares, written once: a kind's class body says `SPYRE_OPPLAN_OVERRIDES`
/// and its .cpp defines them (RowsByIndexPlan.h defines some for gathers and
/// scatters).
#define SPYRE_OPPLAN_OVERRIDES                                                                  \
  int64_t parallelUnits() const override;                                                      \
  SmallVector<int64_t> chooseTile(int64_t cores, int64_t lxBytes) const override;              \
  LogicalResult verifyTile(ArrayRef<int64_t> tile) const override;                             \
  SmallVector<LxSlot> slots(ArrayRef<int64_t> tile) const override;                            \
  LogicalResult lower(HwEmitter &emitter, int64_t cores, ArrayRef<int64_t> tile,               \
                      ArrayRef<int64_t> lxOffsets) const override;

/// The preamble every schedule pass shares: for every compute op of every
/// kernel of `module` (after checkBuffersFit), its plan for `arch`, given to
/// `fn`. Stops at the first failure (the plan or `fn` has reported it).
LogicalResult forEachPlan(ModuleOp module, const ::spyre::Arch &arch,
                          function_ref<LogicalResult(OpPlan &)> fn);

/// The cores a pass's `cores` option asks for (0: all of the card's), or an
/// error on `module` when the card has fewer.
FailureOr<int64_t> coresToUse(ModuleOp module, const ::spyre::Arch &arch, int64_t cores);

/// The parts of an op's schedule, the attributes of the tiled level.
enum SchedulePart : unsigned {
  kScheduleCores = 1, ///< spyre.cores, set by spyre-divide-work
  kScheduleTile = 2,  ///< spyre.tile, set by spyre-tile
  kScheduleLx = 4,    ///< spyre.lx, set by spyre-plan-memory
};

/// The schedule of an op; parts not read are empty.
struct Schedule {
  int64_t cores = 0;
  ArrayRef<int64_t> tile, lx;
};

/// Reads the `parts` (SchedulePart bits) of the schedule of `plan`'s op and
/// checks each against the plan and the card: cores in [1, the card's],
/// the tile (OpPlan::verifyTile), the LX offsets (checkLx; needs the tile).
/// A missing part is an error naming the passes that set them.
FailureOr<Schedule> readSchedule(const OpPlan &plan, unsigned parts);

/// Why a group just formed by a fusion pass cannot run as one op: the plan's
/// error (captured, not emitted), or `noTile` when no tile of it fits the
/// usable LX; empty when it can.
std::string whyFusedCannotRun(FusedOp fused, const ::spyre::Arch &arch, StringRef noTile);

/// Undoes a fusion: moves the members of `fused` back before it, erases it.
void dissolve(FusedOp fused);

/// Computes an expression of the group's inputs that several members of
/// `fused` compute (a residual sum that a LayerNorm's passes each recompute)
/// in a member of its own before them, whose tile the others read from LX.
/// Returns whether it found any.
bool shareRecomputedExpressions(FusedOp fused);

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_OPPLAN_H
