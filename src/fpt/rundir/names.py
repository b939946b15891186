"""The names of a run directory's files and folders (fpt.rundir lays them out)."""

CONFIG = "config.yaml"  # the resolved RunConfig
METRICS = "metrics.jsonl"  # one row per evaluation
SUMMARY = "summary.json"  # the final scores, written when training ends
DATA = "data.json"  # --data runs: the fitted tokeniser, class map and target scaler
DATA_FINGERPRINT = "data_fingerprint.json"  # --data runs: a content hash of the data (fpt.data.fingerprint)
SELECTION_FILE = "selection.json"  # --choose: what was compared and what won
SELECTION_RUN = "selection"  # --refit: the first run (it chose the step count), inside the refit run's directory
LOCK_FILE = "run.lock"  # the writer lock while a process writes the run
ENSEMBLE = "ensemble.json"  # a seed ensemble's directory: its members' runs, in MEMBERS/seedS
MEMBERS = "members"
CONTROLS = "controls"  # a closed-form run's controls (fpt.baselines): CONTROLS/random-body, CONTROLS/no-lm, runs each
# summary.json's key from the start of fitting a run's baselines (fpt.baselines) until they are written beside it:
# a run stopped (killed, Ctrl-C) there is not finished, and its resume fits them (what was asked: fast or all)
BASELINES_PENDING = "baselines_pending"
BODY_DIR = "body"  # a whole trained body (fpt pretrain, Table 9's pretraining runs): BODY_META and BODY_FILE
BODY_FILE, BODY_META = "body.safetensors", "body.json"
# The checkpoint slots and the files of one checkpoint version (fpt.checkpoint reads and writes them).
LATEST, BEST = "checkpoint", "best"
SLOTS = (LATEST, BEST)
POINTER = "current"  # a slot's committed version
STATE = "state.json"
TRAINABLE, OPTIMIZER, RNG = "trainable.safetensors", "optimizer.safetensors", "rng.safetensors"
