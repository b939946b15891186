"""fpt help [COMMAND]: the help of fpt or of one command, as git's and pip's ``help`` give it."""

from __future__ import annotations

import argparse

HELP = "show fpt's help, or a command's (fpt help train: the same as fpt train --help)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("topic", nargs="?", metavar="COMMAND", help="the command whose help to show (none: fpt's own)")


def run(args: argparse.Namespace) -> int:
    from fpt.cli import parser

    # the very parser `fpt --help` and `fpt COMMAND --help` print, so the two texts cannot drift apart
    top = parser()
    if args.topic is None:
        top.print_help()
        return 0
    if args.topic not in top.subparsers_of:
        # as `fpt trian` is answered: the command list, the close one first
        top.parse_args([args.topic])
    top.subparsers_of[args.topic].print_help()
    return 0
