// The "spyre" torch.distributed backend (c10d::Backend): gloo moves the
// data between the processes, one per card; before each collective a
// Python timer (clock.py) agrees with the other cards on when it starts and
// how long the cards' link would take, and the returned Work tells it when
// the caller waits. Spyre tensors are host memory, handed to gloo as CPU
// tensors over the same memory.

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/csrc/utils/pybind.h>
#include <torch/extension.h>

#include <optional>

namespace {

using c10d::Work;

/// A CPU tensor over a spyre tensor's memory (the same tensor otherwise).
/// It holds the spyre tensor: gloo's asynchronous work keeps only the
/// alias, and the caller's tensor may be a temporary.
at::Tensor onHost(const at::Tensor &t) {
  if (t.device().type() != c10::DeviceType::PrivateUse1)
    return t;
  return at::from_blob(
      t.data_ptr(), t.sizes(), t.strides(), [keep = t](void *) {},
      t.options().device(at::kCPU));
}

std::vector<at::Tensor> onHost(const std::vector<at::Tensor> &ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const at::Tensor &t : ts)
    out.push_back(onHost(t));
  return out;
}

std::vector<std::vector<at::Tensor>> onHost(const std::vector<std::vector<at::Tensor>> &ts) {
  std::vector<std::vector<at::Tensor>> out;
  for (const auto &list : ts)
    out.push_back(onHost(list));
  return out;
}

double bytes(const at::Tensor &t) { return double(t.numel()) * double(t.element_size()); }
double bytes(const std::vector<at::Tensor> &ts) {
  double sum = 0;
  for (const at::Tensor &t : ts)
    sum += bytes(t);
  return sum;
}

/// Drops a reference to a Python object from wherever C++ destroys its
/// holder: with the GIL, or not at all once the interpreter is gone.
void release(py::object &object) {
  if (!Py_IsInitialized()) {
    object.release();
    return;
  }
  py::gil_scoped_acquire gil;
  object = py::object();
}

/// The data's Work, which reports to the timer when it is waited for.
class TimedWork : public Work {
public:
  TimedWork(c10::intrusive_ptr<Work> inner, py::object timer, int64_t token)
      : inner_(std::move(inner)), timer_(std::move(timer)), token_(token) {}
  ~TimedWork() override { release(timer_); }

  bool wait(std::chrono::milliseconds timeout) override {
    bool done = inner_->wait(timeout);
    py::gil_scoped_acquire gil;
    timer_.attr("waited")(token_);
    return done;
  }
  bool isCompleted() override { return inner_->isCompleted(); }
  bool isSuccess() const override { return inner_->isSuccess(); }
  std::exception_ptr exception() const override { return inner_->exception(); }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return inner_->getFuture(); }
  std::vector<at::Tensor> result() override { return inner_->result(); }

private:
  c10::intrusive_ptr<Work> inner_;
  py::object timer_;
  int64_t token_;
};

class SpyreBackend : public c10d::Backend {
public:
  SpyreBackend(c10::intrusive_ptr<c10d::Backend> data, py::object timer, int rank, int size)
      : Backend(rank, size), data_(std::move(data)), timer_(std::move(timer)) {}
  ~SpyreBackend() override { release(timer_); }

  const std::string getBackendName() const override { return "spyre"; }

  // destroy_process_group shuts the backend down while compiled graphs (and
  // works, through the timer) may still hold it: gloo's threads must stop
  // now. Left running until the interpreter exits, they sometimes aborted
  // the process there ("terminate called without an active exception").
  void shutdown() override { close(); }
  void abort() override { close(); }

  c10::intrusive_ptr<Work> broadcast(std::vector<at::Tensor> &tensors,
                                     const c10d::BroadcastOptions &opts) override {
    auto host = onHost(tensors);
    return timed("broadcast", bytes(tensors), [&] { return data_->broadcast(host, opts); });
  }
  c10::intrusive_ptr<Work> allreduce(std::vector<at::Tensor> &tensors,
                                     const c10d::AllreduceOptions &opts) override {
    auto host = onHost(tensors);
    return timed("all_reduce", bytes(tensors), [&] { return data_->allreduce(host, opts); });
  }
  c10::intrusive_ptr<Work> allreduce_coalesced(
      std::vector<at::Tensor> &tensors, const c10d::AllreduceCoalescedOptions &opts) override {
    auto host = onHost(tensors);
    return timed("all_reduce", bytes(tensors),
                 [&] { return data_->allreduce_coalesced(host, opts); });
  }
  // To one card: as long as all cards getting the sum (the ring's
  // reduce-scatter then a gather), an upper bound.
  c10::intrusive_ptr<Work> reduce(std::vector<at::Tensor> &tensors,
                                  const c10d::ReduceOptions &opts) override {
    auto host = onHost(tensors);
    return timed("all_reduce", bytes(tensors), [&] { return data_->reduce(host, opts); });
  }
  c10::intrusive_ptr<Work> allgather(std::vector<std::vector<at::Tensor>> &outputs,
                                     std::vector<at::Tensor> &inputs,
                                     const c10d::AllgatherOptions &opts) override {
    auto out = onHost(outputs);
    auto in = onHost(inputs);
    return timed("all_gather", bytes(inputs) * size_,
                 [&] { return data_->allgather(out, in, opts); });
  }
  c10::intrusive_ptr<Work> _allgather_base(at::Tensor &output, at::Tensor &input,
                                           const c10d::AllgatherOptions &opts) override {
    at::Tensor out = onHost(output), in = onHost(input);
    return timed("all_gather", bytes(output),
                 [&] { return data_->_allgather_base(out, in, opts); });
  }
  c10::intrusive_ptr<Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
      const c10d::AllgatherOptions &opts) override {
    auto out = onHost(outputs);
    auto in = onHost(inputs);
    return timed("all_gather", bytes(outputs),
                 [&] { return data_->allgather_into_tensor_coalesced(out, in, opts); });
  }
  // To one card: no longer than all cards getting everything.
  c10::intrusive_ptr<Work> gather(std::vector<std::vector<at::Tensor>> &outputs,
                                  std::vector<at::Tensor> &inputs,
                                  const c10d::GatherOptions &opts) override {
    auto out = onHost(outputs);
    auto in = onHost(inputs);
    return timed("all_gather", bytes(inputs) * size_,
                 [&] { return data_->gather(out, in, opts); });
  }
  c10::intrusive_ptr<Work> scatter(std::vector<at::Tensor> &outputs,
                                   std::vector<std::vector<at::Tensor>> &inputs,
                                   const c10d::ScatterOptions &opts) override {
    auto out = onHost(outputs);
    auto in = onHost(inputs);
    return timed("all_gather", bytes(outputs) * size_,
                 [&] { return data_->scatter(out, in, opts); });
  }
  c10::intrusive_ptr<Work> reduce_scatter(std::vector<at::Tensor> &outputs,
                                          std::vector<std::vector<at::Tensor>> &inputs,
                                          const c10d::ReduceScatterOptions &opts) override {
    auto out = onHost(outputs);
    auto in = onHost(inputs);
    return timed("reduce_scatter", bytes(outputs) * size_,
                 [&] { return data_->reduce_scatter(out, in, opts); });
  }
  c10::intrusive_ptr<Work> _reduce_scatter_base(at::Tensor &output, at::Tensor &input,
                                                const c10d::ReduceScatterOptions &opts) override {
    at::Tensor out = onHost(output), in = onHost(input);
    return timed("reduce_scatter", bytes(input),
                 [&] { return data_->_reduce_scatter_base(out, in, opts); });
  }
  c10::intrusive_ptr<Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
      const c10d::ReduceScatterOptions &opts) override {
    auto out = onHost(outputs);
    auto in = onHost(inputs);
    return timed("reduce_scatter", bytes(inputs),
                 [&] { return data_->reduce_scatter_tensor_coalesced(out, in, opts); });
  }
  c10::intrusive_ptr<Work> alltoall_base(at::Tensor &output, at::Tensor &input,
                                         std::vector<int64_t> &outputSplits,
                                         std::vector<int64_t> &inputSplits,
                                         const c10d::AllToAllOptions &opts) override {
    at::Tensor out = onHost(output), in = onHost(input);
    return timed("all_to_all", bytes(input), [&] {
      return data_->alltoall_base(out, in, outputSplits, inputSplits, opts);
    });
  }
  c10::intrusive_ptr<Work> alltoall(std::vector<at::Tensor> &outputs,
                                    std::vector<at::Tensor> &inputs,
                                    const c10d::AllToAllOptions &opts) override {
    auto out = onHost(outputs);
    auto in = onHost(inputs);
    return timed("all_to_all", bytes(inputs),
                 [&] { return data_->alltoall(out, in, opts); });
  }
  c10::intrusive_ptr<Work> barrier(const c10d::BarrierOptions &opts) override {
    return timed("barrier", 0, [&] { return data_->barrier(opts); });
  }

private:
  /// Tells the timer (which agrees with the other cards first, and raises
  /// if their calls do not match), then starts the data's collective.
  template <typename Start>
  c10::intrusive_ptr<Work> timed(const char *kind, double byteCount, Start start) {
    TORCH_CHECK(data_, "the spyre process group was destroyed (destroy_process_group): "
                       "init_process_group makes a new one");
    int64_t token;
    {
      py::gil_scoped_acquire gil;
      token = timer_.attr("issued")(kind, byteCount).cast<int64_t>();
    }
    c10::intrusive_ptr<Work> inner = start();
    py::gil_scoped_acquire gil;
    return c10::make_intrusive<TimedWork>(std::move(inner), timer_, token);
  }

  /// Drops the timer's and this backend's references to gloo, whose
  /// process group then joins its threads (without the GIL: they may be
  /// finishing work that takes it).
  void close() {
    if (!data_)
      return;
    {
      py::gil_scoped_acquire gil;
      timer_.attr("close")();
    }
    release(timer_);
    c10::intrusive_ptr<c10d::Backend> data = std::move(data_); // null before gloo winds down
    std::optional<py::gil_scoped_release> released;
    if (PyGILState_Check())
      released.emplace();
    data.reset();
  }

  c10::intrusive_ptr<c10d::Backend> data_;
  py::object timer_;
};

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  py::class_<SpyreBackend, c10d::Backend, c10::intrusive_ptr<SpyreBackend>>(m, "SpyreBackend")
      .def(py::init<c10::intrusive_ptr<c10d::Backend>, py::object, int, int>(),
           py::arg("data"), py::arg("timer"), py::arg("rank"), py::arg("size"));
}
