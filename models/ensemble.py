"""Several trained card networks as one ONNX model: members see the same crop, their softmax
outputs are averaged.

Why: networks trained on differently augmented data make different mistakes on deck designs they
have never seen (one reads orell's full-bleed jacks as backs, another younestouati's giant 4♠ as a
queen); the average of their probabilities is right more often than any one of them. Merging them
into one graph keeps the runtime unchanged: one onnxruntime session, the same ``logits`` and
``embedding`` outputs, one sidecar, one file to ship.

The merged graph's outputs:
- ``logits``: log of the mean member probability (a valid logit: softmax gives the mean back);
- ``embedding``: the members' L2-normalised embeddings side by side, scaled by 1/sqrt(k) so the
  whole vector has unit length (deck enrolment compares cosines);
- ``index_logits`` (where members are marked ``index``): the same average over the members that
  read the corner indices alone. A covered card's completed crop keeps its corners but loses its
  middle, which a whole-card member then reads as a card it never saw; the index members' answer
  is the one to weigh there (``vision.identify``).

Member recipes are written as ``key=value`` settings of ``models.train.Config``, one member per
``;``-separated part: ``"rounds=10; full_bleed=0.25; pip_swap=0.2 rounds=6"``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

#: Config fields a member may set (what it is trained on and for how long); the rest is shared.
MEMBER_KEYS = ("seed", "samples", "rounds", "epochs_per_round", "lr", "width", "arch", "fine_stem", "aux_heads", "picture_swap", "court_donor", "pip_swap",
               "full_bleed", "procedural_decks", "negatives", "covered", "completed")


#: Settings of a member's place in the ensemble, not of its training: ``weight`` (default 1) weighs
#: its probabilities in the average (scaled so the weights sum to 1).
ENSEMBLE_KEYS = ("weight",)


#: The merged graph's batch of crops and their 180° turns, which turning members read (merge).
TURNED_BATCH = "ens_both"


def parse_members(spec: str) -> list[dict[str, str]]:
    """``"rounds=10; pip_swap=0.2 rounds=6"`` -> ``[{"rounds": "10"}, {"pip_swap": "0.2", "rounds": "6"}]``."""
    members: list[dict[str, str]] = []
    for part in spec.split(";"):
        if not part.strip():
            continue
        settings: dict[str, str] = {}
        for item in part.split():
            key, sep, value = item.partition("=")
            if not sep or not value:
                raise ValueError(f"member setting {item!r} is not key=value")
            if key not in MEMBER_KEYS + ENSEMBLE_KEYS:
                raise ValueError(f"member setting {key!r} is not one of {', '.join(MEMBER_KEYS + ENSEMBLE_KEYS)}")
            if key == "weight" and not _positive_number(value):
                raise ValueError(f"member weight must be a positive number, not {value!r}")
            settings[key] = value
        members.append(settings)
    return members


def _positive_number(text: str) -> bool:
    try:
        return float(text) > 0
    except ValueError:
        return False


def member_weight(settings: dict[str, str]) -> float:
    """The member's weight in the average (its ``weight`` setting, default 1)."""
    return float(settings.get("weight", 1.0))


def _training(settings: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in settings.items() if k not in ENSEMBLE_KEYS}


def member_slug(settings: dict[str, str]) -> str:
    """A folder name for a member: its training settings, sorted (``"pip_swap-0.2_rounds-6"``;
    ``"base"`` if none). Its weight is not part of it: reweighing reuses the trained member."""
    return "_".join(f"{k}-{v}" for k, v in sorted(_training(settings).items())) or "base"


def member_config(cfg: Any, settings: dict[str, str]) -> Any:
    """``cfg`` (a models.train.Config) with a member's training settings applied (typed as the field
    is) and no members."""
    typed = {key: type(getattr(cfg, key))(value) for key, value in _training(settings).items()}
    return dataclasses.replace(cfg, members="", **typed)


def merge(paths: list[Path], out: Path, *, weights: list[float] | None = None,
          turn: list[bool] | None = None, index: list[bool] | None = None) -> None:
    """Write one ONNX model that runs every model in ``paths`` on the shared input and averages them.

    Each member must have one input ``input`` and the outputs ``logits`` and ``embedding``; the
    members' own nodes are kept as they are (int8 members stay int8; the averaging stays float).
    ``weights`` (default: equal) weigh the members' probabilities; they are scaled to sum to 1.

    ``turn`` (default: none) marks the members that read each crop and its 180° turn *inside the
    graph* and average the two. A network that reads a card either way up on its own (the
    :class:`models.net.IndexNet`, which pools both corner indices) is left unmarked and reads the
    crop once. A model with any marked member does its own turning, so its sidecar must say
    ``flip_average: false`` or the runtime would turn every crop a second time; the recipe writes
    that. Why in the graph: with the runtime turning every crop, a turn-invariant member would pay
    for a second look that tells it nothing.

    ``index`` (default: none) marks the members that read the corner indices alone: their
    weighted average is the extra output ``index_logits``.
    """
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    if not paths:
        raise ValueError("an ensemble needs at least one member")
    models = [onnx.load(str(p)) for p in paths]
    k = len(models)
    weights = [1.0] * k if weights is None else [float(w) for w in weights]
    turn = [False] * k if turn is None else list(turn)
    if len(weights) != k or len(turn) != k:
        raise ValueError(f"{k} members but {len(weights)} weights and {len(turn)} turn flags")
    if min(weights) <= 0:
        raise ValueError(f"member weights must be positive, not {weights}")
    opsets: dict[str, int] = {}
    for model in models:
        for opset in model.opset_import:
            opsets[opset.domain] = max(opsets.get(opset.domain, 0), opset.version)
    nodes: list[Any] = []
    inits: list[Any] = []
    if any(turn):  # the crops and their 180-degree turns, one batch: [input; turned input]
        big = np.iinfo(np.int64)
        for name, value in (("ens_turn_starts", [-1, -1]), ("ens_turn_ends", [big.min, big.min]),
                            ("ens_turn_axes", [2, 3]), ("ens_turn_steps", [-1, -1])):
            inits.append(numpy_helper.from_array(np.array(value, np.int64), name))
        inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "ens_half"))
        nodes += [helper.make_node("Slice", ["input", "ens_turn_starts", "ens_turn_ends", "ens_turn_axes",
                                             "ens_turn_steps"], ["ens_turned"]),
                  helper.make_node("Concat", ["input", "ens_turned"], [TURNED_BATCH], axis=0)]
    split_kw: dict[str, Any] = {"num_outputs": 2} if opsets.get("", 0) >= 18 else {}
    input_vi = models[0].graph.input[0]
    for i, model in enumerate(models):
        names_in = [v.name for v in model.graph.input]
        names_out = {v.name for v in model.graph.output}
        if names_in != ["input"] or not {"logits", "embedding"} <= names_out:
            raise ValueError(f"{paths[i]}: a member needs input 'input' and outputs 'logits', 'embedding'")
        prefixed = onnx.compose.add_prefix(model, f"m{i}_")
        for n, node in enumerate(prefixed.graph.node):
            node.name = f"m{i}_{n}"  # exporter names are long paths; short ones keep the file small
            for j, name in enumerate(node.input):
                if name == f"m{i}_input":
                    node.input[j] = TURNED_BATCH if turn[i] else "input"
            nodes.append(node)
        inits.extend(prefixed.graph.initializer)
        if turn[i]:  # each output's two halves (as read, turned) averaged; embeddings per half unit length
            nodes += [
                helper.make_node("Softmax", [f"m{i}_logits"], [f"ens_p2_{i}"], axis=-1),
                helper.make_node("Split", [f"ens_p2_{i}"], [f"ens_pa{i}", f"ens_pb{i}"], axis=0, **split_kw),
                helper.make_node("Sum", [f"ens_pa{i}", f"ens_pb{i}"], [f"ens_ps{i}"]),
                helper.make_node("Mul", [f"ens_ps{i}", "ens_half"], [f"ens_p{i}"]),
                helper.make_node("LpNormalization", [f"m{i}_embedding"], [f"ens_e2_{i}"], axis=1, p=2),
                helper.make_node("Split", [f"ens_e2_{i}"], [f"ens_ea{i}", f"ens_eb{i}"], axis=0, **split_kw),
                helper.make_node("Sum", [f"ens_ea{i}", f"ens_eb{i}"], [f"ens_es{i}"]),
                helper.make_node("LpNormalization", [f"ens_es{i}"], [f"ens_e{i}"], axis=1, p=2),
            ]
        else:
            nodes.append(helper.make_node("Softmax", [f"m{i}_logits"], [f"ens_p{i}"], axis=-1))
            nodes.append(helper.make_node("LpNormalization", [f"m{i}_embedding"], [f"ens_e{i}"], axis=1, p=2))
        inits.append(numpy_helper.from_array(np.array(weights[i] / sum(weights), np.float32), f"ens_w{i}"))
        nodes.append(helper.make_node("Mul", [f"ens_p{i}", f"ens_w{i}"], [f"ens_pw{i}"]))
    inits.append(numpy_helper.from_array(np.array(1e-12, np.float32), "ens_eps"))
    inits.append(numpy_helper.from_array(np.array(1.0 / math.sqrt(k), np.float32), "ens_inv_sqrt_k"))
    nodes += [
        helper.make_node("Sum", [f"ens_pw{i}" for i in range(k)], ["ens_pmean"]),
        helper.make_node("Max", ["ens_pmean", "ens_eps"], ["ens_pfloor"]),
        helper.make_node("Log", ["ens_pfloor"], ["logits"]),
        helper.make_node("Concat", [f"ens_e{i}" for i in range(k)], ["ens_ecat"], axis=1),
        helper.make_node("Mul", ["ens_ecat", "ens_inv_sqrt_k"], ["embedding"]),
    ]
    outputs = _card_outputs(models[0])
    if index is not None:
        if len(index) != k:
            raise ValueError(f"{k} members but {len(index)} index flags")
        more_nodes, more_inits, output = _index_average(weights, index)
        nodes, inits, outputs = nodes + more_nodes, inits + more_inits, outputs + ([output] if output else [])
    graph = helper.make_graph(nodes, "card_ensemble", [input_vi], outputs, initializer=inits)
    merged = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in sorted(opsets.items())],
                               producer_name="loo-table models.ensemble")
    merged.ir_version = max(m.ir_version for m in models)
    onnx.checker.check_model(merged)
    onnx.save(merged, str(out))


def _index_average(weights: list[float], index: list[bool]) -> tuple[list[Any], list[Any], Any]:
    """The nodes, initialisers and output (None where no member is marked) that average the marked
    members' probabilities (``ens_p{i}``, weighed as in the whole average) into ``index_logits``."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    marked = [i for i, flag in enumerate(index) if flag]
    if not marked:
        return [], [], None
    total = sum(weights[i] for i in marked)
    nodes, inits = [], []
    for i in marked:
        inits.append(numpy_helper.from_array(np.array(weights[i] / total, np.float32), f"ens_iw{i}"))
        nodes.append(helper.make_node("Mul", [f"ens_p{i}", f"ens_iw{i}"], [f"ens_ipw{i}"]))
    inits.append(numpy_helper.from_array(np.array(1e-12, np.float32), "ens_ieps"))
    nodes += [helper.make_node("Sum", [f"ens_ipw{i}" for i in marked], ["ens_imean"]),
              helper.make_node("Max", ["ens_imean", "ens_ieps"], ["ens_ifloor"]),
              helper.make_node("Log", ["ens_ifloor"], ["index_logits"])]
    return nodes, inits, helper.make_tensor_value_info("index_logits", TensorProto.FLOAT, ["n", None])


def add_index_output(path: Path, index: list[bool], out: Path | None = None) -> None:
    """Give a model written by :func:`merge` without ``index`` its ``index_logits`` output (the
    marked members' average, weighed as the graph weighs them), written to ``out`` (default:
    ``path``). Why: a shipped model gains the output without training or merging again."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    k = _members_in(model)
    if k == 0 or len(index) != k:
        raise ValueError(f"{path}: {k} members, {len(index)} index flags")
    if any(o.name == "index_logits" for o in model.graph.output):
        raise ValueError(f"{path}: has an index_logits output already")
    inits = {t.name: float(numpy_helper.to_array(t)) for t in model.graph.initializer if t.name.startswith("ens_w")}
    nodes, more, output = _index_average([inits[f"ens_w{i}"] for i in range(k)], index)
    if output is None:
        raise ValueError("no member is marked index")
    model.graph.node.extend(nodes)
    model.graph.initializer.extend(more)
    model.graph.output.append(output)
    onnx.checker.check_model(model)
    onnx.save(model, str(out or path))


def index_members(path: Path) -> list[bool]:
    """Which members of the merged model at ``path`` feed its ``index_logits`` (all False if it has none)."""
    import onnx

    model = onnx.load(str(path))
    names = {t.name for t in model.graph.initializer}
    return [f"ens_iw{i}" in names for i in range(_members_in(model))]


def _card_outputs(model: Any) -> list[Any]:
    """The outputs every card model has: ``logits`` (n × classes, as ``model``'s) and ``embedding``."""
    from onnx import TensorProto, helper

    logits = next(v for v in model.graph.output if v.name == "logits")
    n_classes = logits.type.tensor_type.shape.dim[-1].dim_value
    return [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", n_classes]),
            helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["n", None])]


def turns_in_graph(path: Path) -> bool:
    """Whether the model at ``path`` averages crops with their 180° turns itself (:func:`merge` with ``turn``)."""
    import onnx

    return any(TURNED_BATCH in node.output for node in onnx.load(str(path)).graph.node)


def member_count(path: Path) -> int:
    """How many members a model written by :func:`merge` has (0: not a merged model)."""
    import onnx

    return _members_in(onnx.load(str(path)))


def _members_in(model: Any) -> int:
    outputs = {o for node in model.graph.node for o in node.output}
    k = 0
    while f"m{k}_logits" in outputs:
        k += 1
    return k


def split(path: Path, out_dir: Path) -> list[Path]:
    """Undo :func:`merge`: write each member of the merged model at ``path`` as a model of its own
    (``out_dir/m0/<name>``, ``out_dir/m1/<name>`` ...; input ``input``, outputs ``logits`` and
    ``embedding``, the member's nodes as they were; the merged model's sidecar beside each, for its
    labels and input geometry) and return their paths.

    Why: a new run is chosen by how it pairs with the shipped members (``models.compare``); taking
    them out of the committed file saves retraining them (about 20 minutes each on 2 cores).
    """
    import onnx
    from onnx import helper

    merged = onnx.load(str(path))
    k = _members_in(merged)
    if k == 0:
        raise ValueError(f"{path}: not a merged model (no m0_logits): models.ensemble.merge writes those")
    inputs = list(merged.graph.input)
    paths: list[Path] = []
    for i in range(k):
        pre = f"m{i}_"
        rename = {f"{pre}logits": "logits", f"{pre}embedding": "embedding", TURNED_BATCH: "input"}
        nodes = []
        for node in merged.graph.node:
            if not node.name.startswith(pre):
                continue
            copy = onnx.NodeProto()
            copy.CopyFrom(node)
            for seq in (copy.input, copy.output):
                for j, name in enumerate(seq):
                    seq[j] = rename.get(name, name)
            nodes.append(copy)
        used = {name for node in nodes for name in node.input}
        inits = [t for t in merged.graph.initializer if t.name.startswith(pre) and t.name in used]
        graph = helper.make_graph(nodes, f"card_member_{i}", inputs, _card_outputs(merged), initializer=inits)
        member = helper.make_model(graph, opset_imports=list(merged.opset_import), producer_name="loo-table models.ensemble")
        member.ir_version = merged.ir_version
        onnx.checker.check_model(member)
        dest = out_dir / f"m{i}" / path.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(member, str(dest))
        if path.with_suffix(".json").is_file():
            meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
            if meta.pop("turn", None) == "in graph":  # the merged graph turned; a member alone is turned at run time
                meta["flip_average"] = True
            dest.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        paths.append(dest)
    return paths
