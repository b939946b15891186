"""fpt.hub: Hugging Face's offline switches read as huggingface_hub and datasets read them, so that a user's
``TRANSFORMERS_OFFLINE=1`` or ``HF_HUB_OFFLINE=ON`` makes fpt try no connection, as it makes the libraries try none."""

from __future__ import annotations

import socket

import pytest

from fpt.bodies import BodySpec, build_body
from fpt.errors import BodyUnavailableError
from fpt.hub import hub_reachable

SWITCHES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


@pytest.fixture
def no_network(monkeypatch):
    """No switch set, and a connection attempt recorded (and refused) instead of made."""
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    tried = []

    def connect(address, *args, **kwargs):
        tried.append(address)
        raise ConnectionRefusedError("refused by the test")

    monkeypatch.setattr(socket, "create_connection", connect)
    return tried


@pytest.mark.parametrize("env, named", [
    ({"TRANSFORMERS_OFFLINE": "1"}, "TRANSFORMERS_OFFLINE"),  # transformers' own switch, which huggingface_hub honours
    ({"HF_HUB_OFFLINE": "ON"}, "HF_HUB_OFFLINE"),
    ({"HF_HUB_OFFLINE": "True"}, "HF_HUB_OFFLINE"),
    ({"HF_HUB_OFFLINE": "", "TRANSFORMERS_OFFLINE": "yes"}, "TRANSFORMERS_OFFLINE"),
])
def test_every_offline_switch_huggingface_hub_reads_is_offline_without_a_connection(no_network, monkeypatch, env,
                                                                                     named):
    """TRANSFORMERS_OFFLINE=1 and HF_HUB_OFFLINE=ON were read as online: fpt opened a connection to the hub (on an
    air-gapped machine: 'huggingface.co:443 is unreachable (gaierror ...)', not the switch the user set)."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert hub_reachable() == (False, f"{named} is set")
    assert no_network == []


@pytest.mark.parametrize("env", [{}, {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "1"}, {"HF_HUB_OFFLINE": "no"}])
def test_online_as_huggingface_hub_reads_it_asks_the_hub(no_network, monkeypatch, env):
    """HF_HUB_OFFLINE, when set, decides over TRANSFORMERS_OFFLINE, as huggingface_hub reads them."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    reachable, why = hub_reachable()
    assert not reachable and "refused by the test" in why and len(no_network) == 1


def test_a_body_not_cached_names_the_switch_set(no_network, monkeypatch):
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-fpt-test-cache")
    with pytest.raises(BodyUnavailableError, match=r"hub cannot be reached \(TRANSFORMERS_OFFLINE is set\)"):
        build_body(BodySpec("gpt2", "pretrained", seq_len=4))
    assert no_network == []


@pytest.mark.parametrize("switch", ["HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_a_cached_dataset_is_read_offline(no_network, monkeypatch, switch):
    """With HF_DATASETS_OFFLINE=1 or TRANSFORMERS_OFFLINE=1 (not HF_HUB_OFFLINE) and no network, a dataset id was
    refused as 'the hub cannot be reached' before datasets was asked for its cached copy."""
    import datasets

    from fpt.data.hub import load_hub

    monkeypatch.setenv(switch, "1")
    cached = datasets.Dataset.from_dict({"x": [float(i) for i in range(12)], "label": [i % 2 for i in range(12)]})
    asked = []
    monkeypatch.setattr(datasets, "load_dataset", lambda name, *args, **kwargs: asked.append(name) or cached)
    raw = load_hub("someone/cached-set", None, "auto", "auto", 32)
    assert asked == ["someone/cached-set"] and no_network == []
    assert raw.splits["train"].y.ravel().tolist() == [i % 2 for i in range(12)]
