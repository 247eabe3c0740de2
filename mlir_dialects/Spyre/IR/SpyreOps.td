//===- SpyreOps.td - Spyre kernel-level ops ----------------*- tablegen -*-===//

#ifndef SPYRE_OPS_TD
#define SPYRE_OPS_TD

include "Spyre/IR/SpyreTypes.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Buffer operands are constrained by predicate rather than by the TypeDef so
// that the assembly format prints them in full (`!spyre.buffer<...>`), not in
// the stripped form ODS uses for a known type class.
def Spyre_Buffer : Type<CPred<"::llvm::isa<::mlir::spyre::BufferType>($_self)">,
                        "Spyre buffer">;

defvar Spyre_In = Arg<Spyre_Buffer, "read", [MemRead]>;
defvar Spyre_Out = Arg<Spyre_Buffer, "written", [MemWrite]>;
defvar Spyre_VariadicIn = Arg<Variadic<Spyre_Buffer>, "read", [MemRead]>;
defvar Spyre_VariadicOut = Arg<Variadic<Spyre_Buffer>, "written", [MemWrite]>;

//===----------------------------------------------------------------------===//
// Kernels and the host side
//===----------------------------------------------------------------------===//

def Spyre_KernelOp : Spyre_Op<"kernel", [
    AutomaticAllocationScope, FunctionOpInterface, IsolatedFromAbove
  ]> {
  let summary = "A kernel: one unit of work launched on the card";
  let description = [{
    A kernel takes buffers and `index` values (sizes of dynamic dimensions)
    and returns nothing: it writes its results into argument buffers. Its body
    is one block of kernel-level ops ending in `spyre.return`.

    Example:
    ```mlir
    spyre.kernel @relu(%x: !spyre.buffer<?x64xf16>, %y: !spyre.buffer<?x64xf16>, %n: index) {
      spyre.generic domain [%n, 64] {indexing_maps = [#id, #id],
          iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
          ins(%x : !spyre.buffer<?x64xf16>) outs(%y : !spyre.buffer<?x64xf16>) {
      ^bb0(%v: f16):
        %zero = arith.constant 0.0 : f16
        %r = arith.maximumf %v, %zero : f16
        spyre.yield %r : f16
      }
      spyre.return
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<FunctionType>:$function_type,
    OptionalAttr<DictArrayAttr>:$arg_attrs,
    OptionalAttr<DictArrayAttr>:$res_attrs
  );
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                "::mlir::FunctionType":$type)>];
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    ::mlir::Region *getCallableRegion() { return &getBody(); }
  }];
}

def Spyre_ReturnOp : Spyre_Op<"return", [
    Pure, HasParent<"KernelOp">, ReturnLike, Terminator
  ]> {
  let summary = "Ends a kernel";
  let assemblyFormat = "attr-dict";
}

def Spyre_AllocOp : Spyre_Op<"alloc"> {
  let summary = "Allocates a buffer";
  let description = [{
    Allocates a buffer of the result type; one `index` operand per dynamic
    dimension, in order: a temporary of a kernel.

    Example:
    ```mlir
    %t = spyre.alloc(%n) : !spyre.buffer<?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes);
  let results = (outs Res<Spyre_Buffer, "", [MemAlloc<DefaultResource>]>:$result);
  let assemblyFormat = "`(` $dynamic_sizes `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

def Spyre_DimOp : Spyre_Op<"dim", [Pure]> {
  let summary = "The size of one dimension of a buffer";
  let description = [{
    Folds to a constant when the dimension is static.

    Example:
    ```mlir
    %n = spyre.dim %b[0] : !spyre.buffer<?x64xf16>
    ```
  }];
  let arguments = (ins Spyre_Buffer:$source, I64Attr:$index);
  let results = (outs Index:$result);
  let assemblyFormat = "$source `[` $index `]` attr-dict `:` type($source)";
  let builders = [OpBuilder<(ins "::mlir::Value":$source, "int64_t":$index), [{
    build($_builder, $_state, $_builder.getIndexType(), source,
          $_builder.getI64IntegerAttr(index));
  }]>];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Spyre_DeallocOp : Spyre_Op<"dealloc"> {
  let summary = "Frees a buffer made by `spyre.alloc`";
  let arguments = (ins Arg<Spyre_Buffer, "", [MemFree]>:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
}

//===----------------------------------------------------------------------===//
// Matrix unit
//===----------------------------------------------------------------------===//

// Effects are declared in C++: `init` is read only when accumulating.
class Spyre_MatmulBase<string mnemonic, int rank> : Spyre_Op<mnemonic, [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>
  ]> {
  let arguments = (ins
    Spyre_Buffer:$lhs, Spyre_Buffer:$rhs, Spyre_Buffer:$init,
    UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs, UnitAttr:$accumulate
  );
  let assemblyFormat = [{
    (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    (`accumulate` $accumulate^)?
    `ins` `(` $lhs `,` $rhs `:` type($lhs) `,` type($rhs) `)`
    `outs` `(` $init `:` type($init) `)` attr-dict
  }];
  let hasVerifier = 1;
  code extraBaseClassDeclaration = [{
    static constexpr int64_t kRank = }] # rank # [{;
  }];
  let extraClassDeclaration = extraBaseClassDeclaration;
}

def Spyre_MatmulOp : Spyre_MatmulBase<"matmul", 2> {
  let summary = "Matrix multiplication on the matrix unit";
  let description = [{
    `init = op(lhs) x op(rhs)` (plus `init` with `accumulate`), where `op`
    transposes its operand when `transpose_lhs` / `transpose_rhs` is set.
    Products of 16-bit inputs are accumulated in f32; f32 inputs are
    converted to the card's 16-bit format first.

    Example:
    ```mlir
    spyre.matmul transpose_rhs ins(%a, %b : !spyre.buffer<128x64xf16>, !spyre.buffer<32x64xf16>)
                 outs(%c : !spyre.buffer<128x32xf32>)
    ```
  }];
}

def Spyre_BatchMatmulOp : Spyre_MatmulBase<"batch_matmul", 3> {
  let summary = "Batched matrix multiplication on the matrix unit";
  let description = [{
    `spyre.matmul` over the leading batch dimension, which all three operands
    share.

    Example:
    ```mlir
    spyre.batch_matmul ins(%a, %b : !spyre.buffer<8x128x64xf16>, !spyre.buffer<8x64x32xf16>)
                       outs(%c : !spyre.buffer<8x128x32xf16>)
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise and reductions
//===----------------------------------------------------------------------===//

def Spyre_GenericOp : Spyre_Op<"generic", [
    AttrSizedOperandSegments, IsolatedFromAbove, SingleBlock
  ]> {
  let summary = "Elementwise or reduction loop nest over a box domain";
  let description = [{
    Iterates over the box `domain` (one size per loop, static or an `index`
    operand). At every point it reads one element of each input at the index
    given by that input's indexing map, runs the body on these elements and
    yields one value per combiner. Each yielded value becomes one output
    (three for `welford`) written at the index of that output's map.

    Indexing maps take one dimension per loop and one symbol per `symbols`
    operand; they may be any affine function (strides, offsets, `floordiv`,
    `mod`, constants for broadcasting), as Inductor's index expressions are.
    The body is a block of `arith`/`math` ops with one argument per input and
    ends with `spyre.yield`; `spyre.index_expr` reads the loop position. The
    body is isolated from above: it computes from its arguments and constants
    only, so that passes can move and clone it freely.

    `combiners` defaults to `none` for every yielded value. Loops marked
    `reduction` require every combiner to reduce, and the maps of reduced
    outputs may not use reduction loops. Reductions start from the
    combiner's identity; the initial content of outputs is never read.

    Example (row sums of a 64x?xf16 buffer, into f32):
    ```mlir
    spyre.generic domain [64, %n] {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
        combiners = [#spyre.combiner<sum>]}
        ins(%x : !spyre.buffer<64x?xf16>) outs(%s : !spyre.buffer<64xf32>) {
    ^bb0(%v: f16):
      %w = arith.extf %v : f16 to f32
      spyre.yield %w : f32
    }
    ```
  }];
  let arguments = (ins
    Variadic<Index>:$domain_sizes,
    DenseI64ArrayAttr:$static_domain,
    Variadic<Index>:$symbols,
    Spyre_VariadicIn:$inputs,
    Spyre_VariadicOut:$outputs,
    AffineMapArrayAttr:$indexing_maps,
    Spyre_IteratorTypeArrayAttr:$iterator_types,
    OptionalAttr<Spyre_CombinerArrayAttr>:$combiners
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `domain` custom<DynamicIndexList>($domain_sizes, $static_domain)
    (`symbols` `(` $symbols^ `)`)? attr-dict
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)` $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizeMethod = 1;
  let extraClassDeclaration = [{
    int64_t getNumLoops() { return getStaticDomain().size(); }
    /// The combiner of every yielded value, `none` where none is given.
    ::llvm::SmallVector<::mlir::spyre::CombinerKind> getCombinerKinds();
    /// The loops marked `reduction`.
    ::llvm::SmallVector<unsigned> getReductionLoops();
    /// Iterates, as loop j, what was loop `order[j]` (a permutation of the
    /// loops of a static domain): the domain, the maps, the iterator types
    /// and the body's index_exprs follow, so every point computes the same.
    void permuteLoops(::llvm::ArrayRef<unsigned> order);
    ::mlir::AffineMap getInputMap(unsigned i) {
      return ::llvm::cast<::mlir::AffineMapAttr>(getIndexingMaps()[i]).getValue();
    }
    ::mlir::AffineMap getOutputMap(unsigned i) {
      return getInputMap(getInputs().size() + i);
    }
    /// How many outputs one yielded value with this combiner writes.
    static unsigned getNumOutputsOf(::mlir::spyre::CombinerKind kind);
  }];
}

def Spyre_YieldOp : Spyre_Op<"yield", [
    Pure, HasParent<"GenericOp">, ReturnLike, Terminator
  ]> {
  let summary = "Yields the values of one point of a `spyre.generic`";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Spyre_IndexExprOp : Spyre_Op<"index_expr", [
    Pure, HasParent<"GenericOp">
  ]> {
  let summary = "An affine function of the loop position, as an integer";
  let description = [{
    Inside a `spyre.generic` body: evaluates `map` (dimensions are the loops,
    symbols the generic's `symbols`) at the current point. This is Inductor's
    `ops.index_expr` (iota, causal masks, position ids).

    Example:
    ```mlir
    %d = spyre.index_expr affine_map<(d0, d1) -> (d0 - d1)> : i32
    ```
  }];
  let arguments = (ins AffineMapAttr:$map);
  let results = (outs AnySignlessIntegerOrIndex:$result);
  let assemblyFormat = "$map attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Spyre_FusedOp : Spyre_Op<"fused", [
    HasParent<"KernelOp">, NoRegionArguments, NoTerminator, SingleBlock
  ]> {
  let summary = "Ops that run together, one tile at a time";
  let description = [{
    Either `spyre.generic` ops over the same domain, in order, or a
    `spyre.matmul` (or two sharing their lhs) followed by one
    `spyre.generic`, its epilogue, or two `spyre.matmul` ops sharing their
    lhs and nothing else; with the `spyre.alloc` temporaries only they use.

    Generics: each core loads a tile of whole rows once and runs every op on
    it in turn; temporaries (row statistics, intermediate tiles) stay in LX
    and never reach device memory. Made by `spyre-fuse-rows` (softmax,
    layernorm and RMSNorm are such groups).

    A matmul and its epilogue: the generic reads the product (a temporary of
    the group) and computes the output elementwise (bias, activation,
    residual, scale, cast); it runs on each output tile in LX after the
    tile's last K step, before the store, so the product never reaches
    device memory. Two products of the same lhs whose only reader is the
    epilogue (a gated MLP's `silu(x @ Wg) * (x @ Wu)`) are computed side by
    side on each output tile, the lhs panel loaded once for both, and the
    epilogue combines them. Two products of the same lhs and shapes without
    an epilogue (a layer's key and value projections) are computed side by
    side the same way, each tile storing both to their outputs. Made by
    `spyre-fuse-epilogue`.
    Example:
    ```mlir
    spyre.fused {
      %mx = spyre.alloc() : !spyre.buffer<64xf32>
      spyre.generic domain [64, 1000] {...combiners = [#spyre.combiner<max>]}
          ins(%x : ...) outs(%mx : ...) {...}
      spyre.generic domain [64, 1000] {...} ins(%x, %mx : ...) outs(%y : ...) {...}
    }
    spyre.fused {
      %p = spyre.alloc() : !spyre.buffer<512x4096xf16>
      spyre.matmul ins(%a, %w : ...) outs(%p : ...)
      spyre.generic domain [512, 4096] {...} ins(%p, %bias : ...) outs(%y : ...) {...}
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Spyre_CopyOp : Spyre_Op<"copy"> {
  let summary = "Copies a buffer, changing its layout or memory space";
  let description = [{
    Both buffers have the same shape and element type; layouts and memory
    spaces may differ, which makes this the op for relayout and for moving
    data between device memory and LX.

    Example:
    ```mlir
    spyre.copy ins(%a : !spyre.buffer<64x64xf16>)
               outs(%b : !spyre.buffer<64x64xf16, #spyre.layout<[1, 0]>, lx>)
    ```
  }];
  let arguments = (ins Spyre_In:$source, Spyre_Out:$target);
  let assemblyFormat = [{
    `ins` `(` $source `:` type($source) `)` `outs` `(` $target `:` type($target) `)` attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

def Spyre_PermuteOp : Spyre_Op<"permute"> {
  let summary = "Permutes the dimensions of a buffer";
  let description = [{
    `target[i0, ..., in] = source[j...]` where dimension `k` of the target is
    dimension `permutation[k]` of the source.

    Example:
    ```mlir
    spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>)
                  permutation = [1, 0]
    ```
  }];
  let arguments = (ins Spyre_In:$source, Spyre_Out:$target,
                       DenseI64ArrayAttr:$permutation);
  let assemblyFormat = [{
    `ins` `(` $source `:` type($source) `)` `outs` `(` $target `:` type($target) `)`
    `permutation` `=` $permutation attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

def Spyre_BroadcastOp : Spyre_Op<"broadcast"> {
  let summary = "Broadcasts a buffer along new dimensions";
  let description = [{
    `dimensions` lists the target dimensions that the source does not have;
    the other target dimensions equal the source's, in order.

    Example:
    ```mlir
    spyre.broadcast ins(%b : !spyre.buffer<64xf16>) outs(%o : !spyre.buffer<16x64xf16>)
                    dimensions = [0]
    ```
  }];
  let arguments = (ins Spyre_In:$source, Spyre_Out:$target,
                       DenseI64ArrayAttr:$dimensions);
  let assemblyFormat = [{
    `ins` `(` $source `:` type($source) `)` `outs` `(` $target `:` type($target) `)`
    `dimensions` `=` $dimensions attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

def Spyre_SliceOp : Spyre_Op<"slice"> {
  let summary = "Copies a strided window of a buffer";
  let description = [{
    `target[i] = source[offsets + i * strides]`; the window's sizes are the
    target's shape. Offsets may be `index` values; strides are positive
    constants.

    Example:
    ```mlir
    spyre.slice ins(%a : !spyre.buffer<16x64xf16>) outs(%b : !spyre.buffer<4x32xf16>)
                offsets [%o, 0] strides [1, 2]
    ```
  }];
  let arguments = (ins Spyre_In:$source, Spyre_Out:$target,
                       Variadic<Index>:$offsets,
                       DenseI64ArrayAttr:$static_offsets,
                       DenseI64ArrayAttr:$strides);
  let assemblyFormat = [{
    `ins` `(` $source `:` type($source) `)` `outs` `(` $target `:` type($target) `)`
    `offsets` custom<DynamicIndexList>($offsets, $static_offsets)
    `strides` $strides attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

def Spyre_ConcatOp : Spyre_Op<"concat"> {
  let summary = "Concatenates buffers along one dimension";
  let description = [{
    Example:
    ```mlir
    spyre.concat ins(%a, %b : !spyre.buffer<4x8xf16>, !spyre.buffer<4x24xf16>)
                 outs(%c : !spyre.buffer<4x32xf16>) dim = 1
    ```
  }];
  let arguments = (ins Spyre_VariadicIn:$inputs, Spyre_Out:$target, I64Attr:$dim);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $target `:` type($target) `)`
    `dim` `=` $dim attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

def Spyre_GatherOp : Spyre_Op<"gather"> {
  let summary = "Gathers slices of a table by an integer index buffer (embedding)";
  let description = [{
    With `axis = a`, the target's shape is `table[:a] ++ indices ++
    table[a+1:]` and
    `target[p..., q..., r...] = table[p..., indices[q...], r...]`.
    Indices are `i32` (or `i8`); an index outside `[0, table.shape[a])` is an
    error reported at run time, never a read outside the table.

    Example (embedding lookup):
    ```mlir
    spyre.gather ins(%table, %ids : !spyre.buffer<50257x768xf16>, !spyre.buffer<?x128xi32>)
                 outs(%out : !spyre.buffer<?x128x768xf16>) axis = 0
    ```
  }];
  let arguments = (ins Spyre_In:$table, Spyre_In:$indices, Spyre_Out:$target,
                       I64Attr:$axis);
  let assemblyFormat = [{
    `ins` `(` $table `,` $indices `:` type($table) `,` type($indices) `)`
    `outs` `(` $target `:` type($target) `)` `axis` `=` $axis attr-dict
  }];
  let hasVerifier = 1;
}

def Spyre_ScatterOp : Spyre_Op<"scatter"> {
  let summary = "Writes slices of a source into a table at an integer index buffer";
  let description = [{
    The mirror of `spyre.gather`: with `axis = a`, the source's shape is
    `table[:a] ++ indices ++ table[a+1:]` and
    `table[p..., indices[q...], r...] = source[p..., q..., r...]`; slices
    of the table no index names keep their values (the table is read and
    written in place: a KV cache written at a prompt's positions). Of two
    equal indices the later one (in row-major order of `indices`) stays, as
    a sequential loop leaves it. Indices are `i32`; an index outside
    `[0, table.shape[a])` is an error reported at run time, never a write
    outside the table.

    `source_axis = s` reads the source with its index dimensions at `s`
    instead of `a` (the keys of a projection, [positions, heads, dim], into
    a cache of [heads, positions, dim]): its shape is then `table[:a] ++
    table[a+1:]` with `indices`' shape inserted at `s`. `unique_indices`
    says that no index repeats (a prompt's positions): the card may then
    write rows of one outer slice from several cores.

    Example (a key cache written at the positions of a step):
    ```mlir
    spyre.scatter ins(%keys, %pos : !spyre.buffer<4x7x64xf16>, !spyre.buffer<7xi32>)
                  outs(%cache : !spyre.buffer<4x1024x64xf16>) axis = 1
    spyre.scatter ins(%proj, %pos : !spyre.buffer<7x4x64xf16>, !spyre.buffer<7xi32>)
                  outs(%cache : !spyre.buffer<4x1024x64xf16>) axis = 1
                  {source_axis = 0 : i64, unique_indices}
    ```
  }];
  let arguments = (ins Spyre_In:$source, Spyre_In:$indices,
                       Arg<Spyre_Buffer, "read and written", [MemRead, MemWrite]>:$table,
                       I64Attr:$axis, OptionalAttr<I64Attr>:$source_axis,
                       UnitAttr:$unique_indices);
  let assemblyFormat = [{
    `ins` `(` $source `,` $indices `:` type($source) `,` type($indices) `)`
    `outs` `(` $table `:` type($table) `)` `axis` `=` $axis attr-dict
  }];
  let hasVerifier = 1;
}

def Spyre_AttentionOp : Spyre_Op<"attention"> {
  let summary = "Scaled dot-product attention, scores kept on the card's cores";
  let description = [{
    For every head `h` and query row `i`:
    `out[h, i] = softmax_j(scale * q[h, i] . k[g, j] + mask[h', i', j]) v[g, j]`,
    with `g = h / (heads / kv_heads)` (grouped-query attention: consecutive
    query heads share a key/value head) and `h' = h / (heads / mask_batch)`;
    a mask of one row (`i' = 0`) applies to every query row, else `i' = i`.
    With `causal`, key `j` is masked for query `i` when `j > i` (aligned at
    the top left, as PyTorch's `is_causal`). A row whose every score is
    masked gives zeros. Scores and probabilities never reach device memory:
    the softmax is computed online over blocks of keys.

    Shapes: `q` heads x Lq x D, `k` kv_heads x Lk x D, `v` kv_heads x Lk x
    Dv, `out` heads x Lq x Dv, `mask` mask_batch x (1 or Lq) x Lk (added to
    the scaled scores; -inf masks). `out` may instead be batch x Lq x
    heads / batch x Dv, `out[b, i, h']` holding head `b * heads / batch + h'`:
    each query row with its heads, as a model that merges them reads it.

    `q`, `k` and `v` may instead be 1-D buffers read through a strided view,
    `query_layout` (`key_layout`, `value_layout`) = `[heads, length, head
    size, head stride, row stride]` in elements, a row's elements being
    consecutive: element `[h, i, c]` is at `h * head stride + i * row stride
    + c`. A projection's heads, split from its rows without a copy (GPT-2's
    packed q, k and v: head stride = head size, row stride = 3 x the model's
    width), are read so. Heads in batches whose stride is not a whole number
    of heads (a batch of such projections) take two more entries, `[...,
    heads per batch, batch stride]`: head `h` starts at `(h / heads per
    batch) * batch stride + (h % heads per batch) * head stride`. The buffer
    holds the view's span.

    Example:
    ```mlir
    spyre.attention ins(%q, %k, %v : !spyre.buffer<12x512x64xf16>,
                        !spyre.buffer<12x512x64xf16>, !spyre.buffer<12x512x64xf16>)
                    outs(%o : !spyre.buffer<12x512x64xf16>) scale = 0.125 causal
    ```
  }];
  let arguments = (ins Spyre_In:$query, Spyre_In:$key, Spyre_In:$value,
                       Arg<Optional<Spyre_Buffer>, "read", [MemRead]>:$mask,
                       Spyre_Out:$target, F64Attr:$scale, UnitAttr:$causal,
                       OptionalAttr<DenseI64ArrayAttr>:$query_layout,
                       OptionalAttr<DenseI64ArrayAttr>:$key_layout,
                       OptionalAttr<DenseI64ArrayAttr>:$value_layout);
  let extraClassDeclaration = [{
    /// Query (0), key (1) or value (2) as heads x length x head size, with
    /// the element strides between its heads and between its rows:
    /// row-major for a rank-3 buffer, as its layout says for a 1-D one.
    struct View {
      ::llvm::SmallVector<int64_t, 3> shape;
      int64_t headStride, rowStride;
      int64_t headsPerBatch, batchStride;
      /// The element offset of head `h`'s first row.
      int64_t headOffset(int64_t h) const {
        return h / headsPerBatch * batchStride + h % headsPerBatch * headStride;
      }
    };
    View getView(unsigned operand);
  }];
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value (`,` $mask^)? `:` type($query) `,` type($key) `,`
    type($value) (`,` type($mask)^)? `)`
    `outs` `(` $target `:` type($target) `)` `scale` `=` $scale (`causal` $causal^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Spyre_Conv2dOp : Spyre_Op<"conv2d", [AttrSizedOperandSegments]> {
  let summary = "2-D convolution, as products of the input rows in LX";
  let description = [{
    For every image `n`, output channel `o` and output position `(y, x)`:
    `out[n, o, y, x] = bias[o] + sum_{c, i, j} w[o, c, i, j] *
    in[n, g * C / G + c, y * sh + i * dh - ph, x * sw + j * dw - pw]`, reading
    zeros outside the input (`stride = [sh, sw]`, 1 when absent, `padding =
    [ph, pw]`, `dilation = [dh, dw]`), with `g = o / (Co / G)` for `groups =
    G`, as PyTorch's `conv2d`. `padding = [ph, pw, ph', pw']` pads ph' rows
    below and pw' columns right of the input instead of ph and pw (TF's
    "same" padding of an even input with stride 2: `[0, 0, 1, 1]`).
    A grouped convolution runs as the dense one of a block-diagonal weight,
    built in LX. An optional `scale` (one value per output channel)
    multiplies each channel's sums before the bias is added, as an inference
    BatchNorm folded into the convolution does; an optional `residual`
    (shaped as the output) is added to the result, and with `relu` negative
    results become zero: `relu(scale * conv + bias + residual)` leaves the
    cores once. With `relu_max` (and `relu`) results above it become it as
    well: ReLU6, as MobileNets apply it, is `relu relu_max = 6.0`. No
    patch matrix (im2col) reaches device memory: the card multiplies each
    tap's weights with a shifted view of the input rows held in LX.

    Shapes: `in` N x C x H x W, `w` Co x C / G x KH x KW, `bias` and `scale`
    Co (of the input's element type, or f32), `out` N
    x Co x Ho x Wo with Ho = (H + ph + ph' - dh (KH - 1) - 1) / sh + 1
    (rounded down), Wo likewise.

    Example:
    ```mlir
    spyre.conv2d ins(%x, %w : !spyre.buffer<1x64x56x56xf16>, !spyre.buffer<64x64x3x3xf16>)
                 outs(%y : !spyre.buffer<1x64x56x56xf16>) padding = [1, 1] dilation = [1, 1]
    ```
  }];
  let arguments = (ins Spyre_In:$input, Spyre_In:$weight,
                       Arg<Optional<Spyre_Buffer>, "read", [MemRead]>:$bias,
                       Arg<Optional<Spyre_Buffer>, "read", [MemRead]>:$residual,
                       Arg<Optional<Spyre_Buffer>, "read", [MemRead]>:$scale,
                       Spyre_Out:$target, OptionalAttr<DenseI64ArrayAttr>:$stride,
                       DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups, UnitAttr:$relu,
                       OptionalAttr<F64Attr>:$relu_max);
  let assemblyFormat = [{
    `ins` `(` $input `,` $weight (`,` $bias^)? `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `)`
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    (`scale` `(` $scale^ `:` type($scale) `)`)?
    `outs` `(` $target `:` type($target) `)` (`stride` `=` $stride^)? `padding` `=` $padding
    `dilation` `=` $dilation
    (`groups` `=` $groups^)? (`relu` $relu^)? (`relu_max` `=` $relu_max^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The stride, [1, 1] when the op has none.
    std::array<int64_t, 2> getStrides() {
      if (auto stride = getStride(); stride && stride->size() == 2)
        return {(*stride)[0], (*stride)[1]};
      return {1, 1};
    }
  }];
}

def Spyre_FillOp : Spyre_Op<"fill"> {
  let summary = "Fills a buffer with one value";
  let description = [{
    Example:
    ```mlir
    spyre.fill 0.0 : f16 outs(%b : !spyre.buffer<?x64xf16>)
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value, Spyre_Out:$target);
  let assemblyFormat = "$value `outs` `(` $target `:` type($target) `)` attr-dict";
  let hasVerifier = 1;
}

def Spyre_ConstantOp : Spyre_Op<"constant", [ConstantLike, Pure]> {
  let summary = "A read-only buffer of constant data";
  let description = [{
    The data goes into the program's constant section. The buffer must not be
    written.

    Example:
    ```mlir
    %c = spyre.constant dense<[1.0, 2.0]> : tensor<2xf16> -> !spyre.buffer<2xf16>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Spyre_Buffer:$result);
  let assemblyFormat = "$value attr-dict `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

include "Spyre/IR/SpyreHwOps.td"

#endif // SPYRE_OPS_TD
