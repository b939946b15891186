import pytest

from fpt.errors import RegistryError
from fpt.registry import Registry


def test_register_and_get():
    reg: Registry = Registry("thing")
    reg.register("a", "b")(1)
    assert reg.get("a") == 1 and reg.get("b") == 1
    assert reg.names() == ["a", "b"] and "a" in reg


def test_duplicate_name_is_an_error():
    reg: Registry = Registry("thing")
    reg.register("a")(1)
    with pytest.raises(RegistryError, match="registered twice"):
        reg.register("a")(2)


def test_unknown_name_suggests_close_match():
    reg: Registry = Registry("task")
    reg.register("bit-xor")(1)
    with pytest.raises(RegistryError, match=r"unknown task 'bit-xr'.*Did you mean 'bit-xor'"):
        reg.get("bit-xr")


def test_package_registries_are_filled_by_import():
    from fpt.bodies import BODIES, FAMILIES
    from fpt.tasks import TASKS

    assert {"bit-xor", "bit-memory"} <= set(TASKS.names())
    assert {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "minilm"} <= set(BODIES.names())
    assert {"gpt2", "bert"} <= set(FAMILIES.names())
