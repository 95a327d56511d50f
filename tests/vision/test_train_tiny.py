"""The training recipe end to end on its tiny configuration (OpenCV-font decks, seconds)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")

from models.train import Config, add_arguments, config_from_args, run_recipe  # noqa: E402
from vision.classifier import CardClassifier  # noqa: E402


@pytest.mark.slow  # ~10 s, most of it importing torch
def test_tiny_recipe_end_to_end(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--tiny", "--workers", "1"]))
    assert cfg.tiny and cfg.samples <= 1024
    metrics = run_recipe(cfg, tmp_path, log=lambda m: None)
    for name in ("card_classifier.onnx", "card_classifier.fp32.onnx", "card_classifier.int8.onnx", "metrics.json"):
        assert (tmp_path / name).is_file(), name
    assert not (tmp_path / "checkpoint.pt").exists()  # a finished run leaves no round to resume
    on_disk = json.loads((tmp_path / "metrics.json").read_text())
    assert on_disk["shipped"] in ("fp32", "int8") and on_disk["shipped"] == metrics["shipped"]
    assert set(on_disk["results"]) == {"fp32", "int8"}
    assert on_disk["config"]["held_out_decks"] == ["font-1"]
    for variant in ("fp32", "int8"):
        clf = CardClassifier(tmp_path / f"card_classifier.{variant}.onnx")
        assert len(clf.labels) == 53 and clf.has_embedding
        assert clf.threshold == on_disk["threshold"]


def test_default_config_is_the_shipped_recipe() -> None:
    """The defaults must be the recipe that made the committed model (its metrics.json says which),
    so that `python -m models.train` with no flags rebuilds what ships. A knob added after that
    model was trained is not in its metrics.json; such a knob must default to the old behaviour."""
    import json
    from dataclasses import asdict

    cfg = Config()
    assert cfg.threads >= 1 and cfg.samples >= 10000 and not cfg.tiny
    shipped = json.loads((Path(__file__).parents[2] / "models" / "metrics.json").read_text())["config"]
    machine_or_found = {"workers", "threads", "train_decks", "held_out_decks"}
    recipe = {k: v for k, v in asdict(cfg).items() if k not in machine_or_found and k in shipped}
    assert len(recipe) >= 20 and recipe == {k: shipped[k] for k in recipe}


def test_swap_pictures_replaces_only_middles_and_only_within_pips_or_courts() -> None:
    import torch

    from models.train import _PICTURE, _swap_pictures

    # 2C 3C 4C AC 3D | JC QC KC JD | back, not a card (label = suit * 13 + rank, rank 9-11 = J Q K)
    labels = torch.tensor([0, 1, 2, 12, 14, 9, 10, 11, 22, 52, -1])
    xb = torch.stack([torch.full((3, 88, 64), float(i)) for i in range(len(labels))])
    before = xb.clone()
    _swap_pictures(xb, labels, 1.0, 1.0, torch.Generator().manual_seed(3))
    ys, xs = _PICTURE
    swapped = 0
    for i, lab in enumerate(labels.tolist()):
        middle = xb[i, :, ys, xs]
        outside = xb[i].clone()
        outside[:, ys, xs] = before[i, :, ys, xs]
        assert torch.equal(outside, before[i]), "the index corners must never change"
        donor = int(middle[0, 0, 0])
        assert torch.all(middle == donor)
        if lab < 0 or lab >= 52:
            assert donor == i, "backs and non-cards keep their middle"
        elif donor != i:
            swapped += 1
            given = int(labels[donor])
            is_court = 9 <= lab % 13 <= 11
            assert 0 <= given < 52 and (9 <= given % 13 <= 11) == is_court, "pips and courts never mix"
            assert (given % 13 != lab % 13) if is_court else (given != lab)
    assert swapped >= 2, "with chance 1 cards must have been given another middle"


@pytest.mark.parametrize("donor", ["rank", "card"])
def test_court_donor_decides_whether_a_court_can_get_its_own_rank_of_another_suit(donor: str) -> None:
    """Four jacks of four suits: "rank" never swaps a jack's picture for another jack's (the picture
    keeps telling the suit); "card" does, so only the index corner tells the suit."""
    import torch

    from models.train import _PICTURE, _swap_pictures

    jacks = torch.tensor([9, 22, 35, 48])  # JC JD JH JS
    xb = torch.stack([torch.full((3, 88, 64), float(i)) for i in range(4)])
    _swap_pictures(xb, jacks, 1.0, 0.0, torch.Generator().manual_seed(1), court_donor=donor)
    ys, xs = _PICTURE
    donors = [int(xb[i, 0, ys, xs][0, 0]) for i in range(4)]
    swapped = [i for i, d in enumerate(donors) if d != i]
    if donor == "rank":
        assert swapped == []
    else:
        assert len(swapped) >= 2 and all(int(jacks[donors[i]]) != int(jacks[i]) for i in swapped)


def test_court_donor_must_be_rank_or_card() -> None:
    import torch

    from models.train import _swap_pictures

    with pytest.raises(ValueError, match="court_donor"):
        _swap_pictures(torch.zeros(1, 3, 88, 64), torch.tensor([9]), 1.0, 0.0, torch.Generator(), court_donor="suit")


def test_aux_heads_read_rank_and_suit_from_the_card_label() -> None:
    """The training-only heads: label suit*13+rank gives rank and suit targets; a back is rank 13,
    suit 4. A head that already says the right rank and suit has a far lower loss than one that
    says a neighbouring rank or the other black suit (the pair's usual mistakes)."""
    import torch

    from models.net import AuxHeads

    heads = AuxHeads(embed_dim=19)
    with torch.no_grad():  # the embedding is one-hot over 14 ranks then 5 suits: heads read it directly
        heads.rank.weight.zero_()
        heads.rank.bias.zero_()
        heads.suit.weight.zero_()
        heads.suit.bias.zero_()
        for r in range(14):
            heads.rank.weight[r, r] = 20.0
        for s in range(5):
            heads.suit.weight[s, 14 + s] = 20.0

    def emb(rank: int, suit: int) -> torch.Tensor:
        e = torch.zeros(19)
        e[rank] = e[14 + suit] = 1.0
        return e

    labels = torch.tensor([3 * 13 + 10, 0 * 13 + 6, 52])  # QS, 8C, back
    right = torch.stack([emb(10, 3), emb(6, 0), emb(13, 4)])
    wrong_suit = torch.stack([emb(10, 0), emb(6, 3), emb(13, 4)])
    wrong_rank = torch.stack([emb(10, 3), emb(7, 0), emb(12, 4)])
    with torch.no_grad():
        low = float(heads.loss(right, labels))  # label smoothing keeps it above 0
        assert float(heads.loss(wrong_suit, labels)) > low + 5 and float(heads.loss(wrong_rank, labels)) > low + 5


def test_open_set_rule_accepts_no_more_negatives_than_wrong_cards() -> None:
    """Crops that are not a card are few among the calibration crops; the overall share of
    confidently wrong alone would let a rule accept them, so they have a bound of their own."""
    from models.train import choose_open_set

    cards = np.full((1000, 53), 0.1 / 52, np.float32)
    cards[np.arange(1000), np.arange(1000) % 53] = 0.9
    negatives = np.full((5, 53), 0.4 / 52, np.float32)
    negatives[:, 7] = 0.6  # a bare table that looks a little like one card
    probs = np.concatenate([cards, negatives])
    y = np.concatenate([np.arange(1000) % 53, np.full(5, -1)])
    threshold, margin = choose_open_set(probs, y, max_wrong=0.01)  # 10 wrong crops overall would pass
    accepted = (probs.max(1) >= threshold) & (np.sort(probs, 1)[:, -1] - np.sort(probs, 1)[:, -2] >= margin)
    assert not accepted[1000:].any() and accepted[:1000].all()


def test_an_artwork_pack_gives_back_every_face_exactly_and_a_bad_pack_is_refused(tmp_path: Path, monkeypatch) -> None:
    """``--pack`` carries the rendered decks to a machine without them; ``--assets`` reads them
    there: the alpha exactly, and every pixel that shows exactly (WebP may clear the colour of a
    transparent one, which nothing sees)."""
    from models import train

    rng = np.random.default_rng(0)
    face = lambda: rng.integers(0, 256, (24, 16, 4), dtype=np.uint8)  # noqa: E731
    decks = {"kde-x": {"AS": face(), "back": face()}, "procedural-00": {"2H": face()}}
    held = {"gnome-y": {"KD": face()}}
    pack = tmp_path / "art.npz"
    train.pack_artwork(pack, decks, held)
    got_train, got_held = train.unpack_artwork(pack)
    assert got_train.keys() == decks.keys() and got_held.keys() == held.keys()
    for mine, theirs in ((decks, got_train), (held, got_held)):
        for name in mine:
            assert mine[name].keys() == theirs[name].keys()
            for label, img in mine[name].items():
                got, shows = theirs[name][label], img[..., 3] > 0
                assert np.array_equal(got[..., 3], img[..., 3]) and np.array_equal(got[shows], img[shows])
    monkeypatch.setattr(train, "ASSETS", pack)
    with pytest.raises(SystemExit, match="1 procedural designs"):
        train.load_artwork(Config())  # the recipe draws 48: a pack of other designs is not its artwork
    one = Config(procedural_decks=1)
    assert train.load_artwork(one)[0].keys() == decks.keys() and one.held_out_decks == ["gnome-y"]
    (tmp_path / "bad.npz").write_bytes(b"not a pack")
    with pytest.raises(SystemExit, match="not an artwork pack"):
        train.unpack_artwork(tmp_path / "bad.npz")


@pytest.mark.slow  # ~15 s: three tiny trainings
def test_a_run_stopped_at_its_time_budget_resumes_to_the_same_network(tmp_path: Path) -> None:
    """A lent GPU machine stops a command after ten minutes: the recipe saves each round and the
    same command goes on from there, to the network an unbroken run makes, bit for bit."""
    import torch

    from models.train import StoppedEarly, load_artwork, train_model

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--tiny", "--workers", "1", "--rounds", "2", "--members", ""]))
    decks, _held = load_artwork(cfg)
    unbroken = train_model(cfg, decks, "cpu").state_dict()
    ckpt = tmp_path / "checkpoint.pt"
    with pytest.raises(StoppedEarly) as stop:
        train_model(cfg, decks, "cpu", checkpoint=ckpt, deadline=0.0)  # past: stop after round 1
    assert stop.value.code == 3 and torch.load(ckpt, weights_only=False)["rounds_done"] == 1
    resumed = train_model(cfg, decks, "cpu", checkpoint=ckpt).state_dict()
    assert torch.load(ckpt, weights_only=False)["rounds_done"] == 2
    assert unbroken.keys() == resumed.keys()
    assert all(torch.equal(unbroken[k], resumed[k]) for k in unbroken)
    # a checkpoint of another recipe is not resumed from: that run starts at round 1
    other = config_from_args(parser.parse_args(["--tiny", "--workers", "1", "--rounds", "2", "--members", "",
                                                "--seed", "7"]))
    with pytest.raises(StoppedEarly):
        train_model(other, decks, "cpu", checkpoint=ckpt, deadline=0.0)
    assert torch.load(ckpt, weights_only=False)["rounds_done"] == 1
