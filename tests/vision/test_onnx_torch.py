"""The shipped reader's members back in torch: same outputs, trainable, and exported back with a
dynamic batch (the fine-tune's round trip, models/finetune.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import onnxruntime as ort  # noqa: E402

from models.ensemble import split  # noqa: E402
from models.onnx_torch import convert  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "card_classifier.fp32.onnx"


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return split(SHIPPED, tmp_path_factory.mktemp("members"))


def test_every_member_computes_what_onnxruntime_computes(members: list[Path]) -> None:
    x = np.random.default_rng(0).random((3, 3, 88, 64), dtype=np.float32)
    for path in members:
        want = ort.InferenceSession(str(path)).run(None, {"input": x})
        got = convert(onnx.load(str(path)))(torch.from_numpy(x))
        assert [tuple(g.shape) for g in got] == [w.shape for w in want]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g.detach().numpy(), w, atol=1e-4)


def test_a_member_trains_and_exports_with_any_batch(members: list[Path], tmp_path: Path) -> None:
    net = convert(onnx.load(str(members[-1])))  # an index network: its graph slices by the batch size
    logits, _emb = net(torch.rand(4, 3, 88, 64))
    torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 2, 3])).backward()
    grads = [p.grad for p in net.parameters()]
    assert grads and all(g is not None for g in grads) and any(float(g.abs().sum()) > 0 for g in grads)
    out = tmp_path / "m.onnx"
    torch.onnx.export(net, torch.zeros(1, 3, 88, 64), str(out), input_names=["input"], output_names=["logits", "embedding"],
                      dynamic_axes={"input": {0: "n"}, "logits": {0: "n"}, "embedding": {0: "n"}}, opset_version=17,
                      dynamo=False)
    x = np.random.default_rng(1).random((5, 3, 88, 64), dtype=np.float32)
    got = ort.InferenceSession(str(out)).run(None, {"input": x})[0]
    want = net(torch.from_numpy(x))[0].detach().numpy()
    assert got.shape == (5, 53)
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_an_unknown_operator_is_refused_by_name() -> None:
    from onnx import TensorProto, helper

    node = helper.make_node("Erf", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    with pytest.raises(ValueError, match="Erf"):
        convert(helper.make_model(graph))
