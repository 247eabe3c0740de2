//===- ProgramBuilder.cpp - write programs for the card -------------------===//

#include "spyre-mlir/Isa/ProgramBuilder.h"

#include <cstring>

namespace spyre {
using namespace isa;

namespace {
Operand toOperand(const OperandSpec &s) {
  Operand o{};
  o.buffer = s.buffer;
  o.core = s.core;
  o.dtype = static_cast<uint8_t>(s.dtype);
  o.offset = s.offset;
  for (int i = 0; i < 3; ++i) {
    o.stride[i] = s.strides[i];
    o.loopInc[i] = s.loopInc[i];
  }
  return o;
}
} // namespace

size_t StreamBuilder::push(Opcode op, uint8_t func, uint16_t flags, const Sync &sync) {
  Instr in{};
  in.opcode = static_cast<uint8_t>(op);
  in.func = func;
  in.flags = flags;
  in.waitSem = sync.waitSem.value_or(kNoSem);
  in.waitCount = sync.waitCount;
  for (int i = 0; i < 3; ++i)
    in.waitInc[i] = sync.waitInc[i];
  in.signalSem = sync.signalSem.value_or(kNoSem);
  stream().instrs.push_back(in);
  return stream().instrs.size() - 1;
}

size_t StreamBuilder::raw(const Instr &instr) {
  stream().instrs.push_back(instr);
  return stream().instrs.size() - 1;
}

size_t StreamBuilder::loop(int64_t trips) {
  size_t i = push(Opcode::loop, 0, 0, {});
  stream().instrs[i].shape[0] = trips;
  return i;
}
size_t StreamBuilder::endLoop() { return push(Opcode::loop_end, 0, 0, {}); }
size_t StreamBuilder::barrier() { return push(Opcode::barrier, 0, 0, {}); }
size_t StreamBuilder::nop() { return push(Opcode::nop, 0, 0, {}); }
size_t StreamBuilder::kernel(int64_t id) {
  size_t i = push(Opcode::kernel, 0, 0, {});
  stream().instrs[i].shape[0] = id;
  return i;
}

size_t StreamBuilder::dma(const OperandSpec &dst, const OperandSpec &src, int64_t rowBytes,
                          std::array<int64_t, 3> counts, const Sync &sync) {
  size_t i = push(Opcode::dma, 0, 0, sync);
  Instr &in = stream().instrs[i];
  in.shape[0] = rowBytes;
  for (int d = 0; d < 3; ++d)
    in.shape[1 + d] = counts[d];
  in.ops[0] = toOperand(dst);
  in.ops[1] = toOperand(src);
  return i;
}

size_t StreamBuilder::ring(const OperandSpec &dst, const OperandSpec &src, int64_t rowBytes,
                           std::array<int64_t, 3> counts, bool signalRemote, const Sync &sync) {
  size_t i = dma(dst, src, rowBytes, counts, sync);
  stream().instrs[i].opcode = static_cast<uint8_t>(Opcode::ring);
  if (signalRemote)
    stream().instrs[i].flags |= kSignalRemote;
  return i;
}

size_t StreamBuilder::gather(const OperandSpec &dst, const OperandSpec &table,
                             const OperandSpec &indices, int64_t rowBytes, int64_t count,
                             int64_t tableRows, const Sync &sync) {
  size_t i = push(Opcode::gather, 0, 0, sync);
  Instr &in = stream().instrs[i];
  in.shape[0] = rowBytes;
  in.shape[1] = count;
  in.shape[2] = tableRows;
  in.ops[0] = toOperand(dst);
  in.ops[1] = toOperand(table);
  in.ops[2] = toOperand(indices);
  return i;
}

size_t StreamBuilder::scatter(const OperandSpec &table, const OperandSpec &src,
                              const OperandSpec &indices, int64_t rowBytes, int64_t count,
                              int64_t tableRows, const Sync &sync) {
  // Destination first, as in every transfer: the table, the rows, the indices.
  size_t i = gather(table, src, indices, rowBytes, count, tableRows, sync);
  stream().instrs[i].opcode = static_cast<uint8_t>(Opcode::scatter);
  return i;
}

size_t StreamBuilder::matmul(const OperandSpec &c, const OperandSpec &a, const OperandSpec &b,
                             int64_t m, int64_t k, int64_t n, bool transposeA, bool transposeB,
                             bool accumulate, const Sync &sync) {
  uint16_t flags = (transposeA ? kTransposeA : 0) | (transposeB ? kTransposeB : 0) |
                   (accumulate ? kAccumulate : 0);
  size_t i = push(Opcode::matmul, 0, flags, sync);
  Instr &in = stream().instrs[i];
  in.shape[0] = m;
  in.shape[1] = k;
  in.shape[2] = n;
  in.ops[0] = toOperand(c);
  in.ops[1] = toOperand(a);
  in.ops[2] = toOperand(b);
  return i;
}

namespace {
void setView(Instr &in, int64_t rows, int64_t cols) {
  in.shape[0] = rows;
  in.shape[1] = cols;
}
} // namespace

size_t StreamBuilder::unary(UnaryFunc f, const OperandSpec &dst, const OperandSpec &src,
                            int64_t rows, int64_t cols, const Sync &sync) {
  size_t i = push(Opcode::unary, static_cast<uint8_t>(f), 0, sync);
  setView(stream().instrs[i], rows, cols);
  stream().instrs[i].ops[0] = toOperand(dst);
  stream().instrs[i].ops[1] = toOperand(src);
  return i;
}

size_t StreamBuilder::binary(BinaryFunc f, const OperandSpec &dst, const OperandSpec &a,
                             const OperandSpec &b, int64_t rows, int64_t cols, const Sync &sync) {
  size_t i = push(Opcode::binary, static_cast<uint8_t>(f), 0, sync);
  setView(stream().instrs[i], rows, cols);
  stream().instrs[i].ops[0] = toOperand(dst);
  stream().instrs[i].ops[1] = toOperand(a);
  stream().instrs[i].ops[2] = toOperand(b);
  return i;
}

size_t StreamBuilder::binaryImm(BinaryFunc f, const OperandSpec &dst, const OperandSpec &a,
                                double b, int64_t rows, int64_t cols, const Sync &sync) {
  size_t i = push(Opcode::binary, static_cast<uint8_t>(f), kSrc1Imm, sync);
  setView(stream().instrs[i], rows, cols);
  stream().instrs[i].ops[0] = toOperand(dst);
  stream().instrs[i].ops[1] = toOperand(a);
  stream().instrs[i].imm[0] = b;
  return i;
}

size_t StreamBuilder::select(const OperandSpec &dst, const OperandSpec &cond,
                             const OperandSpec &a, const OperandSpec &b, int64_t rows,
                             int64_t cols, const Sync &sync) {
  size_t i = push(Opcode::select, 0, 0, sync);
  setView(stream().instrs[i], rows, cols);
  stream().instrs[i].ops[0] = toOperand(dst);
  stream().instrs[i].ops[1] = toOperand(cond);
  stream().instrs[i].ops[2] = toOperand(a);
  stream().instrs[i].ops[3] = toOperand(b);
  return i;
}

size_t StreamBuilder::fill(const OperandSpec &dst, double value, int64_t rows, int64_t cols,
                           const Sync &sync) {
  size_t i = iota(dst, value, 0, 0, rows, cols, sync);
  stream().instrs[i].func = static_cast<uint8_t>(FillFunc::constant);
  return i;
}

size_t StreamBuilder::iota(const OperandSpec &dst, double start, double rowStep, double colStep,
                           int64_t rows, int64_t cols, const Sync &sync) {
  size_t i = push(Opcode::fill, static_cast<uint8_t>(FillFunc::iota), 0, sync);
  Instr &in = stream().instrs[i];
  setView(in, rows, cols);
  in.ops[0] = toOperand(dst);
  in.imm[0] = start;
  in.imm[1] = rowStep;
  in.imm[2] = colStep;
  return i;
}

size_t StreamBuilder::reduce(ReduceFunc f, const OperandSpec &dst, const OperandSpec &src,
                             int64_t rows, int64_t cols, bool accumulate, const OperandSpec &aux1,
                             const OperandSpec &aux2, double indexOffset, const Sync &sync) {
  size_t i = push(Opcode::reduce, static_cast<uint8_t>(f), accumulate ? kAccumulate : 0, sync);
  Instr &in = stream().instrs[i];
  setView(in, rows, cols);
  in.ops[0] = toOperand(dst);
  in.ops[1] = toOperand(src);
  in.ops[2] = toOperand(aux1);
  in.ops[3] = toOperand(aux2);
  in.imm[0] = indexOffset;
  return i;
}

ProgramBuilder::ProgramBuilder(const Arch &arch, uint32_t numCores) {
  program_.archFingerprint = arch.fingerprint();
  program_.numCores = numCores;
}

uint32_t ProgramBuilder::addBuffer(const std::string &name, BufferKind kind, DType dtype,
                                   HostDType hostDType, const std::vector<int64_t> &dims,
                                   std::vector<uint8_t> constant) {
  Buffer b;
  b.name = name;
  b.kind = kind;
  b.dtype = dtype;
  b.hostDType = hostDType;
  b.dims = dims;
  int64_t elems = 1;
  for (int64_t d : dims)
    elems *= d;
  b.bytes = elems * dtypeBytes(dtype);
  b.constant = std::move(constant);
  program_.buffers.push_back(std::move(b));
  return program_.buffers.size() - 1;
}

StreamBuilder ProgramBuilder::core(uint32_t core) {
  for (size_t i = 0; i < program_.streams.size(); ++i)
    if (program_.streams[i].core == core)
      return StreamBuilder(program_, i);
  program_.streams.push_back(Stream{core, {}});
  return StreamBuilder(program_, program_.streams.size() - 1);
}

} // namespace spyre
