"""The errors a user can fix, in one place: the CLI prints each as one line (no traceback).

Each class is defined beside the code that raises it (so that low-level modules need not
import this one) and re-exported here; new user-facing errors are defined here. Library
code may import from here freely; it must never import ``fpt.cli``.

- ``ConfigError``: a configuration value that cannot be used (field, value, fix).
- ``DataError``: data that cannot be used as it is (file, column or row, fix).
- ``SchemaError``: inputs given to a trained model that do not match what it was trained on
  (a missing or extra column, an unseen category, a wrong image or series shape).
- ``CheckpointError``: a checkpoint, export or run-directory file that is missing, corrupt
  or cannot be written (file, remedy).
- ``RunDirBusyError``: another live process holds a run directory's writer lock.
- ``BodyUnavailableError``: pretrained weights cannot be loaded (no network, no cache).
- ``RegistryError``: an unknown task, body or freeze policy (lists the known ones).
- ``DependencyError``: an optional package a feature needs is not installed (names the pip command).
"""

from __future__ import annotations

from fpt.bodies.base import BodyUnavailableError
from fpt.config import ConfigError
from fpt.registry import RegistryError
from fpt.rundir import CheckpointError, RunDirBusyError
from fpt.tasks.base import DataError


class SchemaError(DataError):
    """Inputs that do not match the trained model's schema; the message names the file, column and fix.

    A ``DataError`` (and so a ``ValueError``): whoever catches data errors catches these too.
    """


class DependencyError(RuntimeError):
    """An optional dependency is missing (e.g. onnx for ``fpt export --onnx``); the message names the pip command."""


# What the command line reports as one line: these, and the OS errors of a path the user gave.
USER_ERRORS: tuple[type[BaseException], ...] = (
    ConfigError, RegistryError, BodyUnavailableError, CheckpointError, DataError, DependencyError,
    FileExistsError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError, ValueError)

__all__ = ["USER_ERRORS", "BodyUnavailableError", "CheckpointError", "ConfigError", "DataError", "DependencyError",
           "RegistryError", "RunDirBusyError", "SchemaError"]
