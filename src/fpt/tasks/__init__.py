"""Tasks. Adding one is a new module here with ``@TASKS.register(name)``; nothing else."""

from fpt.registry import import_submodules
from fpt.tasks.base import TASKS, Batch, TaskData, build_task, task_defaults

import_submodules(__name__)

__all__ = ["TASKS", "Batch", "TaskData", "build_task", "task_defaults"]
