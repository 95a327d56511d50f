"""Ensembles: member recipes parse strictly, and the merged model is the members' average."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from models.ensemble import member_slug, member_weight, parse_members


def test_member_specs_parse_and_name_their_folders() -> None:
    members = parse_members("rounds=10; full_bleed=0.25 weight=2 ;pip_swap=0.2 rounds=6;")
    assert members == [{"rounds": "10"}, {"full_bleed": "0.25", "weight": "2"}, {"pip_swap": "0.2", "rounds": "6"}]
    # the weight is not part of the training recipe: reweighing reuses the trained member
    assert [member_slug(m) for m in members] == ["rounds-10", "full_bleed-0.25", "pip_swap-0.2_rounds-6"]
    assert [member_weight(m) for m in members] == [1.0, 2.0, 1.0]
    assert member_slug({}) == "base" and parse_members("") == []


@pytest.mark.parametrize("spec, message", [("rounds", "not key=value"), ("rounds=", "not key=value"),
                                           ("colour=red", "'colour' is not one of"),
                                           ("weight=0", "positive number"), ("weight=heavy", "positive number")])
def test_bad_member_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_members(spec)


@pytest.mark.slow  # three tiny runs: ~20 s
def test_tiny_ensemble_is_the_average_of_its_members(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from models.train import add_arguments, config_from_args, run_recipe
    from vision.classifier import CardClassifier

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--tiny", "--workers", "1", "--members",
                                              "seed=1 weight=2; seed=2 pip_swap=0.5 fine_stem=4; seed=3 arch=index"]))
    logs: list[str] = []
    metrics = run_recipe(cfg, tmp_path, log=logs.append)
    assert [m["settings"] for m in metrics["members"]] == [
        {"seed": "1", "weight": "2"}, {"seed": "2", "pip_swap": "0.5", "fine_stem": "4"}, {"seed": "3", "arch": "index"}]
    assert metrics["parameters"] == sum(m["parameters"] for m in metrics["members"])
    member_dirs = [tmp_path / "members" / name for name in ("seed-1", "fine_stem-4_pip_swap-0.5_seed-2", "arch-index_seed-3")]
    assert all((d / "card_classifier.int8.onnx").is_file() for d in member_dirs)

    crops = list(np.random.default_rng(0).integers(0, 256, (6, 88, 64, 3), dtype=np.uint8))
    merged = CardClassifier(tmp_path / "card_classifier.fp32.onnx")
    assert not merged.flip_average and merged.meta["turn"] == "in graph"  # the graph turns; the runtime must not
    parts = [CardClassifier(d / "card_classifier.fp32.onnx") for d in member_dirs]
    assert all(p.flip_average for p in parts)
    expected = np.average([p.probabilities(crops) for p in parts], axis=0, weights=[2, 1, 1])
    assert np.allclose(merged.probabilities(crops), expected, atol=1e-5)
    turned = [np.ascontiguousarray(c[::-1, ::-1]) for c in crops]
    assert np.allclose(merged.probabilities(turned), expected, atol=1e-5)  # either way up, as the runtime's turn was
    # the corner-index member alone, as the graph's index_logits (the one IndexNet, read once)
    alone = CardClassifier(member_dirs[2] / "card_classifier.fp32.onnx", flip_average=False).probabilities(crops)
    by_index = merged.classify_with_index(crops)[1]
    assert by_index is not None
    assert [r.top3[0][1] for r in by_index] == pytest.approx(alone.max(axis=1).tolist(), abs=1e-5)
    emb = merged.embed(crops)
    assert emb.shape[1] == sum(p.embed(crops).shape[1] for p in parts)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4)
    assert CardClassifier(tmp_path / "card_classifier.onnx").threshold == metrics["threshold"]

    assert len({m["parameters"] for m in metrics["members"]}) == 3  # three architectures

    # a second run finds both members on disk and only merges and evaluates
    logs.clear()
    again = run_recipe(cfg, tmp_path, log=logs.append)
    assert sum("reusing" in line for line in logs) == 3
    assert again["members"] == metrics["members"]

    # --evaluate-only keeps the merged model and what metrics.json says of its members
    redone = run_recipe(cfg, tmp_path, log=lambda m: None, evaluate_only=True)
    assert redone["members"] == metrics["members"] and redone["parameters"] == metrics["parameters"]
    assert redone["total_seconds"] >= sum(m["total_seconds"] for m in metrics["members"])


def test_fine_stem_reads_at_full_resolution_and_keeps_the_outputs() -> None:
    torch = pytest.importorskip("torch")
    from models.net import CardNet

    plain, fine = CardNet(width=8), CardNet(width=8, fine_stem=4)
    first = fine.features[0][0]
    assert first.stride == (1, 1) and first.out_channels == 4  # the extra block sees every pixel
    assert plain.features[0][0].stride == (2, 2)
    x = torch.rand(2, 3, 88, 64)
    for net in (plain, fine):
        logits, emb = net.eval()(x)
        assert logits.shape == (2, 53) and emb.shape == (2, 128)


def test_index_net_reads_only_the_corners_and_either_way_up() -> None:
    torch = pytest.importorskip("torch")
    from models.net import INDEX_BOX, build_net

    torch.manual_seed(0)
    net = build_net("index", 8).eval()
    x = torch.rand(3, 3, 88, 64)
    logits, emb = net(x)
    assert logits.shape == (3, 53) and emb.shape == (3, 128)
    # the 180-degree turn swaps the two corners, which are pooled symmetrically
    turned, _ = net(torch.flip(x, dims=(2, 3)))
    assert torch.allclose(logits, turned, atol=1e-5)
    h, w = INDEX_BOX
    middle = x.clone()
    middle[:, :, h:-h, :] = torch.rand_like(middle[:, :, h:-h, :])  # a new middle, corners kept
    assert torch.allclose(net(middle)[0], logits, atol=1e-5)
    corner = x.clone()
    corner[:, :, :h, :w] = 1.0 - corner[:, :, :h, :w]  # a different top-left index
    assert not torch.allclose(net(corner)[1], emb, atol=1e-4)


def test_build_net_names_an_unknown_arch() -> None:
    pytest.importorskip("torch")
    from models.net import CardNet, build_net

    assert isinstance(build_net("card", 8), CardNet)
    with pytest.raises(ValueError, match="arch must be 'card' or 'index', not 'pips'"):
        build_net("pips")


def _onehot_probs(preds: list[int], n_classes: int = 53, p: float = 0.6) -> np.ndarray:
    probs = np.full((len(preds), n_classes), (1 - p) / (n_classes - 1), dtype=np.float32)
    probs[np.arange(len(preds)), preds] = p
    return probs


def test_compare_averages_runs_and_ranks_by_calibration_not_test() -> None:
    pytest.importorskip("torch")  # models.train, whose open-set rule compare reuses
    from models.compare import score_combinations

    y = np.arange(10)
    # run a errs on crop 0, run b on crop 1; their average is right on both (0.6 beats 0.3 + 0.0x)
    calib = {"a": _onehot_probs([5, 1, *range(2, 10)]), "b": _onehot_probs([0, 7, *range(2, 10)])}
    # on the test crops "a" alone is perfect: ranking must still follow calibration
    test = {"a": _onehot_probs(list(range(10))), "b": _onehot_probs([3, *range(1, 10)])}
    rows = score_combinations(calib, test, y, y, sizes=[1, 2], max_wrong=0.0)
    assert [r["members"] for r in rows] == [["a", "b"], ["a"], ["b"]]
    assert rows[0]["calibration_top1"] == 1.0 and rows[1]["calibration_top1"] == 0.9
    assert rows[0]["test"]["top1"] == 1.0 and rows[2]["test"]["top1"] == 0.9
    assert rows[1]["test"]["confidently_wrong"] == 0.0  # "a" alone: rule from its calibration errors


def test_compare_weights_a_run_in_every_combination() -> None:
    pytest.importorskip("torch")
    from models.compare import score_combinations

    y = np.arange(3)
    # crop 2: "a" says 2 at 0.6, "b" and "c" say 0 at 0.6; equal weights follow b and c, a at 3 wins
    probs = {"a": _onehot_probs([0, 1, 2]), "b": _onehot_probs([0, 1, 0]), "c": _onehot_probs([0, 1, 0])}
    plain = score_combinations(probs, probs, y, y, sizes=[3], max_wrong=0.0)
    heavy = score_combinations(probs, probs, y, y, sizes=[3], max_wrong=0.0, weights={"a": 3.0})
    assert plain[0]["calibration_top1"] == pytest.approx(2 / 3, abs=1e-4) and heavy[0]["calibration_top1"] == 1.0


def test_compare_refuses_a_weight_for_no_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from models.compare import main

    with pytest.raises(SystemExit):
        main([str(tmp_path), "--weight", "a=heavy"])
    assert "RUN=W with W a number" in capsys.readouterr().err


def test_compare_names_a_missing_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from models.compare import main

    assert main([str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nope/card_classifier.int8.onnx: not found" in err


def test_split_gives_back_the_shipped_members(tmp_path: Path) -> None:
    """Each member taken out of the committed merged model runs alone, and their average (weighed
    as metrics.json's member settings say) is the merged model's output again (so models.compare
    can score new runs against them)."""
    pytest.importorskip("onnx")
    import json

    from models.ensemble import member_count, split
    from vision.classifier import CardClassifier

    shipped = Path(__file__).parents[2] / "models" / "card_classifier.onnx"
    k = member_count(shipped)
    assert k >= 2
    parts = [CardClassifier(p) for p in split(shipped, tmp_path)]
    assert len(parts) == k and all(p.labels == parts[0].labels for p in parts)
    crops = list(np.random.default_rng(1).integers(0, 256, (5, 88, 64, 3), dtype=np.uint8))
    alone = [p.probabilities(crops) for p in parts]
    assert not np.allclose(alone[0], alone[1], atol=1e-3)  # two different networks
    members = json.loads((shipped.parent / "metrics.json").read_text())["members"]
    weights = [member_weight(m["settings"]) for m in members]
    assert len(weights) == k
    assert np.allclose(CardClassifier(shipped).probabilities(crops), np.average(alone, axis=0, weights=weights), atol=1e-5)
    assert member_count(tmp_path / "m0" / shipped.name) == 0  # a member is a plain model


def test_compare_refuses_a_model_file_that_is_not_merged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnx")
    from models.compare import main
    from models.ensemble import split

    member = split(Path(__file__).parents[2] / "models" / "card_classifier.onnx", tmp_path)[0]
    assert main([str(member)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not a merged model" in err


def test_compare_names_a_weighed_run_that_is_not_given_before_scoring(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from models.compare import main

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "card_classifier.int8.onnx").write_bytes(b"")  # never loaded: the check comes first
    assert main([str(tmp_path / "a"), "--weight", "b=2"]) == 2
    assert "--weight b: no such run (runs: a)" in capsys.readouterr().err


def test_quantising_leaves_nothing_in_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime's pre-processing can write scratch files into the working folder (a re-exported
    reader member left sym_shape_infer_temp.onnx and <uuid>.data behind); the recipe's quantiser
    works in a temporary folder instead. Paths given relative to the caller's working folder, as a
    user types them, still name the caller's files, and only the two models are left there."""
    pytest.importorskip("torch")  # models.train
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from models.train import quantise_feeds

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.normal(size=(64, 3, 3, 3)).astype(np.float32), "w")  # 7 kB: kept as external data
    graph = helper.make_graph([helper.make_node("Conv", ["input", "w"], ["logits"], pads=[1, 1, 1, 1])], "tiny",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["n", 3, 8, 8])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 64, 8, 8])], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    onnx.save(model, "tiny.onnx")
    quantise_feeds(Path("tiny.onnx"), Path("tiny.int8.onnx"),
                   [{"input": rng.random((2, 3, 8, 8)).astype(np.float32)} for _ in range(3)])
    assert sorted(p.name for p in work.iterdir()) == ["tiny.int8.onnx", "tiny.onnx"]
    assert any(node.op_type == "QuantizeLinear" for node in onnx.load("tiny.int8.onnx").graph.node)


def test_the_shipped_reader_also_reads_the_corner_indices_alone(tmp_path: Path) -> None:
    """``index_logits`` is the average of the corner-index members alone, as they read on their own;
    a merged model without it gains it (``add_index_output``), once."""
    pytest.importorskip("onnx")
    import shutil

    from models.ensemble import add_index_output, index_members, merge, split
    from vision.classifier import CardClassifier

    shipped = Path(__file__).resolve().parents[2] / "models" / "card_classifier.onnx"
    assert index_members(shipped) == [False, True, True]
    parts = split(shipped, tmp_path / "parts")
    crops = list(np.random.default_rng(3).integers(0, 256, (5, 88, 64, 3), dtype=np.uint8))
    expected = np.mean([CardClassifier(p, flip_average=False).probabilities(crops) for p in parts[1:]], axis=0)
    reader = CardClassifier(shipped)
    got = reader.classify_with_index(crops)[1]
    assert got is not None and len(got) == 5
    for reading, row in zip(got, expected, strict=True):
        assert reading.top3[0] == (reader.labels[int(np.argmax(row))], pytest.approx(float(row.max()), abs=1e-4))
    gone = next(card for card, _p in got[0].top3 if card != "back")
    without = reader.classify_with_index(crops, exclude={gone})[1]
    assert without is not None and gone not in [card for card, _p in without[0].top3]  # a card that cannot lie there

    plain = tmp_path / "plain.onnx"
    merge(parts, plain, weights=[2, 1, 1], turn=[True, False, False])
    shutil.copy(shipped.with_suffix(".json"), plain.with_suffix(".json"))
    assert CardClassifier(plain).classify_with_index(crops)[1] is None and index_members(plain) == [False, False, False]
    add_index_output(plain, [False, True, True])
    again = CardClassifier(plain).classify_with_index(crops)[1]
    assert again is not None
    assert [[c for c, _p in r.top3] for r in again] == [[c for c, _p in r.top3] for r in got]
    assert [p for r in again for _c, p in r.top3] == pytest.approx([p for r in got for _c, p in r.top3], abs=1e-5)
    with pytest.raises(ValueError, match="already"):
        add_index_output(plain, [False, True, True])
