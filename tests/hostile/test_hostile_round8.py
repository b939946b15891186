"""Round 8 of the hostile-input cases: a practitioner's files that gave a silent wrong result, or a fix named wrong.

Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from hostile_helpers import FAST, one_line

from fpt.cli import main
from fpt.tasks import build_task
from fpt.tasks.user_data import Preprocessing


def _dna(path: Path, n: int = 30, blocks: bool = False, stray: int | None = 5) -> list[str]:
    """A CSV of DNA strings (20-39 bases) and a class; ``stray``: the row given one space inside its string;
    ``blocks``: every string written in GenBank's blocks of ten bases."""
    rng = np.random.default_rng(2)
    seqs = ["".join(rng.choice(list("ACGT"), size=rng.integers(20, 40))) for _ in range(n)]
    if stray is not None:
        seqs[stray] = seqs[stray][:10] + " " + seqs[stray][10:]
    if blocks:
        seqs = [" ".join(s[j:j + 10] for j in range(0, len(s), 10)) for s in seqs]
    path.write_text("\n".join(["seq,label"] + [f"{s},{'ab'[i % 2]}" for i, s in enumerate(seqs)]) + "\n")
    return seqs


def _build(path: Path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = build_task("data", {"data": str(path), **options}, 0)
    return task, [str(w.message) for w in caught]


def test_dna_with_a_stray_space_or_in_blocks_of_ten_is_read_by_character(tmp_path):
    """--sequence-tokens auto read words as soon as one training text held a space: one stray space among DNA
    strings (or DNA in GenBank's blocks of ten) made each string one word of its own, so every validation and test
    string was the unknown symbol alone, and the model could learn nothing, without a word."""
    for name, blocks in (("stray.csv", False), ("blocks.csv", True)):
        _dna(tmp_path / name, blocks=blocks)
        task, notes = _build(tmp_path / name)
        tok = Preprocessing.from_json(task.fitted).tokeniser
        assert tok.mode == "chars" and sorted(tok.vocab) == [" ", "A", "C", "G", "T"], (name, tok.mode, tok.vocab[:5])
        for split in ("val", "test"):
            ids = task.eval_sets[split].x
            assert int((ids == 1).sum()) == 0 and int((ids > 1).sum(dim=1).min()) >= 20  # known symbols, every base
        (note,) = [m for m in notes if "--sequence-tokens words" in m]
        assert f"{tmp_path / name}: column 'seq': " in note and "one symbol per character" in note
    assert "1 of 30 texts hold a space, but 31 of their 31 words occur only once" in _build(tmp_path / "stray.csv")[1][-1]
    # words given are words; words that recur are words under auto, without a note
    assert Preprocessing.from_json(_build(tmp_path / "stray.csv", sequence_tokens="words")[0].fitted).tokeniser.mode \
        == "words"
    rng = np.random.default_rng(0)
    words = ["the", "cat", "sat", "on", "a", "mat", "über", "日本"]
    rows = [" ".join(rng.choice(words, size=rng.integers(2, 8))) for _ in range(30)]
    (tmp_path / "words.csv").write_text("\n".join(["text,label"] + [f"{r},{'ab'[i % 2]}" for i, r in enumerate(rows)]))
    task, notes = _build(tmp_path / "words.csv")
    assert Preprocessing.from_json(task.fitted).tokeniser.mode == "words"
    assert not [m for m in notes if "--sequence-tokens" in m]


def test_texts_of_no_symbol_the_model_knows_are_refused_at_predict(tmp_path, tiny_bert_dir, capsys):
    """A sequence model read a new text none of whose symbols it was trained on (DNA in lower case for a model of
    upper-case DNA, a protein's letters for a DNA model) as the unknown symbol alone and predicted it, as it would an
    empty text, without a word; a table's unseen category is refused. Now refused in one line naming the file, the
    column, the row and the fix (the letter case where that is it); --allow-unseen reads them as before."""
    import fpt

    seqs = _dna(tmp_path / "dna.csv", stray=None)
    run = tmp_path / "run"
    fpt.fit(fpt.build(data=str(tmp_path / "dna.csv"), body=tiny_bert_dir, **FAST), out=run, progress=False)
    new = tmp_path / "new.csv"
    new.write_text(f"seq\n{seqs[0]}\n{seqs[1][:8]}NNNN\n{seqs[2].lower()}\nMKV\n")
    assert main(["predict", str(run), str(new), "--out", str(tmp_path / "p.csv")]) == 2
    one_line(capsys, "predict", f"{new}: column 'seq', row 3: {seqs[2].lower()[:30] + '...'!r} holds no symbol the model "
             "was trained on (2 of 4 texts hold none; it knows ", "written in another letter case than the training "
             "texts", "--allow-unseen")
    new.write_text(f"seq\n{seqs[0]}\nMKV\n")
    assert main(["predict", str(run), str(new), "--out", str(tmp_path / "p.csv")]) == 2
    assert "row 2: 'MKV' holds no symbol the model was trained on (1 of 2 texts hold none" in one_line(capsys, "predict")
    model = fpt.load(run)
    # a text with some symbols known, or none at all (empty, missing), is read as before
    assert model.predict_proba(np.array([seqs[0], seqs[1][:8] + "NNNN", "", None], dtype=object)).shape == (4, 2)
    unseen = model.predict_proba(np.array(["MKV", "XYZ", "acg"], dtype=object), allow_unseen=True)
    assert np.allclose(unseen[0], unseen[1]) and np.allclose(unseen[0], unseen[2])  # each the unknown symbol, thrice


def test_texts_in_either_unicode_form_are_read_as_one_text():
    """A sequence model read 'é' written as one character (NFC, as most text is typed) and as 'e' and a combining
    accent (NFD: macOS file names, some web pages and PDFs) as different symbols and words: texts of one form
    predicted by a model of the other had their accented letters, or whole words, read as the unknown symbol,
    unsaid. Every text is now read in NFC; a run saved before (no form in data.json) reads texts as it did."""
    import json
    import unicodedata

    from fpt.data.modalities import from_json
    from fpt.data.tokenisers import SequenceTokens

    nfc = np.array(["café crème", "thé glacé", "eau", "crème brûlée", "café"], dtype=object)
    nfd = np.array([unicodedata.normalize("NFD", t) for t in nfc], dtype=object)
    assert (nfc != nfd).sum() == 4  # every text but "eau" is written otherwise
    for mode in ("chars", "words"):
        tok = from_json(json.loads(json.dumps(SequenceTokens.fit(np.concatenate([nfc, nfd[:2]]), mode, None).to_json())))
        (x_nfc, len_nfc), (x_nfd, len_nfd) = tok({"t": nfc}), tok({"t": nfd})
        assert (x_nfc == x_nfd).all() and (len_nfc == len_nfd).all() and int((x_nfd == 1).sum()) == 0, mode
        assert "\u0301" not in tok.vocab and "\u0300" not in tok.vocab and tok.form == "NFC"
    old = SequenceTokens.fit(nfc, "chars", None).to_json()
    del old["form"]  # data.json of a run saved before the field: its texts read as written
    x_old, _ = from_json(old)({"t": nfd[:1]})
    assert x_old[0, :6].tolist().count(1) == 1  # 'cafe' + the lone accent: the one symbol it never saw
