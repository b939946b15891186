from torch import nn

from fpt.bodies.swap import replace_modules


def test_replaces_matching_submodules_at_every_depth_and_counts_them():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.ReLU(), nn.Linear(2, 2)))
    names_before = [n for n, _ in model.named_parameters()]
    assert replace_modules(model, lambda m: nn.Tanh() if isinstance(m, nn.ReLU) else None) == 2
    assert isinstance(model[1], nn.Tanh) and isinstance(model[2][0], nn.Tanh)
    assert [n for n, _ in model.named_parameters()] == names_before
    assert replace_modules(model, lambda m: None) == 0
