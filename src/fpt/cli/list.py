"""fpt list: what can be named on the command line."""

from __future__ import annotations

import argparse

HELP = "list registered tasks, bodies, body families and freeze policies"


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from fpt.bodies import BODIES, FAMILIES
    from fpt.freeze import POLICIES
    from fpt.tasks import TASKS

    print("tasks:    ", ", ".join(TASKS.names()))
    for name, source in sorted(TASKS.plugin_sources.items()):
        print(f"plugin {name:<24} {source}")
    print("bodies:   ", ", ".join(BODIES.names()), "(or any Hugging Face id / local directory of these families)")
    print("families: ", ", ".join(FAMILIES.names()))
    for name in POLICIES.names():
        print(f"policy {name:<24} trains {', '.join(sorted(POLICIES.get(name)))}")
    return 0
