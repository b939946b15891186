"""Round 11 of the hostile-input cases: a practitioner's habits that fpt took silently or answered with an error
naming the wrong thing. Each case failed before its fix (the commit that added it says how)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("where", ["base", "grid", "random"])
def test_a_sweep_asking_for_baselines_is_refused_naming_the_file_and_key(where):
    """baselines: all in a sweep spec trained every trial (fpt.train.fit alone) and fitted no baseline, silently."""
    from fpt.errors import ConfigError
    from fpt.experiments import sweep

    base = {"task": "bit-xor", "steps": 2}
    raw = {"base": {**base, "baselines": "all"}, "grid": {"lr": [1e-3]}}
    if where == "grid":
        raw = {"base": base, "grid": {"lr": [1e-3], "baselines": ["none", "all"]}}
    elif where == "random":
        raw = {"base": base, "random": {"trials": 2, "space": {"baselines": {"choice": ["auto", "all"]}}}}
    with pytest.raises(ConfigError) as info:
        sweep.parse_spec(raw, "my-sweep.yaml")
    section = {"base": "base", "grid": "grid", "random": "random.space"}[where]
    assert str(info.value).startswith(f"sweep spec my-sweep.yaml: {section}.baselines: 'all': a sweep's trials fit "
                                      "no baselines"), info.value
    assert "fpt train --data ... --baselines all" in str(info.value) and "\n" not in str(info.value)
    for fine in ("none", "auto"):  # what a trial does: kept
        assert sweep.parse_spec({"base": {**base, "baselines": fine}, "grid": {"lr": [1e-3]}}).base["baselines"] == fine
