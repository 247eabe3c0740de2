//===- SpyreHwOps.td - hardware-level Spyre ops ------------*- tablegen -*-===//
//
// The hardware level: per-core programs one-to-one with the instruction set
// of docs/isa.md. `spyre-translate --spyre-hw-to-binary` writes them as a
// program binary.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_HW_OPS_TD
#define SPYRE_HW_OPS_TD

include "Spyre/IR/SpyreTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

// Operands are constrained by predicate rather than by the AttrDef so that
// assembly formats print them in full (`#spyre.ref<...>`).
def Spyre_Ref : Attr<CPred<"::llvm::isa<::mlir::spyre::RefAttr>($_self)">,
                     "memory operand (#spyre.ref)"> {
  let storageType = "::mlir::Attribute";
  let returnType = "::mlir::spyre::RefAttr";
  let convertFromStorage = "::llvm::cast<::mlir::spyre::RefAttr>($_self)";
}

def Spyre_HwProgramOp : Spyre_Op<"hw.program", [
    IsolatedFromAbove, NoRegionArguments, NoTerminator, SingleBlock, Symbol,
    SymbolTable
  ]> {
  let summary = "A program for the card: buffers and one stream per core";
  let description = [{
    Holds `spyre.hw.buffer` declarations and `spyre.hw.core` streams, and
    becomes one program binary (docs/binary-format.md).

    Example:
    ```mlir
    spyre.hw.program @scale num_cores = 1 {
      spyre.hw.buffer @x input : !spyre.buffer<16xf32>
      spyre.hw.buffer @y output : !spyre.buffer<16xf32>
      spyre.hw.core 0 {
        spyre.hw.dma #spyre.ref<lx, f32>, #spyre.ref<@x, f32> row 64 x [1, 1, 1] {signal_sem = 0 : i64}
        ...
      }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$num_cores);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `num_cores` `=` $num_cores attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Spyre_HwBufferOp : Spyre_Op<"hw.buffer", [
    Symbol, HasParent<"HwProgramOp">
  ]> {
  let summary = "A device buffer of a program";
  let description = [{
    `kind` is `input`, `output`, `inout`, `scratch` or `constant`
    (constants carry `value`). The buffer type gives the shape and the
    element type: f16 and bf16 live on the device as DLFloat16, i1 as u8.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Spyre_HwBufferKind:$kind,
                       TypeAttrOf<Spyre_BufferType>:$type,
                       OptionalAttr<ElementsAttr>:$value);
  let assemblyFormat = "$sym_name $kind `:` $type (`=` $value^)? attr-dict";
  let hasVerifier = 1;
}

def Spyre_HwCoreOp : Spyre_Op<"hw.core", [
    HasParent<"HwProgramOp">, NoRegionArguments, NoTerminator, SingleBlock
  ]> {
  let summary = "The instruction stream of one core";
  let arguments = (ins I64Attr:$core);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$core attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Spyre_HwLoopOp : Spyre_Op<"hw.loop", [NoRegionArguments, NoTerminator, SingleBlock]> {
  let summary = "A hardware loop";
  let description = [{
    Runs its body `trips` times; operands advance by their `inc` per
    iteration. Loops nest at most three deep.
  }];
  let arguments = (ins I64Attr:$trips);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$trips attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Spyre_HwBarrierOp : Spyre_Op<"hw.barrier"> {
  let summary = "Drain this core, then meet every core of the program";
  let assemblyFormat = "attr-dict";
}

def Spyre_HwKernelOp : Spyre_Op<"hw.kernel"> {
  let summary = "Counters from here on belong to kernel `id`";
  let arguments = (ins I64Attr:$id);
  let assemblyFormat = "$id attr-dict";
}

/// Engine instructions: their operands plus the synchronisation of
/// docs/isa.md: start once sems[wait_sem] >= wait_count + sum(wait_inc * iv),
/// then sems[signal_sem] += 1.
class Spyre_HwEngineOp<string mnemonic, dag operands, string format>
    : Spyre_Op<"hw." # mnemonic> {
  let arguments = !con(operands, (ins
    OptionalAttr<I64Attr>:$wait_sem,
    DefaultValuedAttr<I64Attr, "0">:$wait_count,
    OptionalAttr<DenseI64ArrayAttr>:$wait_inc,
    OptionalAttr<I64Attr>:$signal_sem));
  let assemblyFormat = format # " attr-dict";
  let hasVerifier = 1;
}

def Spyre_HwDmaOp : Spyre_HwEngineOp<"dma",
    (ins Spyre_Ref:$dst, Spyre_Ref:$src, I64Attr:$row_bytes,
         DenseI64ArrayAttr:$counts),
    "$dst `,` $src `row` $row_bytes `x` $counts"> {
  let summary = "Strided copy between device memory and LX";
}

def Spyre_HwRingOp : Spyre_HwEngineOp<"ring",
    (ins Spyre_Ref:$dst, Spyre_Ref:$src, I64Attr:$row_bytes,
         DenseI64ArrayAttr:$counts, UnitAttr:$signal_remote),
    "$dst `,` $src `row` $row_bytes `x` $counts"> {
  let summary = "Copy from this core's LX to another core's LX";
}

def Spyre_HwGatherOp : Spyre_HwEngineOp<"gather",
    (ins Spyre_Ref:$dst, Spyre_Ref:$table, Spyre_Ref:$indices,
         I64Attr:$row_bytes, I64Attr:$count, I64Attr:$table_rows),
    "$dst `,` $table `[` $indices `]` `row` $row_bytes `x` $count `of` $table_rows"> {
  let summary = "Rows of a device table selected by i32 indices in LX";
}

def Spyre_HwScatterOp : Spyre_HwEngineOp<"scatter",
    (ins Spyre_Ref:$table, Spyre_Ref:$src, Spyre_Ref:$indices,
         I64Attr:$row_bytes, I64Attr:$count, I64Attr:$table_rows),
    "$table `[` $indices `]` `,` $src `row` $row_bytes `x` $count `of` $table_rows"> {
  let summary = "Rows from LX written to a device table at i32 indices in LX";
  let description = [{
    Row `j` of `src` goes to row `indices[j]` of `table`, in order of `j`: of
    two equal indices, the later row stays. An index outside
    `[0, table_rows)` is a run-time error.
  }];
}

def Spyre_HwMatmulOp : Spyre_HwEngineOp<"matmul",
    (ins Spyre_Ref:$c, Spyre_Ref:$a, Spyre_Ref:$b, I64Attr:$m,
         I64Attr:$k, I64Attr:$n, UnitAttr:$transpose_a, UnitAttr:$transpose_b,
         UnitAttr:$accumulate),
    "$c `=` $a `x` $b `m` $m `k` $k `n` $n"> {
  let summary = "PT matrix multiplication on LX tiles";
}

def Spyre_HwUnaryOp : Spyre_HwEngineOp<"unary",
    (ins StrAttr:$func, Spyre_Ref:$dst, Spyre_Ref:$src, I64Attr:$rows,
         I64Attr:$cols),
    "$func $dst `,` $src ` ` `[` $rows `x` $cols `]`"> {
  let summary = "SFU elementwise function of one operand";
}

def Spyre_HwBinaryOp : Spyre_HwEngineOp<"binary",
    (ins StrAttr:$func, Spyre_Ref:$dst, Spyre_Ref:$lhs,
         OptionalAttr<Spyre_Ref>:$rhs, OptionalAttr<F64Attr>:$imm,
         I64Attr:$rows, I64Attr:$cols),
    "$func $dst `,` $lhs (`,` $rhs^)? (`imm` $imm^)? ` ` `[` $rows `x` $cols `]`"> {
  let summary = "SFU elementwise function of two operands (or one and a scalar)";
}

def Spyre_HwSelectOp : Spyre_HwEngineOp<"select",
    (ins Spyre_Ref:$dst, Spyre_Ref:$cond, Spyre_Ref:$lhs,
         Spyre_Ref:$rhs, I64Attr:$rows, I64Attr:$cols),
    "$dst `,` $cond `,` $lhs `,` $rhs ` ` `[` $rows `x` $cols `]`"> {
  let summary = "SFU select: dst = cond != 0 ? lhs : rhs";
}

def Spyre_HwFillOp : Spyre_HwEngineOp<"fill",
    (ins Spyre_Ref:$dst, F64Attr:$start, DefaultValuedAttr<F64Attr, "0.0">:$row_step,
         DefaultValuedAttr<F64Attr, "0.0">:$col_step, I64Attr:$rows, I64Attr:$cols),
    "$dst `,` $start ` ` `[` $rows `x` $cols `]`"> {
  let summary = "SFU fill with start + row_step * r + col_step * c";
}

def Spyre_HwReduceOp : Spyre_HwEngineOp<"reduce",
    (ins StrAttr:$func, Spyre_Ref:$dst, Spyre_Ref:$src,
         OptionalAttr<Spyre_Ref>:$aux1, OptionalAttr<Spyre_Ref>:$aux2,
         UnitAttr:$accumulate, DefaultValuedAttr<F64Attr, "0.0">:$index_offset,
         I64Attr:$rows, I64Attr:$cols),
    "$func $dst `,` $src ` ` `[` $rows `x` $cols `]`"> {
  let summary = "SFU reduction of each row";
}

#endif // SPYRE_HW_OPS_TD
