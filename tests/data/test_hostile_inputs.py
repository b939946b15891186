"""Inputs a fuzzing user built: each reads right or stops with one line naming the file and the fix.

Silent wrong results (16-bit images clipped to one class, inf in a .ts file, a trailing comma adding a
point, a misspelt npz array dropping the test split) and tracebacks (an npz header declaring 10^12
elements, a .npy named .npz, a decompression bomb) found in issue "Step 15".
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fpt.cli import main
from fpt.data.timeseries import read_ts
from fpt.errors import DataError

TS_HEADER = "@problemName t\n@univariate true\n@classLabel true a b\n@data\n"
SERIES = "".join(f"1,2,{i}:{'ab'[i % 2]}\n" for i in range(10))


def _write(name: str, content: str | bytes) -> Callable[[Path], Path]:
    def write(root: Path) -> Path:
        path = root / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return path
    return write


def _huge_npz(root: Path) -> Path:
    """An npz whose X header declares 10^12 float64 elements in a few bytes."""
    import io
    import zipfile

    header = {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    path = root / "d.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("X.npy", np.lib.format.magic(1, 0) + buf.getvalue()[8:] + b"\0" * 64)
        with z.open("y.npy", "w") as f:
            np.lib.format.write_array(f, np.arange(4))
    return path


def _npy_as_npz(root: Path) -> Path:
    path = root / "d.npz"
    with open(path, "wb") as f:
        np.save(f, np.zeros((4, 3)))
    return path


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def bomb_png(path: Path, side: int = 30000) -> None:
    """A 1-bit PNG declaring side x side pixels (Pillow refuses it on open, before decoding any data)."""
    ihdr = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", zlib.compress(b"\0" * 64))
                     + _png_chunk(b"IEND", b""))


def _bomb_folder(root: Path) -> Path:
    from PIL import Image

    for c in ("cat", "dog"):
        (root / "img" / c).mkdir(parents=True)
        for i in range(3):
            Image.fromarray(np.full((4, 4), 40 * i, dtype=np.uint8)).save(root / "img" / c / f"{i}.png")
    bomb_png(root / "img" / "cat" / "bomb.png")
    return root / "img"


CASES = {
    # name: (writer, extra flags, words the one-line message must hold)
    ".ts infinite value": (_write("T_TRAIN.ts", TS_HEADER + SERIES + "1,inf,3:a\n"), [],
                           ["T_TRAIN.ts", "line 15", "'inf'", "finite"]),
    ".ts -Infinity value": (_write("T_TRAIN.ts", TS_HEADER + SERIES.replace("1,2,3:b", "1,-Infinity,3:b")), [],
                            ["T_TRAIN.ts", "line 8", "'-Infinity'", "finite"]),
    "npz misspelt X_test": (_write("d.npz", b""), [], ["d.npz", "'X_tset'", "did you mean 'X_test'"]),
    "npz header declaring 10^12 elements": (_huge_npz, [], ["d.npz", "'X'", "truncated or corrupt", "np.savez"]),
    ".npy named .npz": (_npy_as_npz, [], ["d.npz", "single .npy array", "np.savez"]),
    "decompression bomb png": (_bomb_folder, [], ["bomb.png", "too large", "resize it"]),
    "semicolon-separated csv": (_write("d.csv", "a;b;label\n" + "".join(f"{i},5;{i},25;{'xy'[i % 2]}\n" for i in range(20))),
                                [], ["d.csv", "';'-separated", "','"]),
    "seed beyond 64 bits": (_write("d.csv", "a,label\n" + "".join(f"{i},{'xy'[i % 2]}\n" for i in range(20))),
                            [f"seed={2**70}"], ["'seed'", "0..2**63-1"]),
}


def _misspelt_npz(root: Path) -> Path:
    np.savez(root / "d.npz", X=np.zeros((10, 3)), y=np.arange(10) % 2, X_tset=np.zeros((4, 3)), y_tset=np.arange(4) % 2)
    return root / "d.npz"


CASES["npz misspelt X_test"] = (_misspelt_npz, *CASES["npz misspelt X_test"][1:])


def _one_feature_npz(root: Path) -> Path:
    np.savez(root / "d.npz", X=np.arange(10.0), y=np.arange(10) % 2)  # one feature, saved without its column axis
    return root / "d.npz"


CASES["npz X of one dimension"] = (_one_feature_npz, [], ["d.npz: X", "shape (10,)", "X.reshape(-1, 1)"])


@pytest.mark.parametrize("name", CASES)
def test_hostile_data_fails_fpt_train_in_one_line(name, tmp_path, capsys):
    write, flags, words = CASES[name]
    path = write(tmp_path)
    rc = main(["train", "--data", str(path), *flags, "--steps", "1", "--device", "cpu", "--out", str(tmp_path / "run"),
               "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and err.startswith("fpt train: error: "), err
    for word in words:
        assert word in err, (word, err)


def test_sixteen_bit_images_keep_their_values_apart(tmp_path):
    """Pillow's convert("L") clips 16-bit pixels at 255: 1000 and 60000 both became 255."""
    from PIL import Image

    from fpt.data.images import load_image

    got = []
    for value in (1000, 60000):
        Image.fromarray(np.full((4, 4), value, dtype=np.uint16)).save(tmp_path / f"{value}.png")
        got.append(load_image(tmp_path / f"{value}.png", "gray", 4))
    assert int(got[0].max()) == round(1000 / 257) and int(got[1].max()) == round(60000 / 257)
    rgb = load_image(tmp_path / "60000.png", "rgb", 4)
    assert rgb.shape == (4, 4, 3) and int(rgb.max()) == round(60000 / 257)


def test_a_trailing_comma_adds_no_point(tmp_path):
    path = tmp_path / "T_TRAIN.ts"
    path.write_text(TS_HEADER + "1,2,3,:a\n4,5,6,:b\n")
    series, y, _ = read_ts(path)
    assert [s.shape for s in series] == [(1, 3), (1, 3)] and not np.isnan(np.stack(series)).any()


def test_a_bracket_in_a_label_and_a_byte_order_mark_read(tmp_path):
    path = tmp_path / "T_TRAIN.ts"
    path.write_bytes(b"\xef\xbb\xbf" + b"@problemName t\n@univariate true\n@classLabel true a(1) b\n@data\n1,2:a(1)\n3,4:b\n")
    series, y, header = read_ts(path)
    assert list(y) == ["a(1)", "b"] and header["problemname"] == "t"
    path.write_text(TS_HEADER + "(0,1),(1,2):a\n")
    with pytest.raises(DataError, match="timestamps"):
        read_ts(path)


def test_an_infinite_regression_target_in_a_ts_file_names_its_line(tmp_path):
    path = tmp_path / "T_TRAIN.ts"
    path.write_text("@problemName t\n@univariate true\n@classLabel false\n@targetLabel true\n@data\n1,2:0.5\n3,4:inf\n")
    with pytest.raises(DataError, match=r"line 7: 'inf' is not a finite number"):
        read_ts(path)


def test_a_decompression_bomb_at_predict_is_one_line(tmp_path):
    from fpt.data.images import load_image

    bomb_png(tmp_path / "bomb.png")
    with pytest.raises(DataError, match=r"bomb.png: the image is too large to decode safely.*resize it"):
        load_image(tmp_path / "bomb.png", "gray", 8)


def test_predict_npz_refuses_unknown_arrays(tmp_path):
    from fpt.data.arrays import check_names, load_npz

    np.savez(tmp_path / "p.npz", X=np.zeros((2, 3)), lenghts=np.ones(2))
    with pytest.raises(DataError, match=r"'lenghts' \(did you mean 'lengths'\?\)"):
        check_names(load_npz(tmp_path / "p.npz"), ["X", "y", "lengths"], tmp_path / "p.npz")


def _pickle_body(root: Path) -> Path:
    """A save_pretrained() folder whose pytorch_model.bin is a pickle that would run code when loaded."""
    import os
    import pickle

    from transformers import GPT2Config

    GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=50, n_positions=64).save_pretrained(root / "body")

    class Code:
        def __reduce__(self):
            return os.system, (f"touch {root / 'ran'}",)

    with open(root / "body" / "pytorch_model.bin", "wb") as f:
        pickle.dump({"w": Code()}, f)
    return root / "body"


def test_pickle_bodies_are_one_line_errors(tiny_gpt2_dir, tmp_path, capsys):
    import pickle

    body = _pickle_body(tmp_path)
    rc = main(["train", "--body", str(body), "--steps", "1", "--device", "cpu", "--quiet", "--out", str(tmp_path / "r1")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "pytorch_model.bin is a pickle" in err, err
    (tmp_path / "ck").mkdir()
    with open(tmp_path / "ck" / "body.safetensors", "wb") as f:
        pickle.dump({"w": 1}, f)
    rc = main(["train", "--init", f"checkpoint:{tmp_path / 'ck'}", "--body", tiny_gpt2_dir, "--steps", "1", "--device",
               "cpu", "--quiet", "--out", str(tmp_path / "r2")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "body.safetensors is not a safetensors file" in err, err
    assert not (tmp_path / "ran").exists()
