"""End-to-end training on CPU to real thresholds (slow: minutes)."""

import pytest

import fpt


@pytest.mark.slow
def test_random_body_is_slower_on_bit_xor_than_pretrained(readme_paper_block):
    """The paper's Table 6: a random frozen body needs far more steps on Bit XOR (40x for GPT-2).

    The pretrained side is the README's example, trained once per session (conftest.py's readme_paper_block):
    the same config as fpt.build(task="bit-xor", init="pretrained", steps=400, eval_every=25), checked first."""
    expected = fpt.build(task="bit-xor", init="pretrained", steps=400, eval_every=25).config
    assert readme_paper_block["exp"].config == expected, "the README's example is no longer this test's pretrained run"
    pretrained = readme_paper_block["summary"]
    assert pretrained["steps_to_target"] is not None
    budget = 2 * pretrained["steps_to_target"]
    # Still read every 25 steps, on 200 of the 1,000 validation examples (eval_subset): a subset at the target makes
    # fit read the whole set before it counts as reached, and val_accuracy is the whole set's at the selected step.
    # The random body stays at chance (0.512 on the whole set, here as with every evaluation whole), where the 1,000
    # examples at each of the 10 evaluations were ~40% of the run's CPU.
    random = fpt.fit(fpt.build(task="bit-xor", init="random", steps=budget, eval_every=25, eval_subset=200),
                     progress=False)
    assert random["steps"] == budget and random["selected_step"] % 25 == 0
    assert random["steps_to_target"] is None and random["val_accuracy"] < 0.9


@pytest.mark.slow
def test_frozen_language_model_reads_real_digit_images():
    """Step 2's acceptance on the 1,797 real 8x8 digits scikit-learn ships: >= 90% held out."""
    # The target is read on validation; stopping at 0.95 there leaves room for the test split's noise
    # (360 images: one image is 0.28 points), so the >= 90% test bound is about the model, not luck.
    # lr 3e-3 (bench/specs/digits-dropout.yaml's higher lr; the preset's is 1e-3) and an evaluation every 25 steps stop at
    # the target sooner: on this CPU in fp32 (as here, one thread), seeds 0 / 1 / 2 reached it at step 325 / 275 / 350
    # (test 0.925 / 0.928 / 0.950), where lr 2e-3 took 375 / 425 (test 0.942 / 0.942) and lr 1e-3 550 (0.947; evaluated
    # every 100 steps, as before, step 600 at the earliest). Cheaper settings tried (2026-11-29, same CPU, one thread):
    # lr 4e-3 / 5e-3 took 550 / 525 steps (seed 0); batch 8 at lr 2e-3 350 / 550 / 525 (test 0.919 / 0.936 / 0.911:
    # seed 0 63 CPU-s against this one's 83, the three seeds ~9% less on average, for less room above the bound) and
    # batch 8 at lr 3e-3 550 (seed 0); bf16 (precision auto on this AMX CPU, where the suite pins fp32) 500 steps at
    # seed 0, 75 CPU-s (test 0.944): none reliably cheaper.
    summary = fpt.fit(fpt.build(task="digits", steps=1000, eval_every=25, lr=3e-3, target=0.95), progress=False)
    assert summary["steps_to_target"] is not None, summary["val_accuracy"]  # target read on validation
    assert summary["test_accuracy"] >= 0.9
