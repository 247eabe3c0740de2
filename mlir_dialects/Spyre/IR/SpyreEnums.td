//===- SpyreEnums.td - Spyre enums -------------------------*- tablegen -*-===//
//
// Kept apart from SpyreAttrs.td so that -gen-enum-decls emits only our enums,
// not upstream ones that the attributes include.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_ENUMS_TD
#define SPYRE_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Spyre_MemorySpace : I32EnumAttr<"MemorySpace", "where a buffer lives", [
    I32EnumAttrCase<"dram", 0>,
    I32EnumAttrCase<"lx", 1>
  ]> {
  let cppNamespace = "::mlir::spyre";
  let genSpecializedAttr = 0;
}

def Spyre_CombinerKind : I32EnumAttr<"CombinerKind",
    "how the values a `spyre.generic` yields become its outputs", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"prod", 2>,
    I32EnumAttrCase<"max", 3>,
    I32EnumAttrCase<"min", 4>,
    I32EnumAttrCase<"argmax", 5>,
    I32EnumAttrCase<"argmin", 6>,
    I32EnumAttrCase<"welford", 7>,
    I32EnumAttrCase<"any", 8>,
    I32EnumAttrCase<"all", 9>
  ]> {
  let cppNamespace = "::mlir::spyre";
  let genSpecializedAttr = 0;
}

// The order is the binary format's (docs/binary-format.md, BufferDesc.kind).
def Spyre_HwBufferKind : I32EnumAttr<"HwBufferKind", "role of a device buffer", [
    I32EnumAttrCase<"input", 0>,
    I32EnumAttrCase<"output", 1>,
    I32EnumAttrCase<"inout", 2>,
    I32EnumAttrCase<"scratch", 3>,
    I32EnumAttrCase<"constant", 4>
  ]> {
  let cppNamespace = "::mlir::spyre";
}

#endif // SPYRE_ENUMS_TD
