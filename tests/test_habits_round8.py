"""Round 8 of practitioners' habits: TensorBoard, scikit-learn and Hugging Face habits that broke fpt."""

from __future__ import annotations

import pytest

import fpt
from fpt import tracking
from fpt.cli import main
from fpt.errors import ConfigError


def test_a_tensorboard_log_dir_that_is_a_file_is_refused_naming_it_before_anything_is_written(
        xor_run, tiny_gpt2_dir, tmp_path, capsys):
    taken = tmp_path / "events"
    taken.write_text("a file of the caller's\n")
    # was FileExistsError from SummaryWriter's os.makedirs, a traceback, once fpt.fit had written the run's files
    with pytest.raises(ConfigError, match=r"TensorBoard\(log_dir=\.\.\.\): .*events is a file, not a folder.*give "
                                          r"another folder \(e\.g\. .*events-tb\)"):
        tracking.TensorBoard(taken)
    with pytest.raises(ConfigError, match=r"sub lies under .*events, a file, not a folder"):
        tracking.TensorBoard(taken / "sub")
    later = tmp_path / "later"
    board = tracking.TensorBoard(later)
    later.write_text("made after the tracker\n")
    exp = fpt.build(task="bit-xor", body=tiny_gpt2_dir, init="random", batch_size=4, eval_every=2, steps=2,
                    device="cpu", task_options={"eval_size": 8})
    with pytest.raises(ConfigError, match="later is a file, not a folder"):
        fpt.fit(exp, out=tmp_path / "run", trackers=[board], progress=False)
    assert taken.read_text() == "a file of the caller's\n" and later.read_text() == "made after the tracker\n"

    # fpt plot --tensorboard FILE said '[Errno 20] Not a directory: 'events/xor'' after writing the curves
    curves = tmp_path / "curves.png"
    assert main(["plot", str(xor_run), "--out", str(curves), "--tensorboard", str(taken)]) == 2
    err = capsys.readouterr().err
    assert f"fpt plot: error: --tensorboard: {taken} is a file, not a folder" in err and len(err.splitlines()) == 1
    assert not curves.exists() and taken.read_text() == "a file of the caller's\n"

