"""The frozen body as a feature map: the model of a closed-form fit (``fit=closed-form``; fitted by fpt.closed_form).

Dimension legend (as fpt.model):
    B  batch   T  tokens   D  body width   E  members (seeded input layers)
    P  pooled blocks       F  features = E * P * (sum of the poolings' widths) [+ T * d, the tokens themselves]

Each member is an input layer left at its seeded init (member e seeded by ``seed + e``; member 0 at gain 1 is the
input layer a gradient run would start from), times its gain (``cf_gains``: a series' 0.25 and 4 in turn). Every
member's tokens run through the one frozen body; the hidden states after each chosen block are pooled over the real
positions (mean, max, the last real token, flatten: every position side by side, zeros past the end, GPT4TS's
readout, or ppv: ROCKET's share of positions above each of a unit's fitted thresholds) and concatenated, member by
member, block by block, pooling by pooling, and (``inputs``) the tokens themselves after them, so the head can always
do what a linear model of the inputs does: (B, F). One linear layer, fitted in closed form, maps them to logits; the
standardisation of the features is folded into it, so the model a run saves, exports and puts into ONNX is this
module alone.

``ClosedForm`` holds the design's defaults, in one place: a ``cf_*`` config field left None takes its value from
here when the experiment is built (``resolve``), and config.yaml records the values used.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from fpt.bodies import Body
from fpt.config import RunConfig
from fpt.errors import ConfigError
from fpt.model import FEATURES, InputSpec, input_layer

Tensor = torch.Tensor
CLOSED_FORM = "closed-form"  # RunConfig.fit
POOLINGS = ("mean", "max", "last", "flatten", "ppv")
HEADS = ("ridge", "logistic")
HOPS = ("scale", "half", "one")
SERIES_NORMS = ("global", "alternate", "choose")


@dataclass(frozen=True)
class ClosedForm:
    """The closed-form fit's design: what ``cf_*`` config fields left unset become. Issue 40's prototype (GunPoint
    0.960, ArrowHead 0.726 on the archive split): mean and max of every block, three members, standardised, ridge
    with the penalty chosen by leave-one-out."""

    # blocks, poolings: round 1 of the cross-validation on the TRAIN files only (docs/results/own-data/closed-form/
    # study/table.md, 7 of the 12 sets). members, standardise, scales: round 2 (round2/study/table.md, all 12 sets,
    # bench/closed_form_study.py --plan round2, its rule declared before the figures: per axis the best mean rank,
    # then the winners and the combined recipes of at most 10 members against each other): E=10 at scales
    # 1,2,4,8,16, standardised, mean rank 2.04 against round 1's defaults' 4.42 (E=5, one scale, not standardised),
    # CV mean over the 8 series sets 0.838 against 0.795 (OSULeaf 0.732 against 0.558, ACSF1 0.610 against 0.563,
    # PickupGestureWiimoteZ 0.633 against 0.567), over the tables 0.838 against 0.831; lower on ArrowHead (0.806
    # against 0.826) and diabetes (R² 0.453 against 0.462). The merged members read fewer tokens: 10 members cost
    # 1.9 members' passes through the body at one scale (64 + 32 + 16 + 8 + 4 tokens, twice, against 5 x 64).
    # Round 3 (round3/study): the head's search (loo_guard below); its final step picks members 6-10 reading the
    # series' first difference (OSULeaf 0.858 against 0.730 by CV): ``difference``, a series' default.
    # The members' input init is the run's input_init (symbol sequences: their entry's closed_form in fpt.data.modalities).
    # Tried and not chosen: ROCKET's proportion of positive values (round 2: each unit's median over the training
    # positions; rounds 7 and 8 beside E=30's max, ``ppv_*`` below), mean+max, finer tokens, longer ladders (2..32),
    # E=20 (its twice as many features: the head's cost), and each series normalised by its own mean and std for
    # every member or half of them (round 10, round10/study: JapaneseVowels -16.8, BasicMotions -8.3 for every
    # member; PLAID +28.5 for half, but mean rank 1.86 against the default's 1.64 over 11 sets), also with the head
    # keeping the global tokens and each series' mean and std (round 11: BasicMotions -8.3, Pickup -6.0), and the
    # members' input layers a quarter or four times as large (round 12: mean rank 2.00 and 2.05 against 1.95).
    members: int = 10  # cf_members: E seeded input layers
    # cf_members of a --data run that reads at most ``small_reads`` example-tokens (every split's examples x tokens
    # per example; fpt.pipeline.resolved): round 6's TRAIN-only CV (round6/study/table.md, bench/closed_form_study.py
    # --plan round6, its rule declared before the figures) chose one head over three draws of E=10 (E=30: mean rank
    # 2.12 against E=10's 3.21, mean CV 0.851 against 0.849; ArrowHead 0.805 against 0.787, OSULeaf 0.878 against
    # 0.858, PickupGestureWiimoteZ 0.613 against 0.640). It reads three times the members, so only where item 5's
    # 60 s stays safe: the 1,000 x 1,000 series sitting (78,750 example-tokens) read its three feature maps in 26 s
    # at E=10 (speed/series-1000x1000-408e3f2.json), about 1e-3 s per example-token at E=30; 30,000 leaves 30 s of
    # reading. Every bundled set reads fewer (OSULeaf 26,962, ItalyPowerDemand 26,304); larger data keeps E=10.
    # And at most ``small_fitted`` fitted examples (train + validation): the heads' cost grows with their square
    # times the features, and a 1,500-row table (30,000 example-tokens, 1,200 fitted) took 54.7 s at E=30
    # (speed/table-1500x20-f9021c1.json), too close to 60; the bundled sets fit at most 455 (breast-cancer).
    small_members: int = 30
    small_reads: int = 30_000
    small_fitted: int = 1000
    # A design whose merged windows overlap (cf_hop half or one: a series' default since round 14) reads more body tokens
    # per member, so its members are chosen by what they read instead: the first of E=30, E=20, E=10 whose member-tokens
    # (every split's examples x the tokens all members read, ``member_tokens``) stay within ``read_budget`` (E=30 and E=20
    # also within ``small_fitted``: their heads' width), else (cf_series_norm=choose reading the odd members twice) E=10
    # reading them once (cf_series_norm=global) where that fits, else E=10 with the windows side by side (cf_hop=scale; a
    # run that gives cf_members keeps its hop and its reading). Round 15 (round15/study, its rule declared before the
    # figures): E=20 and E=10 at every token each beat the side-by-side E=30 (mean rank 1.18 and 1.32 against 1.82 and
    # 1.68, mean CV 0.842 and 0.832 against 0.814 over 11 series sets), and E=30 at every token beat both (0.851), so the
    # most members the budget allows. The budget is item 5's, from idle sittings (speed/, 2-core AMD EPYC, baselines and
    # controls): at 350,000 (what the side-by-side E=30 read at its gate's corner) each tier's corner took 24-26 s; at
    # 600,000 44-52 s (E=10's corner, 1,037 series of 1,000 points, 52.0 s), too close to 60.
    read_budget: int = 350_000
    overlap_members: tuple[int, ...] = (30, 20, 10)
    blocks: str = "0"  # cf_blocks: all | last | indices joined by ',' (negative from the end)
    poolings: str = "max"  # cf_poolings
    standardise: bool = True  # cf_standardise
    head: str = "ridge"  # cf_head: ridge | logistic
    inputs: bool = True  # cf_inputs: the tokens themselves beside the body's features (a linear model's inputs)
    # cf_scales: tokens merged per member token, cycled over the members (member e merges scales[e % len] consecutive
    # tokens into one, so its input layer reads a window that many times longer): ROCKET's dilations carried to fpt
    scales: str = "1,2,4,8,16"
    # cf_hop: how far a merged window moves between a member's tokens: "scale" (its whole width, windows side by side),
    # "half" or "one" (one token: every offset, as ROCKET's convolutions slide). A member at scale k reads
    # 1 + ceil((T - k) / hop) windows (the last zero-filled past the end), so "one" reads about twice the tokens of
    # "scale" over the ladder 1..16 (294 against 124 for T = 64), "half" about 1.5 times (184).
    hop: str = "scale"
    # cf_series_norm: what the members of a time series read of its level and scale. "global": every member the
    # tokens as the tokeniser normalised them (series_norm: the training split's mean and std per channel, fpt's
    # default); "alternate": the odd members (e % 2 == 1) each example's every channel normalised by its own mean and
    # std over its real tokens' points (``per_series``; inside the model, so a saved run reads new inputs the same
    # way), the even members and the tokens (cf_inputs) as normalised; "choose": the odd members read both ways and
    # the head fitted on each set of columns, the one with the lower leave-one-out error kept (fpt.closed_form.solve:
    # the other's weights are zeros; info's ``series_norm_kept``). A series' default is "choose" (its entry in
    # fpt.data.modalities declares it): round 18 (round18/study, its rule declared before the figures) over 11
    # series sets, TRAIN files only: mean rank 1.91 and mean CV 0.863 against the default's 2.18 and 0.851 (PigCVP
    # +10.6, PickupGestureWiimoteZ +2.7, no set lower; PLAID, beside the rule, +29.8); "alternate" alone tied it on
    # rank (1.91) and lost JapaneseVowels 0.5. A level or scale that is the class (JapaneseVowels, BasicMotions) keeps
    # the global reading; an appliance's or a patient's own scale (PLAID, PigCVP) takes the per-series one. It reads
    # the odd members twice (1.5 times the members' tokens, counted in ``read_budget``). "global" here is every other
    # run's (tables, images, symbols), and runs saved before the field existed (fpt.config.from_saved).
    series_norm: str = "global"
    # cf_difference: members e >= E - E // 2 read the series' first difference (MultiRocket's habit), the tokens
    # (inputs) the series. The tokeniser cuts both (fpt.data.tokenisers.SeriesTokens: each token the series' window,
    # then the difference's), so a saved run reads new inputs the same way. Round 3's TRAIN-only CV
    # (round3/study/table.md, with tokens unscaled and ties): mean 0.849 against 0.831, OSULeaf 0.858 against 0.730,
    # GunPoint +2.0, ArrowHead -1.9. The default for a --data series (its entry in fpt.data.modalities declares it),
    # decided when the series is tokenised, before this design is resolved; False here is every other run's (tables,
    # images, symbols, the paper's tasks, and runs saved before it existed, whose data.json holds no difference).
    difference: bool = False
    # cf_gains: member e's linear input layer multiplied by gains[r % len], r its rung: its place in the scale ladder
    # (e % len(scales)), counted on after the series' rungs for a member that reads the first difference, so one
    # draw of the ladder (E = 10: r = e) alternates its gains and the head picks among them, as ROCKET draws each
    # kernel's scale. Round 12 (round12/study) found no one gain best (x 0.25 and x 4 each moved sets by up to 5
    # points, both ways); round 13 (round13/study, its rule declared before the figures) chose 0.25,4 in turn: mean
    # rank 1.77 against 2.23 for the layers as drawn over 11 series sets, mean CV 0.814 against 0.813. The default
    # for a --data series (its entry in fpt.data.modalities declares it); "1" here is every other run's (tables,
    # images, symbols: the study read series only), and runs saved before it existed (fpt.config.from_saved).
    gains: str = "1"
    # cf_hop's default for a series is "one" (its entry in fpt.data.modalities declares it): round 14 (round14/study,
    # its rule declared before the figures) chose it over "half" and "scale" at E=30: mean rank 1.36 against 1.82
    # and 2.82, mean CV 0.851 against 0.834 and 0.814 over 11 series sets, no set lower (PickupGestureWiimoteZ +10.7,
    # PigCVP +9.3, Trace +6.7, OSULeaf +6.0, ACSF1 +2.7, GunPoint +2.0, ArrowHead +1.9). "scale" here is every
    # other run's (tables, images, symbols: the study read series only) and runs saved before it existed.
    # Not config fields: the search the head's fit makes (cf-study may change them here).
    alphas: tuple[float, ...] = tuple(10.0 ** k for k in range(-3, 7))  # ridge penalties, chosen by leave-one-out
    # The tokens' columns (cf_inputs) multiplied by each of these after standardisation, the best (with its penalty)
    # chosen by leave-one-out: a few input columns beside thousands of body features are otherwise shrunk with them
    # (diabetes: 10 beside 3,840; round 2's benchmark picked x10 or x100 there). Round 5 (round5/study, TRAIN-only
    # CV, 12 sets): reaching further (x1000, x10000, and x10000 with penalties to 1e8) lost, diabetes R² 0.462 against
    # 0.466 and every other set equal; leave-one-out picks the body's features there (penalty 1e4-1e5), not the
    # tokens' own linear model (ridge of the tokens alone by the same CV: 0.458).
    input_scales: tuple[float, ...] = (1.0, 10.0, 100.0)
    # How leave-one-out picks the penalty (fpt.ridge.pick): "least" error; "ties": the largest penalty within 0.1 % of
    # the least; "one-se": the largest within one standard error. Round 3 (round3/study): least (one-se lost its axis,
    # 2.12 against 1.88; ties alone 2.00).
    penalty_rule: str = "least"
    # Fits whose leave-one-out figure is rounding (1 - H_ii below fpt.ridge.RELIABLE) never picked. Round 3: the
    # study's final step among what the library runs (round3/study/table.md, bench/closed_form_study.py --plan
    # round3): mean rank 3.33 against round 2's 3.75, CV 0.839 against 0.831, no set lower (BasicMotions 1.000
    # against 0.950, PickupGestureWiimoteZ 0.633 against 0.580, where round 2's search picked the tokens x100 at
    # penalty 1e-3 on a figure of rounding: its benchmark's BasicMotions seed 0, 0.70). Round 3's first benchmark
    # ran the tokens unscaled with ties instead (diabetes R² 0.498 against round 2's 0.531; round3/README.md).
    loo_guard: bool = True
    # The head also fitted on the first m members' features alone (and the tokens), for each m here, and the members
    # kept chosen with the penalty by leave-one-out (up to ``choose_up_to`` fitted examples). Round 3: none (5 or 10
    # by leave-one-out lost: BasicMotions 0.808 against 0.950, PickupGestureWiimoteZ 0.547 against 0.580).
    member_choices: tuple[int, ...] = ()
    choose_up_to: int = 2000
    # Above this many fitted examples the ridge head searches its penalty and the tokens' scale by leave-one-out over
    # a seeded, stratified subsample of this many (fpt.closed_form.subsample: the controls' 2,000 rows, CONTROLS_UP_TO),
    # then is fitted at them on every example (fpt.ridge.ridge_loo_at); None: over every example. The search's
    # eigendecomposition of the 3,880 x 3,880 covariance was 14.6 of the 10,000-row table's 73 s (speed/). Adopted by
    # its rule, declared before the figures (search-rows/, bench/closed_form_search_rows.py: nested 5-fold CV on
    # TRAIN of four large tables): mean +0.006 against the search over every row, worst set -0.001
    # (classification-10k), linear-10k +2.3 points (the subsample chose 1e5-1e6 where every row chose 1e4).
    search_rows: int | None = 2000
    cs: tuple[float, ...] = tuple(10.0 ** k for k in range(-4, 3))  # logistic inverse penalties, chosen by k-fold
    folds: int = 5  # k of the k-fold figures (the logistic head's search, and the per-fold scores the controls use)
    max_values: int = 2**30  # examples x features held in memory (4 GiB of float32); beyond it, a one-line error
    # ppv pooling (ROCKET's proportion of positive values): per unit of a pooled block, the share of the real positions
    # where it exceeds each threshold, the unit's quantiles over the real positions of at most ``ppv_examples`` of
    # the training examples (seeded; fpt.closed_form.fit_thresholds), fitted once per fit like the head and saved
    # with it. Round 7 (round7/study, TRAIN-only CV, its rule declared first) measured it beside E=30's max for every
    # set: ACSF1 +11.3 points, ArrowHead -3.5, PickupGestureWiimoteZ -2.0, iris -1.9; mean rank 2.12 against 1.79, so
    # not a default (poolings stays max); an option for data like ACSF1 (how often a shape occurs).
    ppv_quantiles: tuple[float, ...] = (0.25, 0.5, 0.75)
    ppv_examples: int = 256
    # With ppv pooling the ridge head is also fitted without its columns, and the set kept chosen by leave-one-out
    # with the penalty (up to ``choose_up_to`` fitted examples; a tie keeps the head without ppv). Round 8
    # (round8/study): the choice keeps ACSF1's +11.3 and costs at most 0.7 elsewhere (ArrowHead 0.0 against round
    # 7's -3.5); higher on 2 sets, lower on 6: mean rank 1.67 against 1.33, so ppv is still not a default.
    ppv_choice: bool = True


DEFAULTS = ClosedForm()
FIELDS = {"cf_members": "members", "cf_blocks": "blocks", "cf_poolings": "poolings", "cf_standardise": "standardise",
          "cf_head": "head",
          "cf_inputs": "inputs", "cf_scales": "scales", "cf_hop": "hop", "cf_difference": "difference",
          "cf_gains": "gains", "cf_series_norm": "series_norm"}


def resolve(config: RunConfig, size: tuple[int, int, int] | None = None) -> RunConfig:
    """``config`` with every ``cf_*`` field left None set to ``DEFAULTS``' value (so config.yaml records it);
    ``size``: a --data run's (example-tokens: every split's examples x tokens per example, fitted examples, tokens
    per example), which decides the members left unset: with the windows side by side (cf_hop=scale), within
    ``DEFAULTS.small_reads`` and ``DEFAULTS.small_fitted`` ``DEFAULTS.small_members``; with overlapping windows the
    first of ``DEFAULTS.overlap_members`` within ``DEFAULTS.read_budget`` (else E=10 at every token reading the
    tokens as normalised, cf_series_norm=global, where that fits; else E=10 side by side)."""
    changes = {name: getattr(DEFAULTS, attr) for name, attr in FIELDS.items() if getattr(config, name) is None}
    if "cf_members" in changes and size is not None:
        hop = changes.get("cf_hop", config.cf_hop)
        if hop == "scale":
            if size[0] <= DEFAULTS.small_reads and size[1] <= DEFAULTS.small_fitted:
                changes["cf_members"] = DEFAULTS.small_members
        else:
            scales = scale_factors(changes.get("cf_scales", config.cf_scales))
            examples, fitted, tokens = size[0] // max(size[2], 1), size[1], size[2]
            norm = changes.get("cf_series_norm", config.cf_series_norm)
            fits = [m for m in DEFAULTS.overlap_members
                    if examples * member_tokens(tokens, m, scales, hop, norm) <= DEFAULTS.read_budget
                    and (m <= DEFAULTS.members or fitted <= DEFAULTS.small_fitted)]
            changes["cf_members"] = fits[0] if fits else DEFAULTS.members
            if not fits and norm == "choose" \
                    and examples * member_tokens(tokens, DEFAULTS.members, scales, hop) <= DEFAULTS.read_budget:
                # past the budget with the odd members read twice, within it read once: the hop is worth more than
                # the choice (TRAIN-only CV: at every token against side by side +3.7 points of mean CV, round 14;
                # choose against global +1.2, round 18), so the members read the tokens as normalised
                changes["cf_series_norm"] = "global"
            elif not fits:  # past the budget even at E=10: the windows side by side (give cf_members to keep the hop)
                changes["cf_hop"] = "scale"
    return dataclasses.replace(config, **changes) if changes else config


def member_tokens(tokens: int, members: int, scales: tuple[int, ...], hop: str, series_norm: str = "global") -> int:
    """Body tokens one example costs ``members`` members at ``scales`` (cycled) and ``hop`` over ``tokens`` tokens
    (``series_norm`` "choose": the odd members read twice, ``member_reads``)."""
    return sum(windows(tokens, k, hop_tokens(hop, k)) for k in (min(scales[e % len(scales)], tokens)
                                                               for e, _ in member_reads(members, series_norm)))


def member_reads(members: int, series_norm: str) -> tuple[tuple[int, bool], ...]:
    """What the members read, in the features' order: (member, normalised per series) per read (``cf_series_norm``:
    "global" each member once as tokenised; "alternate" the odd ones per series; "choose" each once as tokenised,
    then the odd ones again per series)."""
    if series_norm == "alternate":
        return tuple((e, e % 2 == 1) for e in range(members))
    plain = tuple((e, False) for e in range(members))
    return plain + tuple((e, True) for e in range(1, members, 2)) if series_norm == "choose" else plain


def per_series(x: Tensor, lengths: Tensor | None, patch: int) -> Tensor:
    """Series tokens (B, T, c * patch), each token c channels' windows of ``patch`` points side by side, with every
    example's every channel normalised by its own mean and std over its real tokens' points (a constant channel to
    0, as one whose spread is float32 rounding): the tokeniser's series_norm=series, whatever normalisation the
    tokens came with (a z-score does not see an affine map of its input). Zeros past each length, as the tokeniser
    pads; a last token's zero-filled points count among the points (at most patch - 1 of a series' values, about 1
    in 64)."""
    b, t, d = x.shape
    v = x.float().reshape(b, t, d // patch, patch)  # (B, T, c, patch)
    real = (torch.ones(b, t, device=x.device) if lengths is None
            else (torch.arange(t, device=x.device)[None, :] < lengths[:, None]).float())[:, :, None, None]
    count = (real.sum(1) * patch).clamp_min(1)  # (B, 1, 1): points per channel
    mean = (v * real).sum((1, 3), keepdim=True) / count[:, None]  # (B, 1, c, 1)
    std = ((((v - mean) ** 2) * real).sum((1, 3), keepdim=True) / count[:, None]).sqrt()
    # a constant channel's float32 rounding is not a scale: left at 0, not blown up to +-1
    flat = std <= 1e-6 * (1 + mean.abs())
    return (((v - mean) / torch.where(flat, torch.ones_like(std), std)) * real).reshape(b, t, d)


def options(config: RunConfig) -> ClosedForm:
    """The design a (resolved or not) config asks for, checked."""
    config = resolve(config)
    chosen = dataclasses.replace(DEFAULTS, **{attr: getattr(config, name) for name, attr in FIELDS.items()})
    pooling_names(chosen.poolings)
    scale_factors(chosen.scales)
    gain_factors(chosen.gains)
    if chosen.series_norm not in SERIES_NORMS:
        raise ConfigError(f"config field 'cf_series_norm'={chosen.series_norm!r} must be one of {', '.join(SERIES_NORMS)}")
    if chosen.hop not in HOPS:
        raise ConfigError(f"config field 'cf_hop'={chosen.hop!r} must be one of {', '.join(HOPS)}")
    if chosen.head not in HEADS:
        raise ConfigError(f"config field 'cf_head'={chosen.head!r} must be one of {', '.join(HEADS)}")
    return chosen


def scores_only(fit: str | None, head: str | None) -> bool:
    """Whether a run of ``fit`` with head ``head`` gives class scores that are not probabilities: a closed-form fit's
    ridge head (a regression onto one-hot classes, as scikit-learn's RidgeClassifier, which has no predict_proba)."""
    return fit == CLOSED_FORM and head != "logistic"


def pooling_names(text: str) -> tuple[str, ...]:
    names = tuple(p.strip() for p in str(text).split(",") if p.strip())
    bad = [p for p in names if p not in POOLINGS]
    if not names or bad or len(set(names)) != len(names):
        raise ConfigError(f"config field 'cf_poolings'={text!r}: give poolings from {', '.join(POOLINGS)} joined by "
                          "',' each once (e.g. mean,max)")
    return names


def scale_factors(text: str) -> tuple[int, ...]:
    """The token-merge factors ``cf_scales`` names (e.g. 1,2,4,8,16), each >= 1."""
    try:
        factors = tuple(int(p) for p in str(text).split(",") if p.strip())
    except ValueError:
        factors = ()
    if not factors or min(factors) < 1:
        raise ConfigError(f"config field 'cf_scales'={text!r}: give whole numbers >= 1 joined by ',' (tokens merged "
                          "per member token, cycled over the members; e.g. 1,2,4,8,16)")
    return factors


def gain_factors(text: str) -> tuple[float, ...]:
    """The input layers' gains ``cf_gains`` names (e.g. 0.25,4), each a finite number > 0."""
    try:
        gains = tuple(float(part) for part in text.split(","))
    except ValueError:
        gains = ()
    if not gains or not all(0 < g < float("inf") for g in gains):
        raise ConfigError(f"config field 'cf_gains'={text!r}: give numbers > 0 joined by ',' (each member's input "
                          "layer multiplied by one, along the scale ladder; 1: as drawn), e.g. 0.25,4")
    return gains


def hop_tokens(hop: str, k: int) -> int:
    """Tokens between one merged window of ``k`` tokens and the next (``cf_hop``)."""
    return {"scale": k, "half": -(-k // 2), "one": 1}[hop]


def windows(length: int | Tensor, k: int, hop: int) -> int | Tensor:
    """Merged windows of ``k`` tokens every ``hop`` over ``length`` tokens: 1 + ceil((length - k) / hop), at least 1
    (the tokeniser's count: the last window may run past the end, zero-filled)."""
    if isinstance(length, Tensor):
        return 1 + torch.div((length - k).clamp_min(0) + hop - 1, hop, rounding_mode="floor")
    return 1 + max(0, -(-(length - k) // hop))


def merge_tokens(x: Tensor, lengths: Tensor | None, k: int, hop: int | None = None) -> tuple[Tensor, Tensor | None]:
    """Windows of ``k`` consecutive tokens, every ``hop`` tokens (default ``k``: side by side), each as one token:
    (B, T, d) -> (B, windows(T, k, hop), k * d), zeros past the last; a length counts the windows starting at a real
    token within the real windows' count."""
    hop = k if hop is None else hop
    if k == 1:
        return x, lengths
    n = windows(x.shape[1], k, hop)
    x = nn.functional.pad(x, (0, 0, 0, (n - 1) * hop + k - x.shape[1]))  # (B, (n - 1) * hop + k, d)
    if hop < k:  # window i holds tokens i * hop .. i * hop + k - 1: (B, n, k, d)
        x = x.unfold(1, k, hop).transpose(2, 3)
    x = x.reshape(x.shape[0], n, k * x.shape[-1])  # (B, n, k * d), token by token
    return x, None if lengths is None else windows(lengths, k, hop)


def block_indices(text: str, blocks: int) -> tuple[int, ...]:
    """The blocks (0-based, ascending) that ``cf_blocks`` names for a body of ``blocks`` blocks."""
    text = str(text).strip()
    if text == "all":
        return tuple(range(blocks))
    if text == "last":
        return (blocks - 1,)
    try:
        wanted = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        wanted = []
    inside = all(-blocks <= i < blocks for i in wanted)
    chosen = sorted({i % blocks for i in wanted})
    if not wanted or not inside or len(chosen) != len(wanted):  # out of range, or one block named twice
        raise ConfigError(f"config field 'cf_blocks'={text!r}: give all, last, or block indices in "
                          f"{-blocks}..{blocks - 1} joined by ',' (this body has {blocks} blocks)")
    return tuple(chosen)


class FeatureMap(nn.Module):
    """E seeded input layers -> the frozen body -> pooled block states, and the tokens (B, F) -> a linear head (B, m, C)."""

    def __init__(self, body: Body, spec: InputSpec, design: ClosedForm, seed: int, input_init: str,
                 padding: str, series_patch: int | None = None) -> None:
        super().__init__()
        if spec.num_outputs != 1:
            raise ConfigError(f"fit=closed-form pools every token into one output, but this task reads "
                              f"{spec.num_outputs} output tokens; use fit=gradient")
        # cf_difference: each token is the series' window then its first difference's (fpt.data.tokenisers)
        self.difference = design.difference
        self.series_dim = spec.token_dim // 2 if design.difference and spec.token_dim else spec.token_dim
        if design.difference and (spec.token_dim is None or spec.token_dim % 2):
            raise ConfigError("config field 'cf_difference'=true reads a time series' first difference; this task's "
                              "inputs are not a series tokenised with it: drop cf_difference")
        self.spec = spec
        self.body = body
        self.layers = len(body.blocks)
        self.padding = padding
        self.readout = "pooled"
        self.poolings = pooling_names(design.poolings)
        self.blocks = block_indices(design.blocks, self.layers)
        # symbol ids are not merged (an embedding reads one id); no member merges more tokens than there are
        factors = scale_factors(design.scales) if spec.token_dim is not None else (1,)
        self.scales = tuple(min(factors[e % len(factors)], spec.seq_len) for e in range(design.members))
        self.hops = tuple(hop_tokens(design.hop, k) for k in self.scales)
        # each member's tokens: the merged windows it reads of the task's seq_len tokens
        self.positions = tuple(windows(spec.seq_len, k, h) for k, h in zip(self.scales, self.hops, strict=True))
        self.members = design.members
        # cf_series_norm: what each read of a member takes (``member_reads``); ``series_patch`` the points per channel
        # of a token (the run's series_patch), which per-series normalisation needs to find each channel's points
        self.series_norm = design.series_norm
        self.patch = series_patch
        if design.series_norm != "global" and (spec.token_dim is None or not series_patch
                                               or self.series_dim % series_patch):
            raise ConfigError(f"config field 'cf_series_norm'={design.series_norm!r} normalises each time series by its "
                              "own mean and std; this task's inputs are not a series: set cf_series_norm=global")
        self.reads = member_reads(design.members, design.series_norm)
        self.first_difference = design.members - design.members // 2 if design.difference else design.members
        self.gains = self.member_gains(gain_factors(design.gains), len(factors))
        if spec.token_dim is None and set(self.gains) != {1.0}:
            raise ConfigError(f"config field 'cf_gains'={design.gains!r} multiplies a linear input layer, but this "
                              "task's tokens are symbol ids read by an embedding table: drop cf_gains")
        members = []
        one = dataclasses.replace(spec, token_dim=self.series_dim)  # what one member reads of a token
        for e, k in enumerate(self.scales):
            merged = one if k == 1 else dataclasses.replace(one, seq_len=self.positions[e],
                                                            token_dim=k * self.series_dim, num_outputs=1)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed + e)  # member 0 at gain 1: the input layer build_model gives a gradient run
                layer = input_layer(merged, body.width, input_init)
            if self.gains[e] != 1.0:
                with torch.no_grad():  # the seeded draw, scaled (round 12's study scaled the weight alone; bias 0)
                    layer.weight.mul_(self.gains[e])
            members.append(layer)
        self.input = nn.ModuleList(members)  # "input.*": the input group of fpt.freeze
        # ppv's thresholds per member: (pooled blocks, quantiles, D), set by fpt.closed_form.fit_thresholds before the
        # features are read; "thresholds.*" are saved with the input layers and the head (``trainable``)
        self.ppv_quantiles = design.ppv_quantiles if "ppv" in self.poolings else ()
        if self.ppv_quantiles:
            self.thresholds = nn.ParameterList(
                [nn.Parameter(torch.zeros(len(self.blocks), len(self.ppv_quantiles), body.width), requires_grad=False)
                 for _ in self.reads])
        self.inputs = design.inputs
        self.head = nn.Linear(self.num_features, spec.per_token * spec.num_classes)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def member_gains(self, gains: tuple[float, ...], rungs: int) -> tuple[float, ...]:
        """Each member's input-layer gain (``cf_gains``): member e's rung is e % ``rungs`` (its scale's place in the
        ladder), plus ``rungs`` where it reads the first difference; its gain gains[rung % len]."""
        return tuple(gains[(e % rungs + (rungs if e >= self.first_difference else 0)) % len(gains)]
                     for e in range(self.members))

    def pooling_width(self, e: int, pooling: str) -> int:
        """Features one of member ``e``'s pooled blocks gives by ``pooling`` (flatten: one set per merged token)."""
        units = {"mean": 1, "max": 1, "last": 1, "ppv": len(self.ppv_quantiles)}
        return (self.positions[e] if pooling == "flatten" else units[pooling]) * self.body.width

    def member_width(self, e: int) -> int:
        """Features member ``e`` gives."""
        return len(self.blocks) * sum(self.pooling_width(e, p) for p in self.poolings)

    def read_widths(self) -> list[int]:
        """Features each read gives, in the features' order (``reads``: each member once, unless cf_series_norm=choose)."""
        return [self.member_width(e) for e, _ in self.reads]

    def norm_columns(self) -> dict[str, np.ndarray] | None:
        """cf_series_norm=choose: the columns of each reading the head chooses between, "global" (every member as
        tokenised) and "alternate" (the odd members per series instead), member by member, the tokens last (the
        features of the same design with cf_series_norm global or alternate, in their order); else None."""
        if self.series_norm != "choose":
            return None
        starts = np.cumsum([0, *self.read_widths()])
        tokens = np.arange(starts[-1], starts[-1] + self.input_features)

        def of(kept: list[int]) -> np.ndarray:
            return np.concatenate([*(np.arange(starts[r], starts[r + 1]) for r in kept), tokens])

        alternate = [self.reads.index((e, e % 2 == 1)) for e in range(self.members)]
        return {"global": of(list(range(self.members))), "alternate": of(alternate)}

    def columns_without(self, pooling: str) -> np.ndarray:
        """The feature columns (ascending) other than ``pooling``'s: every member's other poolings, and the tokens."""
        keep, start = [], 0
        for e, _ in self.reads:
            for _ in self.blocks:
                for name in self.poolings:
                    width = self.pooling_width(e, name)
                    if name != pooling:
                        keep.append(np.arange(start, start + width))
                    start += width
        keep.append(np.arange(start, start + self.input_features))
        return np.concatenate(keep)

    @property
    def input_features(self) -> int:
        """Features the tokens themselves give: T * d values, or a count per symbol id (0 if ``inputs`` is off)."""
        if not self.inputs:
            return 0
        spec = self.spec
        return spec.seq_len * self.series_dim if spec.token_dim is not None else spec.vocab_size

    @property
    def num_features(self) -> int:
        return sum(self.read_widths()) + self.input_features

    def token_features(self, x: Tensor, lengths: Tensor | None) -> Tensor:
        """The tokens as features (B, T * d), zeros past each length; symbol ids as counts (B, V), padding (0) not
        counted."""
        mask = self.pad_mask(x, lengths)
        if self.spec.vocab_size is not None:
            ids = x if mask is None else x.masked_fill(~mask, 0)
            counts = torch.zeros(x.shape[0], self.spec.vocab_size, device=x.device)
            counts.scatter_add_(1, ids.long(), torch.ones_like(ids, dtype=counts.dtype))
            counts[:, 0] = 0  # padding
            return counts
        x = x.float() if mask is None else x.float().masked_fill(~mask[..., None], 0.0)
        x = nn.functional.pad(x, (0, 0, 0, self.spec.seq_len - x.shape[1]))  # (B, T, d)
        return x.reshape(x.shape[0], -1)

    def pad_mask(self, x: Tensor, lengths: Tensor | None) -> Tensor | None:
        if lengths is None or self.padding == "ignore":
            return None
        return torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]  # (B, T)

    def pool(self, h: Tensor, mask: Tensor | None, lengths: Tensor | None, seq_len: int,
             thresholds: Tensor | None = None, poolings: tuple[str, ...] | None = None) -> list[Tensor]:
        """One block's states (B, T, D) as the poolings' features, each (B, width); ``thresholds`` (q, D): ppv's."""
        out = []
        for name in poolings or self.poolings:
            if name == "ppv":  # the share of real positions above each threshold: (B, q * D), threshold by threshold
                above = (h[:, :, None, :] > thresholds[None, None]).to(h.dtype)  # (B, T, q, D)
                if mask is None:
                    out.append(above.mean(1).flatten(1))
                else:
                    w = mask[..., None, None].to(h.dtype)  # (B, T, 1, 1)
                    out.append(((above * w).sum(1) / w.sum(1).clamp_min(1)).flatten(1))
                continue
            if name == "mean":
                if mask is None:
                    out.append(h.mean(1))  # (B, D)
                else:
                    w = mask[..., None].to(h.dtype)  # (B, T, 1)
                    out.append((h * w).sum(1) / w.sum(1).clamp_min(1))  # (B, D)
            elif name == "max":
                out.append((h if mask is None else h.masked_fill(~mask[..., None], float("-inf"))).amax(1))
            elif name == "last":
                last = (lengths - 1 if lengths is not None and mask is not None
                        else torch.full((h.shape[0],), h.shape[1] - 1, device=h.device))
                out.append(h[torch.arange(h.shape[0], device=h.device), last])  # (B, D)
            else:  # flatten: every position's own weights; a shorter (or trimmed) batch is zero-filled to T
                if mask is not None:
                    h = h.masked_fill(~mask[..., None], 0.0)
                h = nn.functional.pad(h, (0, 0, 0, seq_len - h.shape[1]))  # (B, T, D)
                out.append(h.reshape(h.shape[0], -1))  # (B, T * D)
        return out

    def series(self, x: Tensor, e: int | None = None) -> Tensor:
        """What member ``e`` reads of the tokens (B, T, d): the series' windows, or (``e`` >= ``first_difference``)
        its first difference's; ``e`` None: the series' (the tokens' own features)."""
        if not self.difference:
            return x
        return x[..., self.series_dim:] if e is not None and e >= self.first_difference else x[..., :self.series_dim]

    def groups(self) -> list[tuple[int, ...]]:
        """The reads (``reads``' indices, ascending: each a member) of the same tokens (one scale, the series or its
        difference, normalised per series or not): each group runs through the body as one batch (B * reads, T, D),
        so a traced graph (ONNX) holds one body per group, not per member, and the body's matrix products are
        larger."""
        by: dict[tuple[int, int, bool, bool], list[int]] = {}
        for r, (e, norm) in enumerate(self.reads):
            key = (self.scales[e], self.hops[e], self.difference and e >= self.first_difference, norm)
            by.setdefault(key, []).append(r)
        return sorted((tuple(g) for g in by.values()), key=lambda g: g[0])

    def group_features(self, group: tuple[int, ...], x: Tensor, lengths: Tensor | None = None,
                       poolings: tuple[str, ...] | None = None) -> list[Tensor]:
        """Each read of ``group``'s pooled features (B, F / E) (reads of one scale and source, ``groups``);
        ``poolings``: these instead of the design's (flatten: the states ppv's thresholds are fitted on)."""
        first, norm = self.reads[group[0]]
        x = self.series(x, first)
        if norm:
            x = per_series(x, lengths, self.patch)
        k, hop = self.scales[first], self.hops[first]
        if k > 1:
            x, lengths = merge_tokens(x.float(), lengths, k, hop)  # (B, windows, k * d)
        mask = self.pad_mask(x, lengths)
        n, batch = len(group), x.shape[0]
        h = self.body.embed(torch.cat([self.input[self.reads[r][0]](x) for r in group]))  # (n * B, T, D), read by read
        masks = None if mask is None else mask.repeat(n, 1)  # (n * B, T)
        parts: list[list[Tensor]] = [[] for _ in group]
        for i in range(self.blocks[-1] + 1):  # blocks past the last pooled one are never run
            h = self.body.block(i, h, masks)  # (n * B, T, D)
            if i in self.blocks:
                j = self.blocks.index(i)
                for m, r in enumerate(group):
                    parts[m] += self.pool(h[m * batch:(m + 1) * batch], mask, lengths, self.positions[first],
                                          self.thresholds[r][j] if self.ppv_quantiles else None, poolings)
        return [torch.cat(p, dim=-1) for p in parts]

    def member_features(self, r: int, x: Tensor, lengths: Tensor | None = None,
                        poolings: tuple[str, ...] | None = None) -> Tensor:
        """Read ``r``'s pooled features (B, F / E), read alone (read r is member r unless cf_series_norm=choose)."""
        return self.group_features((r,), x, lengths, poolings)[0]

    def _all_members(self, x: Tensor, lengths: Tensor | None, poolings: tuple[str, ...] | None = None) -> list[Tensor]:
        """Every read's features, in the reads' order, read group by group."""
        got = {r: f for group in self.groups()
               for r, f in zip(group, self.group_features(group, x, lengths, poolings), strict=True)}
        return [got[r] for r in range(len(self.reads))]

    def block_states(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        """Every member's pooled blocks' states side by side, zeros past each end (B, sum over members of P * T_e *
        D): what ppv's thresholds are fitted on (fpt.closed_form.fit_thresholds)."""
        return torch.cat(self._all_members(x, lengths, ("flatten",)), dim=-1)

    def features(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        """Every member's features side by side, member by member (B, 1, F): what the head reads."""
        parts = self._all_members(x, lengths)
        if self.inputs:
            parts.append(self.token_features(self.series(x), lengths).to(parts[0].dtype if parts else torch.float32))
        return torch.cat(parts, dim=-1)[:, None]

    def forward(self, x: Tensor, lengths: Tensor | None = None, start: int = 0) -> Tensor:
        """Logits (B, m, C); ``start`` FEATURES: ``x`` is already the features (B, 1, F)."""
        feats = x if start == FEATURES else self.features(x, lengths)  # (B, 1, F)
        # The head in fp32 whatever the run's precision: it was solved in float64 with the standardisation folded in
        # (W / std, b - W mean / std), whose terms cancel; under bf16 autocast predict/eval rounded it to 3 digits
        # (a regression's test MSE 6e4 times the one the fit reported, which evaluated the head in fp32)
        with torch.autocast(feats.device.type, enabled=False):
            out = self.head(feats.float())  # (B, 1, m * C)
        return out.view(out.shape[0], -1, self.spec.num_classes)  # (B, m, C)


def trainable(model: nn.Module) -> None:
    """The pieces a closed-form fit sets (members' input layers, the head) marked trained, the body frozen: so the
    checkpoint holds them and the body fingerprint covers the body alone."""
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith(("input.", "head.", "thresholds.")))


__all__ = ["CLOSED_FORM", "DEFAULTS", "HOPS", "POOLINGS", "SERIES_NORMS", "ClosedForm", "FeatureMap", "block_indices",
           "gain_factors", "hop_tokens", "member_reads", "member_tokens", "merge_tokens", "windows", "options",
           "per_series", "pooling_names", "resolve", "scale_factors", "trainable"]
