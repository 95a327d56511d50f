"""Card classifier: one onnxruntime session that reads perspective-corrected card crops.

The network (trained by ``models/train.py``) maps a BGR crop of :data:`CANONICAL_SIZE` to 53
classes: the 52 faces in the project's notation (``"10H"``, ``"QS"``) and ``"back"`` for a
face-down card. A softmax plus an open-set rule (confidence threshold and top-1/top-2 margin)
turns the scores into a :class:`Reading`; anything the network is not sure of comes out with
``card=None`` so that the referee asks a person instead of acting on a wrong card.

Every model file has a sidecar ``<model>.json`` (same stem) with its labels, input geometry and
the default open-set threshold/margin chosen on held-out decks. A model that is missing, truncated
or does not match its sidecar raises :class:`ModelError` with one line naming the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from vision.labels import BACK, LABELS, RANKS, SUITS

#: (width, height) in pixels of a canonical card crop, portrait, in OpenCV ``dsize`` order.
#: 64×88 keeps the 2.5:3.5 card aspect and leaves the corner index about 10 px tall: legible.
CANONICAL_SIZE: tuple[int, int] = (64, 88)

#: The 52 faces in the project's notation followed by the face-down class (vision.labels).
__all__ = ["CANONICAL_SIZE", "RANKS", "SUITS", "BACK", "LABELS"]

#: Provider preference: accelerators first when this onnxruntime build has them, the CPU always.
DEFAULT_PROVIDERS: tuple[str, ...] = (
    "TensorrtExecutionProvider",
    "CUDAExecutionProvider",
    "CPUExecutionProvider",
)

# Used when a sidecar has no open-set defaults (older or hand-made models).
FALLBACK_THRESHOLD = 0.90
FALLBACK_MARGIN = 0.50

#: A threshold no probability reaches: the rule of a crop that must stay unsure.
NEVER = 1.0 + 1e-6

#: Excluding impossible cards renormalises what is left; when more than this share of a crop's
#: probability lay on cards that cannot be there, the crop looks like none of the possible cards
#: (a stain, a misread, a second deck) and what is left is not trusted to name it: it stays unsure.
MAX_EXCLUDED_MASS = 0.5


class ModelError(ValueError):
    """The model file or its sidecar cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class Probabilities:
    """A crop's probability for every label (``values[i]`` for ``labels[i]``), as the reader gave
    it before its open-set rule: where one view of a card is not enough, several views' whole
    distributions can be weighed together (:mod:`vision.identify`), which their top three cannot."""

    labels: tuple[str, ...]
    values: np.ndarray


@dataclass(frozen=True)
class Reading:
    """What the classifier says about one crop.

    ``card`` is a face such as ``"QH"``, or ``None`` when the crop is face down
    (``face_down=True``) or the classifier is unsure (``face_down=False``).
    ``confidence`` is the softmax probability of the top class (after enrolment: the prototype
    similarity mapped to 0..1); ``top3`` holds the three best ``(label, probability)`` pairs.
    """

    card: str | None
    confidence: float
    top3: tuple[tuple[str, float], ...] = field(default_factory=tuple)
    face_down: bool = False
    #: set when the crop read surely as a card the caller excluded (one already seen): a
    #: contradiction for the caller to report; the reading itself is unsure
    excluded: str | None = None
    #: the crop's unit embedding (models with an ``embedding`` output), for learning the deck
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: every label's probability, where the reader that made this reading gives them
    probabilities: Probabilities | None = field(default=None, compare=False, repr=False)

    @property
    def unsure(self) -> bool:
        """True when the crop should be shown to a person: neither a face nor a confident back."""
        return self.card is None and not self.face_down

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form; ``top3`` is included only when unsure (that is when a person needs it)."""
        out: dict[str, Any] = {"card": self.card, "confidence": round(self.confidence, 4)}
        if self.face_down:
            out["face_down"] = True
        if self.unsure:
            out["top3"] = [[label, round(p, 4)] for label, p in self.top3]
        if self.excluded is not None:
            out["excluded"] = self.excluded
        return out


def sidecar_path(model_path: Path) -> Path:
    """``models/card_classifier.fp32.onnx`` -> ``models/card_classifier.fp32.json``."""
    return model_path.with_suffix(".json")


def _load_sidecar(path: Path, model_path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ModelError(f"{path}: label file missing (expected beside {model_path.name})")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: label file unreadable: {exc}") from None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        raise ModelError(f"{path}: label file has no 'labels' list of strings")
    if len(set(labels)) != len(labels):
        raise ModelError(f"{path}: label file repeats a label")
    checked: dict[str, Any] = meta
    return checked


def _rule_pair(meta: dict[str, Any], key: str, names: tuple[str, str], highest: tuple[float, float],
               meta_path: Path) -> tuple[float, float] | None:
    """A sidecar rule of two numbers (``meta[key]``, an object with ``names``), each in 0..its
    ``highest``; None where the sidecar has none. A broken one is a ModelError naming the file."""
    rule = meta.get(key) or {}
    if not rule:
        return None
    try:
        pair = (float(rule[names[0]]), float(rule[names[1]]))
    except (KeyError, TypeError, ValueError):
        raise ModelError(f"{meta_path}: '{key}' needs numbers '{names[0]}' and '{names[1]}'") from None
    if not all(0.0 <= v <= top for v, top in zip(pair, highest, strict=True)):
        raise ModelError(f"{meta_path}: '{key}' values must lie in 0..{highest[0]:g} and 0..{highest[1]:g}")
    return pair


def sharpness(crop: np.ndarray, size: tuple[int, int] = CANONICAL_SIZE) -> float:
    """How sharp a card crop is: the variance of the Laplacian of its grey image at the reader's
    size (``size``: width, height). A crop whose corner index can be read scores in the hundreds
    or more; one blurred past reading it, under about 150."""
    import cv2

    arr = np.asarray(crop)
    if arr.ndim == 3 and arr.shape[2] == 4:
        arr = arr[:, :, :3]
    if arr.shape[0] != size[1] or arr.shape[1] != size[0]:
        arr = cv2.resize(arr, size, interpolation=cv2.INTER_AREA)
    grey = cv2.cvtColor(arr, cv2.COLOR_BGR2GRAY) if arr.ndim == 3 else arr
    return float(cv2.Laplacian(grey.astype(np.float32), cv2.CV_32F).var())


#: The most a crop may be framed looser or tighter by the steadiness rule (a share of its size).
MAX_REFRAME = 0.25


def reframed(crop: np.ndarray, by: float, size: tuple[int, int] = CANONICAL_SIZE) -> np.ndarray:
    """``crop`` at the reader's ``size`` (width, height), framed looser by ``by`` of its width and
    height on every side (``by`` > 0: the card smaller in the crop, its edge pixels repeated round
    it) or tighter (``by`` < 0: the crop's edge cut off): the crop the finder would have made with
    its corners that much further out or in."""
    import cv2

    arr = np.asarray(crop)[:, :, :3]
    w, h = size
    if arr.shape[0] != h or arr.shape[1] != w:
        arr = cv2.resize(arr, (w, h), interpolation=cv2.INTER_AREA)
    src = np.array([[0, 0], [w, 0], [0, h]], np.float32)
    dst = np.array([[w * by, h * by], [w * (1 - by), h * by], [w * by, h * (1 - by)]], np.float32)
    framed: np.ndarray = cv2.warpAffine(arr, cv2.getAffineTransform(src, dst), (w, h), flags=cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_REPLICATE)
    return framed


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, stable for large logits."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    probs: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return probs


def preprocess(crops: Sequence[np.ndarray], size: tuple[int, int] = CANONICAL_SIZE) -> np.ndarray:
    """BGR uint8 crops -> float32 NCHW batch in 0..1; crops of another size are resized.

    Resizing here (rather than refusing) lets callers pass a finder crop from an older build; the
    cost is one ``cv2.resize`` per odd-sized crop.
    """
    w, h = size
    batch = np.empty((len(crops), 3, h, w), dtype=np.float32)
    for i, crop in enumerate(crops):
        arr = np.asarray(crop)
        if arr.ndim == 2:
            arr = np.repeat(arr[:, :, None], 3, axis=2)
        if arr.ndim != 3 or arr.shape[2] not in (3, 4):
            raise ValueError(f"crop {i}: expected an H×W×3 BGR image, got shape {arr.shape}")
        arr = arr[:, :, :3]
        if arr.shape[0] != h or arr.shape[1] != w:
            import cv2  # only needed for odd-sized crops

            arr = cv2.resize(arr, (w, h), interpolation=cv2.INTER_AREA)
        batch[i] = arr.transpose(2, 0, 1)
    batch *= 1.0 / 255.0
    return batch


class CardClassifier:
    """Reads card crops with one onnxruntime session.

    Keyword-only options: ``providers`` (preference list; names this onnxruntime build lacks are
    skipped, the CPU is always last), ``threads`` (intra-op threads, bounded; one is the fastest
    for a small net on a busy Pi), ``threshold`` and ``margin`` (open-set rule; ``None`` takes the
    defaults stored with the model, or with the enrolment file), ``prototypes`` (path to an
    enrolment file made by ``vision.enroll``: the network's probabilities are re-weighted by the
    similarity of the crop's embedding to the nearest enrolled view of each card).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        labels_path: str | os.PathLike[str] | None = None,
        providers: Sequence[str] | None = None,
        threads: int = 1,
        threshold: float | None = None,
        margin: float | None = None,
        prototypes: str | os.PathLike[str] | None = None,
        flip_average: bool | None = None,
    ) -> None:
        import onnxruntime as ort

        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ModelError(f"{self.model_path}: model file missing")
        meta_path = Path(labels_path) if labels_path is not None else sidecar_path(self.model_path)
        self.meta = _load_sidecar(meta_path, self.model_path)
        self.labels: tuple[str, ...] = tuple(self.meta["labels"])
        self.threshold = float(threshold if threshold is not None else self.meta.get("threshold", FALLBACK_THRESHOLD))
        self.margin = float(margin if margin is not None else self.meta.get("margin", FALLBACK_MARGIN))
        # the agreement rule (sidecar "agreement": {"index": I, "threshold": T}; see _agreed_rules)
        self.agreement = _rule_pair(self.meta, "agreement", ("index", "threshold"), (1.0, 1.0), meta_path)
        # the blur rule (sidecar "blurred": {"sharpness": S, "threshold": T}; see _blurred_rules)
        self.blurred = _rule_pair(self.meta, "blurred", ("sharpness", "threshold"), (float("inf"), 1.0), meta_path)
        # the steadiness rule (sidecar "steady": {"frame": F, "below": B}; see _steady_rules)
        self.steady = _rule_pair(self.meta, "steady", ("frame", "below"), (MAX_REFRAME, 1.0), meta_path)
        # A card lies either way up, so the crop and its 180° turn are both the card: averaging the
        # two readings costs a second (batched) pass and halves the unsure rate at equal risk. A model
        # that turns crops inside its graph (an ensemble, sidecar "turn": "in graph") says false here.
        self.flip_average = bool(self.meta.get("flip_average", False) if flip_average is None else flip_average)
        if not 0.0 <= self.threshold <= 1.0 or not 0.0 <= self.margin <= 1.0:
            raise ValueError("threshold and margin must lie in 0..1")
        if threads < 1:
            raise ValueError("threads must be at least 1")

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = min(int(threads), os.cpu_count() or 1)
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        opts.log_severity_level = 3
        available = set(ort.get_available_providers())
        wanted = list(providers) if providers is not None else list(DEFAULT_PROVIDERS)
        chosen = [p for p in wanted if p in available]
        if "CPUExecutionProvider" not in chosen:
            chosen.append("CPUExecutionProvider")
        try:
            self.session = ort.InferenceSession(str(self.model_path), sess_options=opts, providers=chosen)
        except Exception as exc:  # onnxruntime raises its own exception types (Fail, InvalidGraph, ...)
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelError(f"{self.model_path}: not a loadable ONNX model ({reason[:200]})") from None
        self.providers: tuple[str, ...] = tuple(self.session.get_providers())
        self._check_shapes(meta_path)
        # the network's own rule, for crops that match no enrolled view (classify)
        self.network_threshold, self.network_margin = self.threshold, self.margin
        self._rule_given = (threshold is not None, margin is not None)
        # (prototypes, threshold, margin) swapped as one value, so that a reader on the camera
        # thread never sees the prototypes of one enrolment with the rule of another
        self._enrolment: tuple[Any, float, float] = (None, self.threshold, self.margin)
        if prototypes is not None:
            from vision.enroll import Prototypes  # local: enrolment is optional

            self.set_prototypes(Prototypes.load(prototypes, labels=self.labels, model_path=self.model_path))

    @property
    def prototypes(self) -> Any:
        """The enrolment in use (``vision.enroll.Prototypes``) or None."""
        return self._enrolment[0]

    def set_prototypes(self, prototypes: Any) -> None:
        """Read through another enrolment from the next batch on (None: the network alone).

        Enrolment makes readings more confident, so it brings its own open-set rule unless one was
        given to the constructor. Safe to call from another thread than the one classifying."""
        if prototypes is not None and tuple(prototypes.labels) != self.labels:
            raise ValueError("the enrolment was made for a model with other labels")
        threshold = self.network_threshold if prototypes is None or self._rule_given[0] else prototypes.threshold
        margin = self.network_margin if prototypes is None or self._rule_given[1] else prototypes.margin
        self._enrolment = (prototypes, float(threshold), float(margin))
        self.threshold, self.margin = float(threshold), float(margin)

    # -- validation ---------------------------------------------------------------------------
    def _check_shapes(self, meta_path: Path) -> None:
        inputs = self.session.get_inputs()
        if len(inputs) != 1:
            raise ModelError(f"{self.model_path}: expected one input, found {len(inputs)}")
        shape = inputs[0].shape
        w, h = CANONICAL_SIZE
        want = [3, h, w]
        got = list(shape[1:]) if len(shape) == 4 else None
        if got != want:
            raise ModelError(
                f"{self.model_path}: input shape {shape} does not match the canonical crop [N, 3, {h}, {w}]"
            )
        self.input_name = inputs[0].name
        outputs = {o.name: o for o in self.session.get_outputs()}
        if "logits" not in outputs:
            raise ModelError(f"{self.model_path}: no 'logits' output (outputs: {sorted(outputs)})")
        n_out = outputs["logits"].shape[-1]
        if not isinstance(n_out, int) or n_out != len(self.labels):
            raise ModelError(
                f"{self.model_path}: model has {n_out} classes but {meta_path.name} lists {len(self.labels)} labels"
            )
        self.has_embedding = "embedding" in outputs
        # an ensemble's average over its corner-index members alone (models.ensemble): what a
        # covered card's completed crop is weighed by (vision.identify)
        self.has_index = "index_logits" in outputs

    # -- inference ----------------------------------------------------------------------------
    def _run(self, crops: Sequence[np.ndarray], names: list[str]) -> list[np.ndarray]:
        """Session outputs; with ``flip_average`` the crops and their 180° turns go in one batch and
        each output comes back as the mean of the two halves (probabilities for logits)."""
        batch = preprocess(crops)
        if not self.flip_average:
            return [np.asarray(o, np.float32) for o in self.session.run(names, {self.input_name: batch})]
        n = len(batch)
        both = np.concatenate([batch, np.ascontiguousarray(batch[:, :, ::-1, ::-1])])
        outs = []
        for name, o in zip(names, self.session.run(names, {self.input_name: both}), strict=True):
            o = np.asarray(o, np.float32)
            if name.endswith("logits"):  # average probabilities, return their log (a valid logit)
                o = np.log(np.maximum((softmax(o[:n]) + softmax(o[n:])) / 2, 1e-12))
            else:
                o = (o[:n] + o[n:]) / 2
            outs.append(o)
        return outs

    def probabilities(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        """Softmax probabilities, shape (N, len(labels)), in label order."""
        if len(crops) == 0:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        (logits,) = self._run(crops, ["logits"])
        return softmax(logits)

    def embed(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        """L2-normalised embeddings (N, D) from the layer before the classifier head (for enrolment);
        with ``flip_average`` the same either way up."""
        if not self.has_embedding:
            raise ModelError(f"{self.model_path}: model has no 'embedding' output; enrolment needs one")
        if len(crops) == 0:
            return np.zeros((0, 0), dtype=np.float32)
        (emb,) = self._run(crops, ["embedding"])
        unit: np.ndarray = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-8)
        return unit

    def classify(self, crops: Sequence[np.ndarray], *,
                 exclude: Collection[str] | Sequence[Collection[str]] | None = None,
                 whole: Sequence[bool] | None = None, outlined: bool = True) -> list[Reading]:
        """Read a batch of canonical crops (all cards of a frame in one call).

        ``exclude``: cards that cannot be in the crops (one set for all, or one per crop), e.g.
        those already seen in the deal; see :func:`decide`. With an exclusion the batch is read
        jointly: a crop that is unsure on its own may not take a card another crop of the batch
        reads surely, and each card is given at most once (:func:`assign_jointly`).

        ``whole``: one flag per crop, True where the crop is a whole card's outline the finder drew
        (the contour cues' trace or the detector's rectangle, not a part of one): only those are
        read under the sidecar's agreement rule, if it has one (:meth:`_agreed_rules`). None: no
        crop is.

        ``outlined``: the crops are warps of outlines the finder drew, read under the sidecar's
        steadiness rule, if it has one (:meth:`_steady_rules`); False for crops made otherwise (a
        covered card's crop completed from its half turn, ``vision.occlusion.completed_crop``,
        whose own rules were chosen without it).
        """
        return self.classify_with_index(crops, exclude=exclude, whole=whole, outlined=outlined)[0]

    def classify_with_index(self, crops: Sequence[np.ndarray], *,
                            exclude: Collection[str] | Sequence[Collection[str]] | None = None,
                            whole: Sequence[bool] | None = None, outlined: bool = True
                            ) -> tuple[list[Reading], list[Reading] | None]:
        """:meth:`classify`'s readings and, from the same pass, the corner-index members' reading
        of each crop (an ensemble's ``index_logits``: each crop on its own under the network's rule,
        ``exclude`` dropped, no enrolment, whose views are whole crops), or None for a model
        without them. A covered card's completed crop is weighed by both (:mod:`vision.identify`)."""
        if len(crops) == 0:
            return [], ([] if self.has_index else None)
        protos, threshold, margin = self._enrolment
        names = ["logits"] + (["embedding"] if self.has_embedding else []) + (["index_logits"] if self.has_index else [])
        outs = dict(zip(names, self._run(crops, names), strict=True))
        probs = softmax(outs["logits"])
        emb: np.ndarray | None = None
        if self.has_embedding:
            emb = outs["embedding"] / np.maximum(np.linalg.norm(outs["embedding"], axis=1, keepdims=True), 1e-8)
        rules = [(threshold, margin)] * len(crops)
        if protos is not None and emb is not None:
            sim = protos.similarities(emb)  # once, for the re-weighing and for who vouches
            probs, matched = protos.reweigh(emb, probs, similarities=sim)
            vouched = protos.vouched(emb, probs, similarities=sim)
            # a crop near no enrolled view keeps the network's probabilities, so the network's rule
            # judges it: enrolment's stricter rule would only turn the network's sure reads unsure.
            # A crop near some view whose best card none of its own views lies near is named by
            # nobody: the views pushed the others down, they did not vouch for it
            rules = [((threshold, margin) if v else (NEVER, margin)) if m else (self.network_threshold, self.network_margin)
                     for m, v in zip(matched, vouched, strict=True)]
        per_crop = [frozenset[str]()] * len(crops) if exclude is None else _per_crop(exclude, len(crops))
        index_probs = softmax(outs["index_logits"]) if self.has_index else None
        if index_probs is not None and self.agreement is not None and whole is not None:
            if len(whole) != len(crops):
                raise ValueError(f"whole: {len(whole)} flags for {len(crops)} crops")
            agreed = self._agreed_rules(probs, index_probs, rules, per_crop)
            rules = [a if w else r for a, r, w in zip(agreed, rules, whole, strict=True)]
        if self.blurred is not None:
            rules = self._blurred_rules(crops, rules)
        if self.steady is not None and outlined:
            judged_by_network = [True] * len(crops) if protos is None or emb is None else [not m for m in matched]
            rules = self._steady_rules(crops, probs, rules, per_crop, judged_by_network)
        if exclude is None:
            readings = [decide(self.labels, row, t, m) for row, (t, m) in zip(probs, rules, strict=True)]
        else:
            readings = assign_jointly(self.labels, probs, rules, per_crop)
        readings = [replace(r, embedding=None if emb is None else np.asarray(emb[k], np.float32),
                            probabilities=self._possible(row, ex))
                    for k, (r, row, ex) in enumerate(zip(readings, probs, per_crop, strict=True))]
        if not self.has_index:
            return readings, None
        assert index_probs is not None
        by_index = [replace(decide(self.labels, row, self.network_threshold, self.network_margin, ex),
                            probabilities=self._possible(row, ex))
                    for row, ex in zip(index_probs, per_crop, strict=True)]
        return readings, by_index

    def _agreed_rules(self, probs: np.ndarray, index_probs: np.ndarray, rules: list[tuple[float, float]],
                      exclude: Sequence[frozenset[str]]) -> list[tuple[float, float]]:
        """Each crop's rule, lowered to the agreement rule's threshold where the corner-index
        members alone name the reader's best card at least ``agreement[0]`` surely.

        Why: the whole-card member reads a card by its picture (the pips' layout, the court's
        figure), which differs from deck to deck; the index (the rank's characters and the suit's
        shape) is what all decks share. On a deck the reader never saw, its eights averaged 0.5
        while the index members alone read them 0.8 sure: two independent readings that agree are
        a reason to be sure that holds on another deck, where one average under the threshold is
        not. A card the caller excluded is never named so."""
        assert self.agreement is not None
        index_sure, agreed = self.agreement
        best, best_index = probs.argmax(axis=1), index_probs.argmax(axis=1)
        out = list(rules)
        for k, (b, bi) in enumerate(zip(best.tolist(), best_index.tolist(), strict=True)):
            label = self.labels[b]
            if b == bi and label != BACK and label not in exclude[k] and index_probs[k, bi] >= index_sure:
                out[k] = (min(rules[k][0], agreed), rules[k][1])
        return out

    def _blurred_rules(self, crops: Sequence[np.ndarray], rules: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """Each crop's rule, raised to the blur rule's threshold where the crop is blurred
        (:func:`sharpness` under ``blurred[0]``), whichever rule named it before.

        Why: a crop too blurred for its corner index to be read is read by its colours and the
        rough shape of its picture, which are what differ from deck to deck: on crops of four deck
        designs the reader never learnt, half of its confidently wrong reads (a queen of hearts
        read as the king, an ace of clubs as the ace of spades) were the blurred crops it named
        under 0.7 surely. A sharp crop keeps its rule."""
        assert self.blurred is not None
        soft, raised = self.blurred
        return [(max(rule[0], raised), rule[1]) if sharpness(crop) < soft else rule
                for crop, rule in zip(crops, rules, strict=True)]

    def _steady_rules(self, crops: Sequence[np.ndarray], probs: np.ndarray, rules: list[tuple[float, float]],
                      exclude: Sequence[frozenset[str]], judged_by_network: Sequence[bool]) -> list[tuple[float, float]]:
        """Each crop's rule, made one no probability reaches where the crop framed a little looser
        or a little tighter (:func:`reframed` by ``steady[0]``) reads as another card; only crops
        the network alone judges, whose best face could pass their rule and is under ``steady[1]``
        sure, are looked at again (two more crops each, in one batch).

        Why: the finder's corners fall a few per cent off the card, so where the edge of the crop
        lies is chance. A read that changes when that edge moves by as much was made from what the
        edge cut (half of a corner index, a sliver of the table), not from the card: on the four
        deck designs the reader never learnt, most of its remaining sure wrong reads (an eight of
        spades whose top index the crop cut, read as the nine; queens read as kings, a two of clubs
        as the two of spades) changed their best card so, and few of its right ones did."""
        assert self.steady is not None
        frame, below = self.steady
        looked: list[tuple[int, int, list[int]]] = []  # (crop, its best possible card, the cards excluded)
        for k, (row, rule, ex, network) in enumerate(zip(probs, rules, exclude, judged_by_network, strict=True)):
            gone = [i for i, lab in enumerate(self.labels) if lab in ex and lab != BACK]
            possible = _without(np.asarray(row, np.float64), gone)
            total = float(possible.sum())
            b = int(possible.argmax())
            p = float(possible[b]) / total if total > 0 else 0.0
            if network and self.labels[b] != BACK and rule[0] <= p < below:
                looked.append((k, b, gone))
        if not looked:
            return rules
        again = self.probabilities([reframed(crops[k], by) for k, _, _ in looked for by in (frame, -frame)])
        out = list(rules)
        for j, (k, b, gone) in enumerate(looked):
            if any(int(_without(np.asarray(v, np.float64), gone).argmax()) != b for v in again[2 * j:2 * j + 2]):
                out[k] = (NEVER, rules[k][1])
        return out

    def _possible(self, row: np.ndarray, exclude: Collection[str]) -> Probabilities:
        """``row`` as :class:`Probabilities`, the cards that cannot be there (``exclude``; never
        ``back``) at 0: whoever weighs it with other reads must not name a card seen already."""
        gone = [i for i, label in enumerate(self.labels) if label in exclude and label != BACK]
        return Probabilities(self.labels, _without(np.asarray(row, np.float64), gone) if gone else row)

    def decide(self, probs: np.ndarray, threshold: float | None = None, margin: float | None = None,
               exclude: Collection[str] = ()) -> Reading:
        """Apply the open-set rule (this reader's, unless ``threshold``/``margin`` are given) to one row."""
        return decide(self.labels, probs, self.threshold if threshold is None else threshold,
                      self.margin if margin is None else margin, exclude)


def _per_crop(exclude: Collection[str] | Sequence[Collection[str]], n: int) -> list[frozenset[str]]:
    """One set for every crop, or one set per crop, as a list of ``n`` sets."""
    items: list[Any] = list(exclude)
    if any(isinstance(x, str) for x in items):
        return [frozenset(str(x) for x in items)] * n
    if len(items) != n:
        raise ValueError(f"exclude: {len(items)} sets for {n} crops")
    return [frozenset(str(c) for c in x) for x in items]


def decide(labels: Sequence[str], probs: np.ndarray, threshold: float, margin: float,
           exclude: Collection[str] = ()) -> Reading:
    """The open-set rule on one row of probabilities, knowing which cards cannot be there.

    Without ``exclude`` the row's best label is read when its probability reaches ``threshold``
    and leads the second by ``margin``. With it, the excluded cards are dropped before the rule:

    - a row the rule reads surely as an excluded card is a contradiction (the card was seen
      already): the reading is unsure and names it in ``excluded``, so the caller can say so;
    - otherwise the excluded cards' probability is removed and the rest renormalised (the
      probability of each possible card given that the excluded ones are not there), and the rule
      judges what is left: never below the rule, never an excluded card. When more than
      :data:`MAX_EXCLUDED_MASS` was removed the crop stays unsure (see there).

    ``back`` is never excluded (any number of cards lie face down).
    """
    probs = np.asarray(probs, np.float64)
    raw = _rule(labels, probs, threshold, margin)
    gone = [i for i, lab in enumerate(labels) if lab in exclude and lab != BACK]
    if not gone:
        return raw
    if raw.card is not None and raw.card in exclude:
        top3 = _top3(labels, _without(probs, gone))
        return Reading(card=None, confidence=top3[0][1] if top3 else 0.0, top3=top3, excluded=raw.card)
    removed = float(probs[gone].sum())
    if removed <= 0.0:
        return raw
    rest = _without(probs, gone)
    total = float(rest.sum())
    if total <= 0.0:
        return Reading(card=None, confidence=0.0, top3=())
    if removed > MAX_EXCLUDED_MASS:
        top3 = _top3(labels, rest / total)
        return Reading(card=None, confidence=top3[0][1], top3=top3)
    return _rule(labels, rest / total, threshold, margin)


def _without(probs: np.ndarray, gone: list[int]) -> np.ndarray:
    rest = probs.copy()
    rest[gone] = 0.0
    return rest


def _top3(labels: Sequence[str], probs: np.ndarray) -> tuple[tuple[str, float], ...]:
    order = np.argsort(-probs, kind="stable")[:3]
    return tuple((labels[int(i)], float(probs[int(i)])) for i in order if probs[int(i)] > 0.0)


def _rule(labels: Sequence[str], probs: np.ndarray, threshold: float, margin: float) -> Reading:
    top3 = _top3(labels, probs)
    if not top3:
        return Reading(card=None, confidence=0.0, top3=())
    best, p1 = top3[0]
    p2 = top3[1][1] if len(top3) > 1 else 0.0
    if p1 >= threshold and p1 - p2 >= margin:
        if best == BACK:
            return Reading(card=None, confidence=p1, top3=top3, face_down=True)
        return Reading(card=best, confidence=p1, top3=top3, face_down=False)
    return Reading(card=None, confidence=p1, top3=top3, face_down=False)


def assign_jointly(labels: Sequence[str], probs: np.ndarray, rules: Sequence[tuple[float, float]],
                   exclude: Sequence[Collection[str]]) -> list[Reading]:
    """Read several crops together, each card at most once.

    Crops the rule reads surely on their own (after their exclusions) keep their reading, as
    before; the unsure ones may not take those cards. Then, greedily, the unsure crop whose best
    possible card now passes the rule with the highest probability takes it, and the others read
    again without it, until none passes. Greedy rather than an optimal (Hungarian) assignment:
    a card is only ever taken when its own crop passes the open-set rule with it, so an optimal
    matching could only add cards that fail the rule, which are never accepted anyway.
    """
    n = len(probs)
    readings = [decide(labels, probs[i], *rules[i], exclude[i]) for i in range(n)]
    taken = {r.card for r in readings if r.card is not None}
    open_rows = [i for i, r in enumerate(readings) if r.unsure and r.excluded is None]
    while open_rows and taken:
        trial = {i: decide(labels, probs[i], *rules[i], set(exclude[i]) | taken) for i in open_rows}
        sure = [i for i in open_rows if trial[i].card is not None]
        for i in open_rows:
            if trial[i].excluded is None:
                readings[i] = trial[i]  # the unsure ones show possible cards only
        if not sure:
            break
        best = max(sure, key=lambda i: trial[i].confidence)
        readings[best] = trial[best]
        card = trial[best].card
        assert card is not None
        taken.add(card)
        open_rows.remove(best)
    return readings
