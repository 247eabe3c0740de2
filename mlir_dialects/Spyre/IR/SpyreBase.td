//===- SpyreBase.td - Spyre dialect definition -------------*- tablegen -*-===//
//
// The dialect itself and the base classes of its ops, types and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_BASE_TD
#define SPYRE_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Spyre_Dialect : Dialect {
  let name = "spyre";
  let cppNamespace = "::mlir::spyre";
  let summary = "Kernels for the IBM Spyre AI accelerator";
  let description = [{
    The `spyre` dialect (version 1) describes the work of a model compiled for
    the Spyre card at the **kernel level**: one op per kernel that Inductor's
    scheduler produced, or per op inside a fused kernel, on whole buffers with
    explicit shapes (static or dynamic), element types, layouts and memory
    spaces.

    Kernels are `spyre.kernel` functions whose arguments are buffers and index
    values (the sizes of dynamic dimensions); the host (the Inductor backend's
    runtime) binds buffers to a kernel's program and runs it.

    Computation inside a kernel is one of:
    - `spyre.matmul` / `spyre.batch_matmul` for the matrix unit;
    - `spyre.generic` for every elementwise or reduction computation, with one
      affine indexing map per operand and a body of `arith`/`math` ops;
    - data movement: `spyre.copy`, `spyre.permute`, `spyre.broadcast`,
      `spyre.slice`, `spyre.concat`, `spyre.gather`, `spyre.scatter`,
      `spyre.fill` and `spyre.constant`.

    All ops except `spyre.constant` and `spyre.alloc` work in destination
    style: they read their `ins` buffers and write their `outs` buffers, and
    declare exactly those memory effects (`spyre.scatter` also reads its
    `outs` table: the rows it does not write keep their values).
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasCanonicalizer = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::affine::AffineDialect"
  ];
  let extraClassDeclaration = [{
    /// Version of the dialect's IR, bumped on incompatible changes.
    static constexpr int kVersion = 1;

  private:
    void registerAttributes();
    void registerTypes();
  public:
  }];
}

class Spyre_Op<string mnemonic, list<Trait> traits = []>
    : Op<Spyre_Dialect, mnemonic, traits>;

class Spyre_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Spyre_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class Spyre_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Spyre_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

#endif // SPYRE_BASE_TD
