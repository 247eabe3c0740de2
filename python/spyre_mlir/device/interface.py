"""How Dynamo and Inductor see the "spyre" device: a device interface, device
op overrides and wrapper code, with our Scheduling generating its kernels."""

from __future__ import annotations

import torch
from torch._dynamo.device_interface import DeviceInterface, register_interface_for_device
from torch._inductor.codegen.common import (DeviceOpOverrides, register_backend_for_device,
                                            register_device_op_overrides)
from torch._inductor.codegen.wrapper import PythonWrapperCodegen
from torch._inductor.virtualized import V


def register() -> None:
    """Registers the device with Dynamo and Inductor (after our Scheduling and
    lowerings, spyre_mlir.inductor.register)."""
    from .. import inductor
    inductor.register()
    from ..inductor.scheduling import SpyreScheduling

    # torch.compile(model) on spyre tensors uses Inductor's default settings:
    # set the ones our kernels need process-wide (they only shape fusion
    # heuristics, reductions and attention for other devices).
    import torch._inductor.config as inductor_config

    from ..inductor.backend import CONFIG
    for key, value in CONFIG.items():  # including the FX graph cache key
        setattr(inductor_config, key, value)

    register_backend_for_device("spyre", SpyreScheduling, Wrapper)
    register_device_op_overrides("spyre", Overrides())
    register_interface_for_device("spyre", Interface)


class Overrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name):
        return f"def {name}(index): return None"

    def set_device(self, device_idx):
        return "pass"

    def synchronize(self):
        return "pass"

    def device_guard(self, device_idx):
        return "contextlib.nullcontext()"


class Interface(DeviceInterface):
    class Worker:
        @staticmethod
        def set_device(device):
            pass

        @staticmethod
        def current_device():
            return 0

        @staticmethod
        def get_device_properties(device=None):
            from .. import simulator as sim
            return type("Props", (), {"multi_processor_count": sim.default_arch().cores})

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def set_device(device):
        pass

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def synchronize(device=None):
        pass

    @staticmethod
    def get_compute_capability(device=None):
        return 0

    @staticmethod
    def get_device_properties(device=None):
        return Interface.Worker.get_device_properties(device)


class Wrapper(PythonWrapperCodegen):
    """Kernels of nodes that fall back are C++ on host pointers, which spyre
    memory is: call them as on the CPU."""

    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return PythonWrapperCodegen.create(is_subgraph, subgraph_name, parent_wrapper,
                                               partition_signatures)
        return Wrapper()

    def codegen_input_size_and_nan_asserts(self) -> None:
        super().codegen_input_size_and_nan_asserts()
        # Kernels take int64 graph inputs to lie in ranges.INT64_INPUTS (int64
        # is int32 on the card). backend="spyre" checks every call and falls
        # back to the CPU (backend.py); a graph of torch.compile's default
        # backend cannot, so its calls beyond the range raise.
        from ..inductor import state
        if state.active():
            return
        names = [name for name, value in V.graph.graph_inputs.items()
                 if _dtype(value) == torch.int64]
        if names:
            self.header.writeline("import spyre_mlir.inductor.backend as spyre_backend")
        for name in names:
            self.prefix.writeline(f"spyre_backend.refuse_int64_beyond_range({name!r}, {name})")

    def _generate_kernel_call_helper(self, kernel_name, call_args, *, device=None,
                                     triton=True, **kwargs):
        if not triton and device is not None and device.type == "spyre":
            self.writeline(self.wrap_kernel_call(kernel_name, call_args))
            return
        super()._generate_kernel_call_helper(kernel_name, call_args, device=device,
                                             triton=triton, **kwargs)


def _dtype(graph_input):
    """A graph input's dtype; None for inputs that are not tensors (a
    process group's script object in a graph with collectives)."""
    try:
        return graph_input.get_dtype()
    except (AttributeError, NotImplementedError):
        return None
