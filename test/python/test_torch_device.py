"""The "spyre" device: model.to("spyre") then torch.compile(model), as with
IBM's torch-spyre. Run in a child process: registering the device changes
Inductor settings for the whole process."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import torch
    import spyre_mlir.device
    from spyre_mlir import models
    from spyre_mlir.inductor import binding, counters
    from spyre_mlir import simulator as sim

    spyre_mlir.device.register()
    torch.manual_seed(0)

    # Eager ops work (through PyTorch's CPU fallback) and copies round-trip.
    x = torch.randn(4, 5)
    s = x.to("spyre")
    assert s.device.type == "spyre"
    torch.testing.assert_close((s * 2 + 1).cpu(), x * 2 + 1)

    # f32 device memory is bound to the simulator without a copy.
    flat = s.reshape(-1)
    array, copied = binding._to_device(flat, sim.DType.f32, sim.default_arch())
    assert not copied and array.ctypes.data == flat.data_ptr()

    model = models.GPTBlock().eval()
    inputs = torch.randn(2, 16, 128)
    expected = model(inputs)
    model = model.to("spyre")
    compiled = torch.compile(model)
    with torch.no_grad():
        for _ in range(2):
            counters.reset()
            out = compiled(inputs.to("spyre"))
            assert out.device.type == "spyre"
            assert dict(counters.fallbacks) == {}, dict(counters.fallbacks)
            assert counters.kernels_run > 0
            torch.testing.assert_close(out.cpu(), expected, rtol=2e-2, atol=5e-3)
    print("ok", counters.kernels_run, counters.simulated_cycles)
""")


def test_model_on_the_spyre_device():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("ok")
