//===- SpyreTypes.td - Spyre types -------------------------*- tablegen -*-===//

#ifndef SPYRE_TYPES_TD
#define SPYRE_TYPES_TD

include "Spyre/IR/SpyreAttrs.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Spyre_BufferType : Spyre_Type<"Buffer", "buffer", [ShapedTypeInterface]> {
  let summary = "A multi-dimensional buffer in device memory or LX";
  let description = [{
    A buffer has a ranked shape whose dimensions are static or dynamic (`?`,
    sized at run time by an `index` value), an element type, an optional
    layout (row-major when absent) and a memory space (`dram` when absent).

    Element types are those the card stores: `f16`, `bf16`, `f32`, `i8`, `i32`
    and `i1`. The card has no 64-bit integers: `i64` tensors are narrowed to
    `i32` before they reach this dialect, and the verifier rejects `i64`.

    Examples:
    ```mlir
    !spyre.buffer<1024x?xf16>
    !spyre.buffer<64x64xf32, #spyre.layout<[1, 0]>, lx>
    !spyre.buffer<8x128xbf16, #spyre.layout<[0, 1], stick = 64>, dram>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    OptionalParameter<"::mlir::spyre::LayoutAttr">:$layout,
    DefaultValuedParameter<"::mlir::spyre::MemorySpace",
                           "::mlir::spyre::MemorySpace::dram">:$memorySpace
  );
  let builders = [
    TypeBuilderWithInferredContext<(ins
        "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
        CArg<"::mlir::spyre::LayoutAttr", "{}">:$layout,
        CArg<"::mlir::spyre::MemorySpace", "::mlir::spyre::MemorySpace::dram">:$memorySpace), [{
      return $_get(elementType.getContext(), shape, elementType, layout, memorySpace);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    using ShapedType::Trait<BufferType>::getRank;
    using ShapedType::Trait<BufferType>::getNumElements;
    using ShapedType::Trait<BufferType>::isDynamicDim;
    using ShapedType::Trait<BufferType>::hasStaticShape;
    using ShapedType::Trait<BufferType>::getNumDynamicDims;
    using ShapedType::Trait<BufferType>::getDimSize;
    using ShapedType::Trait<BufferType>::getDynamicDimIndex;

    bool hasRank() const { return true; }
    ::mlir::ShapedType cloneWith(::std::optional<::llvm::ArrayRef<int64_t>> shape,
                                 ::mlir::Type elementType) const;
    /// The layout, with the row-major default made explicit.
    ::mlir::spyre::LayoutAttr getLayoutOrDefault() const;
  }];
}

#endif // SPYRE_TYPES_TD
