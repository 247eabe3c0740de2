// The "spyre" device for PyTorch (PrivateUse1): tensors whose memory is the
// simulated card's device memory. The simulator runs on the host, so device
// memory is host memory: the allocator is the CPU allocator with the device
// set to spyre, copies are memcpy, and eager ops the card has no kernel for
// run through PyTorch's CPU fallback, counted (or refused in strict mode) by
// a hook the Python side sets. Compiled graphs
// (torch.compile(model)) bind these tensors to the simulator without copies.

#include <ATen/EmptyTensor.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_cpu_dispatch.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <cstring>

namespace {

constexpr c10::DeviceType kSpyre = c10::DeviceType::PrivateUse1;

struct SpyreAllocator final : at::Allocator {
  at::DataPtr allocate(size_t bytes) override {
    void *data = bytes ? c10::alloc_cpu(bytes) : nullptr;
    return {data, data, &c10::free_cpu, at::Device(kSpyre, 0)};
  }
  at::DeleterFnPtr raw_deleter() const override { return &c10::free_cpu; }
  void copy_data(void *dest, const void *src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

SpyreAllocator allocator;
// Storages made without a tensor (torch.UntypedStorage(n, device="spyre"),
// torch.load) ask the registry: without it, a null allocator crashed them.
REGISTER_ALLOCATOR(kSpyre, &allocator);

// One card, always current.
struct SpyreGuard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kSpyre; }
  c10::Device exchangeDevice(c10::Device) const override { return {kSpyre, 0}; }
  c10::Device getDevice() const override { return {kSpyre, 0}; }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, SpyreGuard);

const c10::DispatchKeySet kKeys(c10::DispatchKey::PrivateUse1);

at::Tensor empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                 std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>,
                 std::optional<at::MemoryFormat> format) {
  return at::detail::empty_generic(size, &allocator, kKeys, c10::dtype_or_default(dtype),
                                   format);
}

at::Tensor emptyStrided(c10::IntArrayRef size, c10::IntArrayRef stride,
                        std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                        std::optional<at::Device>, std::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, &allocator, kKeys,
                                           c10::dtype_or_default(dtype));
}

// A CPU tensor over the same memory (spyre memory is host memory).
at::Tensor cpuAlias(const at::Tensor &t) {
  if (t.device().type() == c10::DeviceType::CPU)
    return t;
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(),
                       t.options().device(c10::DeviceType::CPU));
}

at::Tensor copyFrom(const at::Tensor &self, const at::Tensor &dst, bool) {
  cpuAlias(dst).copy_(cpuAlias(self));
  return dst;
}

at::Tensor copyFromAndResize(const at::Tensor &self, const at::Tensor &dst) {
  at::native::resize_(dst, self.sizes());
  return copyFrom(self, dst, false);
}

const at::Tensor &resize(const at::Tensor &self, c10::IntArrayRef size,
                         std::optional<at::MemoryFormat> format) {
  return at::native::resize_(self, size, format);
}

at::Tensor asStrided(const at::Tensor &self, c10::IntArrayRef size, c10::IntArrayRef stride,
                     std::optional<int64_t> offset) {
  return at::cpu::as_strided(self, size, stride, offset);
}

at::Tensor &setStorage(at::Tensor &self, at::Storage source, int64_t offset,
                       c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::set_storage_cpu_(self, source, offset, size, stride);
}

// Called with the name of each op that falls back, before it runs: counts
// it, or raises in strict mode (spyre_mlir.inductor.counting.eager_fallback).
// Leaked on purpose: it must outlive the interpreter's teardown.
PyObject *fallbackHook = nullptr;

void setFallbackHook(py::object hook) {
  py::gil_scoped_acquire gil;
  Py_XDECREF(fallbackHook);
  fallbackHook = hook.is_none() ? nullptr : hook.release().ptr();
}

void fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  if (fallbackHook && Py_IsInitialized()) {
    py::gil_scoped_acquire gil;
    // A Python exception (strict mode) propagates as it is to the caller.
    py::handle hook(fallbackHook);
    hook(c10::toString(op.schema().operator_name()));
  }
  at::native::cpu_fallback(op, stack);
}

// What PyTorch asks of an accelerator once one is registered (torch.accelerator,
// the device torch.distributed's barrier runs on): one card, always there.
struct SpyreHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return 1; }
  c10::DeviceIndex getCurrentDevice() const override { return 0; }
  void setCurrentDevice(c10::DeviceIndex) const override {}
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex) const override { return 0; }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex) const override { return 0; }
  at::Device getDeviceFromPtr(void *) const override { return {kSpyre, 0}; }
};

// scaled_dot_product_attention picks its implementation per device. The
// CPU's flash kernel, where it applies, decomposes in a spyre compile into
// the card's fused attention; the math fallback that devices without a
// choice get compiles into separate products and a softmax over f32 copies
// of the inputs. Eagerly the flash kernel runs as any op does: on the CPU,
// through the fallback, so it is chosen only for inputs that kernel takes
// (as the CPU's own choice would; that function is not exported).
int64_t sdpChoice(const at::Tensor &query, const at::Tensor &key, const at::Tensor &value,
                  const std::optional<at::Tensor> &mask, double dropout, bool,
                  std::optional<double>, bool gqa) {
  constexpr int64_t kMath = 0, kFlash = 1; // sdp::SDPBackend
  auto floating = [&](const at::Tensor &t) {
    return t.scalar_type() == at::kFloat || t.scalar_type() == at::kHalf ||
           t.scalar_type() == at::kBFloat16;
  };
  bool plain = query.dim() == 4 && key.dim() == 4 && value.dim() == 4 &&
               key.size(1) == value.size(1) && key.size(1) > 0 &&
               (query.size(1) == key.size(1) || (gqa && query.size(1) % key.size(1) == 0)) &&
               query.size(0) == key.size(0) && floating(query) &&
               key.scalar_type() == query.scalar_type() &&
               value.scalar_type() == query.scalar_type() && query.stride(-1) == 1 &&
               key.stride(-1) == 1 && value.stride(-1) == 1 && query.size(-1) == key.size(-1) &&
               query.size(-1) == value.size(-1) && dropout == 0;
  if (mask && mask->defined())
    plain = plain && (mask->scalar_type() == at::kBool || mask->scalar_type() == query.scalar_type());
  return plain ? kFlash : kMath;
}

} // namespace

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &sdpChoice)
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty);
  m.impl("empty_strided", emptyStrided);
  m.impl("_copy_from", copyFrom);
  m.impl("_copy_from_and_resize", copyFromAndResize);
  m.impl("resize_", resize);
  m.impl("as_strided", asStrided);
  m.impl("view", at::native::view);
  // View ops with a kernel per backend: through the CPU fallback they would
  // return a copy, not a view, and writes through them would be lost.
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("unfold", at::native::unfold);
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("set_.source_Storage_storage_offset", setStorage);
  // Through the CPU fallback these set a CPU copy's storage to the card's
  // and fail: storage copies (torch.save, storage.cpu()) use the first.
  m.impl("set_.source_Storage", at::native::set_);
  m.impl("set_.source_Tensor", at::native::set_tensor_);
}

// torch.autocast("spyre"): PyTorch's own op lists with the policies CUDA
// uses (products and convolutions in the autocast type, reductions, norms
// and losses in f32, mixed inputs promoted). Without them autocast refused
// the device.
#define SPYRE_LOWER_PRECISION(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define SPYRE_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define SPYRE_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define SPYRE_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

// Every other op runs as it is under autocast.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

namespace autocast_lists {
using namespace at; // the lists' signatures name Tensor, Scalar, ...
TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(SPYRE_LOWER_PRECISION)
  AT_FORALL_FP32(SPYRE_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(SPYRE_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(SPYRE_PROMOTE)
}
} // namespace autocast_lists

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// Everything above registers itself; the module only sets the fallback hook.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "The spyre device (PrivateUse1).";
  // Leaked on purpose, as PyTorch keeps the pointer for the process's life.
  at::RegisterPrivateUse1HooksInterface(new SpyreHooks());
  m.def("set_fallback_hook", &setFallbackHook,
        "Calls hook(op name) before each eager op that runs through the CPU fallback.");
}
