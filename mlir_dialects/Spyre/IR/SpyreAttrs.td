//===- SpyreAttrs.td - Spyre attributes and enums ----------*- tablegen -*-===//

#ifndef SPYRE_ATTRS_TD
#define SPYRE_ATTRS_TD

include "Spyre/IR/SpyreBase.td"
include "Spyre/IR/SpyreEnums.td"
include "mlir/Dialect/Utils/StructuredOpsUtils.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Spyre_MemorySpaceAttr
    : EnumAttr<Spyre_Dialect, Spyre_MemorySpace, "memory_space"> {
  let assemblyFormat = "`<` $value `>`";
  let summary = "Memory space: device memory (`dram`) or a core's scratchpad (`lx`)";
}

def Spyre_CombinerAttr : EnumAttr<Spyre_Dialect, Spyre_CombinerKind, "combiner"> {
  let assemblyFormat = "`<` $value `>`";
  let summary = "Reduction kind of one yielded value";
  let description = [{
    `none` stores the yielded value (elementwise); `sum`, `prod`, `max`, `min`,
    `any` and `all` reduce it over the reduction loops into one output;
    `argmax`/`argmin` write the `i32` position of the first extreme value in
    the row-major order of the reduction loops; `welford` writes three outputs
    (mean, M2, weight) as Inductor's `welford_reduce` does.
  }];
}

def Spyre_CombinerArrayAttr
    : TypedArrayAttrBase<Spyre_CombinerAttr, "array of combiner kinds">;

def Spyre_IteratorTypeAttr
    : EnumAttr<Spyre_Dialect, IteratorType, "iterator"> {
  let assemblyFormat = "`<` $value `>`";
  let summary = "Loop kind of one dimension of a `spyre.generic` domain";
}

def Spyre_IteratorTypeArrayAttr
    : TypedArrayAttrBase<Spyre_IteratorTypeAttr, "array of iterator types">;

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

def Spyre_LayoutAttr : Spyre_Attr<"Layout", "layout"> {
  let summary = "Storage order of a buffer, optionally in sticks";
  let description = [{
    `order` lists the buffer's logical dimensions from the outermost stored
    dimension to the innermost one: `[0, 1]` is row-major, `[1, 0]` stores a
    matrix transposed.

    With `stick = N`, the innermost stored dimension is split into sticks of
    N elements, padded up to a whole stick, and the stick index becomes the
    outermost stored dimension. This is the device-memory layout of the card:
    a (1024, 256) f16 buffer with `#spyre.layout<[0, 1], stick = 64>` is stored
    as (4, 1024, 64). N is the stick size of the architecture description
    divided by the element size; the IR records it so that it is
    self-describing.

    Example:
    ```mlir
    !spyre.buffer<1024x256xf16, #spyre.layout<[0, 1], stick = 64>>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "stored dimension order">:$order,
    DefaultValuedParameter<"int64_t", "0", "elements per stick, 0 if dense">:$stick
  );
  let assemblyFormat = "`<` `[` $order `]` (`,` `stick` `=` $stick^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The row-major, stick-less layout of a buffer of `rank` dimensions.
    static LayoutAttr getRowMajor(::mlir::MLIRContext *context, int64_t rank);
    bool isRowMajor() const;
  }];
}

//===----------------------------------------------------------------------===//
// Hardware level
//===----------------------------------------------------------------------===//

def Spyre_RefAttr : Spyre_Attr<"Ref", "ref"> {
  let summary = "A memory operand of a hardware-level instruction";
  let description = [{
    Where an instruction reads or writes: `lx` (the core's scratchpad) or a
    device buffer named by its `spyre.hw.buffer` symbol; the element type on
    the device (`dl16`, `f32`, `i32`, `i8`, `u8`); a byte offset; up to three
    byte strides (their meaning depends on the instruction, docs/isa.md); the
    bytes added per iteration of the enclosing hardware loops, innermost
    first; and, for `spyre.hw.ring`, the destination core. Zero fields are
    omitted when printed.

    Examples:
    ```mlir
    #spyre.ref<lx, dl16>
    #spyre.ref<@a, dl16, offset = 4096, strides = [2048, 0, 0]>
    #spyre.ref<lx, f32, strides = [512, 4, 0], inc = [512, 0, 0]>
    ```
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$buffer, // null for LX
    "uint8_t":$dtype,                    // isa::DType
    "int64_t":$offset,
    ArrayRefParameter<"int64_t">:$strides,
    ArrayRefParameter<"int64_t">:$inc,
    "int64_t":$core
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isLx() const { return !getBuffer(); }
  }];
}

#endif // SPYRE_ATTRS_TD
