"""bench/bench_fidelity.py builds each row as the measured program was built."""

import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "bench_fidelity.py")


def test_rows_measured_with_a_tile_count_are_built_with_it(tmp_path):
    # A softmax measured with each core's rows in 2 and in 8 tiles: both
    # programs are built with that row tile (column prog), and they differ.
    measured = tmp_path / "measured.csv"
    header = "id,op_detail,shape,dtype,cores_used,measured_us,tiles,io_hbm_bytes\n"
    rows = "".join(f'T{t},softmax_row_tiling,"R=512,C=1024",fp16,4,100.0,{t},2097152\n'
                   for t in (2, 8))
    measured.write_text(header + rows)
    done = subprocess.run([sys.executable, SCRIPT, "--csv", str(measured)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = {line.split()[0]: line.split() for line in done.stdout.splitlines()
             if line.startswith("T")}
    assert lines["T2"][-1] == "tiles=2" and lines["T8"][-1] == "tiles=8", done.stdout
    assert lines["T2"][4] != lines["T8"][4], done.stdout  # simulated us
