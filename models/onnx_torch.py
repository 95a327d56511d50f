"""Run a small ONNX graph as a trainable torch module, so a shipped network can be trained further.

The shipped reader exists only as ONNX (its members' batch norms are folded into their
convolutions), and ``models/finetune.py`` needs it back in torch. Written here rather than taken
from onnx2torch: that package imports torchvision at import time, and the torchvision that pip
pairs with the recipe's pinned CPU build of torch does not load beside it. The graphs this needs
are the reader members' (``models/net.py`` exported, then split out of the merged model): a
dozen plain operators, listed in :data:`OPS`.

Initialisers that are float weights (those of Conv, Gemm and MatMul, and a bias added to them) become parameters; everything else
is a constant. Shapes flow as tensors (``Shape``, ``Gather``, ``Slice`` with computed bounds), so
a module traced back to ONNX keeps its batch size dynamic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _pads(pads: list[int] | None, n: int = 2) -> tuple[int, ...] | None:
    """ONNX pads (begin..., end...) as torch's symmetric padding; None when not symmetric."""
    if not pads:
        return (0,) * n
    begin, end = pads[:n], pads[n:]
    return tuple(begin) if list(begin) == list(end) else None


def _slice(x: torch.Tensor, starts: Any, ends: Any, axes: Any, steps: Any) -> torch.Tensor:
    const = not any(torch.is_tensor(v) for bounds in (starts, ends) for v in bounds)
    if const:
        out = x
        for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
            dim = int(out.shape[a])
            # ONNX clamps out-of-range bounds as Python's slice.indices does; a negative step
            # (a turned corner) needs explicit indices, torch slicing takes positive steps only
            picked = range(*slice(int(s), int(e), int(st)).indices(dim))
            if int(st) > 0:
                out = out.narrow(int(a), picked.start, len(picked)) if int(st) == 1 else \
                    out.index_select(int(a), torch.tensor(list(picked), dtype=torch.long))
            else:
                out = out.index_select(int(a), torch.tensor(list(picked), dtype=torch.long))
        return out
    out = x  # bounds computed from a shape (the batch size): arange keeps them dynamic when traced
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        lo = s if torch.is_tensor(s) else torch.tensor(int(s))
        dim = torch._shape_as_tensor(out)[int(a)]  # type: ignore[assignment]  # (torch's stubs: a traced bound is a Tensor or an int)
        hi = torch.minimum(e if torch.is_tensor(e) else torch.tensor(int(e)), dim)  # type: ignore[arg-type]  # (torch's stubs: a traced bound is a Tensor or an int)
        out = out.index_select(int(a), torch.arange(lo, hi, int(st)))  # type: ignore[call-overload]  # (torch's stubs: a traced bound is a Tensor or an int)
    return out


class OnnxModule(nn.Module):
    """A torch module that evaluates an ONNX ``ModelProto`` node by node."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        from onnx import numpy_helper

        g = model.graph
        self.inputs = [i.name for i in g.input]
        self.outputs = [o.name for o in g.output]
        self.nodes = [(n.op_type, list(n.input), list(n.output), _attrs(n)) for n in g.node]
        unknown = {op for op, *_ in self.nodes} - set(OPS)
        if unknown:
            raise ValueError(f"operators not supported here: {sorted(unknown)}")
        weighted = {"Conv": (1, 2), "Gemm": (1, 2), "MatMul": (1,), "Add": (0, 1)}
        trainable = {n.input[i] for n in g.node if n.op_type in weighted for i in weighted[n.op_type] if i < len(n.input)}
        self.params = nn.ParameterDict()
        self.consts: dict[str, Any] = {}
        self._key: dict[str, str] = {}
        for init in g.initializer:
            arr = numpy_helper.to_array(init)
            if init.name in trainable and arr.dtype == np.float32:
                key = f"p{len(self.params)}"
                self._key[init.name] = key
                self.params[key] = nn.Parameter(torch.from_numpy(arr.copy()))
            else:
                self.consts[init.name] = torch.from_numpy(arr.copy())
        for op, _ins, outs, at in self.nodes:
            if op == "Constant":
                self.consts[outs[0]] = torch.from_numpy(numpy_helper.to_array(at["value"]).copy())

    def _value(self, env: dict[str, Any], name: str) -> Any:
        if name in env:
            return env[name]
        if name in self._key:
            return self.params[self._key[name]]
        return self.consts[name]

    def forward(self, *xs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        env: dict[str, Any] = dict(zip(self.inputs, xs, strict=False))
        for op, ins, outs, at in self.nodes:
            if op == "Constant":
                continue
            args = [self._value(env, n) if n else None for n in ins]
            env[outs[0]] = OPS[op](args, at)
        return tuple(env[o] for o in self.outputs)


def _conv(a: list[Any], at: dict[str, Any]) -> torch.Tensor:
    pad = _pads(at.get("pads"))
    x = a[0] if pad is not None else F.pad(a[0], (at["pads"][1], at["pads"][3], at["pads"][0], at["pads"][2]))
    return F.conv2d(x, a[1], a[2], stride=tuple(at.get("strides", [1, 1])), padding=pad or 0,
                    dilation=tuple(at.get("dilations", [1, 1])), groups=int(at.get("group", 1)))


def _gemm(a: list[Any], at: dict[str, Any]) -> torch.Tensor:
    x, w = a[0], a[1]
    plain = float(at.get("alpha", 1.0)) == 1.0 and float(at.get("beta", 1.0)) == 1.0 and not at.get("transA", 0)
    if plain and at.get("transB", 0):
        return F.linear(x, w, a[2] if len(a) > 2 else None)  # exported back as one Gemm
    if at.get("transA", 0):
        x = x.t()
    if at.get("transB", 0):
        w = w.t()
    y = float(at.get("alpha", 1.0)) * (x @ w)
    return y + float(at.get("beta", 1.0)) * a[2] if len(a) > 2 and a[2] is not None else y  # type: ignore[no-any-return]  # (torch's stubs: a traced bound is a Tensor or an int)


def _slice_op(a: list[Any], at: dict[str, Any]) -> torch.Tensor:
    x = a[0]
    parts = [a[i] if i < len(a) else None for i in range(1, 5)]
    starts, ends, axes, steps = parts
    n = len(starts.reshape(-1)) if torch.is_tensor(starts) else len(starts)  # type: ignore[arg-type]  # (torch's stubs: a traced bound is a Tensor or an int)
    axes = list(range(n)) if axes is None else axes
    steps = [1] * n if steps is None else steps
    return _slice(x, _as_list(starts), _as_list(ends), _as_list(axes), _as_list(steps))


def _as_list(t: Any) -> Any:
    """Bounds from constants become Python ints; bounds computed from a shape stay tensors."""
    if isinstance(t, list):
        return t
    if getattr(t, "_from_shape", False):
        return [v for v in t.reshape(-1)]
    return [int(v) for v in t.reshape(-1).tolist()]


def _shape(a: list[Any], at: dict[str, Any]) -> torch.Tensor:
    s = torch._shape_as_tensor(a[0])
    s._from_shape = True  # type: ignore[attr-defined]
    return s


def _tagged(t: torch.Tensor, *sources: Any) -> torch.Tensor:
    if any(getattr(s, "_from_shape", False) for s in sources):
        t._from_shape = True  # type: ignore[attr-defined]
    return t


def _gather(a: list[Any], at: dict[str, Any]) -> torch.Tensor:
    return _tagged(torch.index_select(a[0], int(at.get("axis", 0)), a[1].reshape(-1)).reshape(a[1].shape), a[0])


def _unsqueeze(a: list[Any], at: dict[str, Any]) -> torch.Tensor:
    out = a[0]
    for ax in sorted(int(v) for v in a[1].reshape(-1).tolist()):
        out = out.unsqueeze(ax)
    return _tagged(out, a[0])


def _concat(a: list[Any], at: dict[str, Any]) -> torch.Tensor:
    return _tagged(torch.cat(a, dim=int(at["axis"])), *a)


_DTYPES = {1: torch.float32, 6: torch.int32, 7: torch.int64, 9: torch.bool, 11: torch.float64}

OPS: dict[str, Any] = {
    "Constant": lambda a, at: None,
    "Conv": _conv,
    "Relu": lambda a, at: F.relu(a[0]),
    "Identity": lambda a, at: a[0],
    "MatMul": lambda a, at: a[0] @ a[1],
    "Min": lambda a, at: torch.minimum(a[0], a[1]),
    "Range": lambda a, at: torch.arange(a[0], a[1], a[2]),
    "Cast": lambda a, at: a[0].to(_DTYPES[int(at["to"])]),
    "MaxPool": lambda a, at: F.max_pool2d(a[0], tuple(at["kernel_shape"]), tuple(at.get("strides", at["kernel_shape"])),
                                          _pads(at.get("pads")) or 0, ceil_mode=bool(at.get("ceil_mode", 0))),
    "AveragePool": lambda a, at: F.avg_pool2d(a[0], tuple(at["kernel_shape"]), tuple(at.get("strides", at["kernel_shape"])),
                                              _pads(at.get("pads")) or 0, ceil_mode=bool(at.get("ceil_mode", 0)),
                                              count_include_pad=bool(at.get("count_include_pad", 0))),
    "Flatten": lambda a, at: torch.flatten(a[0], int(at.get("axis", 1))),
    "Gemm": _gemm,
    "Sub": lambda a, at: a[0] - a[1],
    "Div": lambda a, at: a[0] / a[1],
    "Add": lambda a, at: a[0] + a[1],
    "Mul": lambda a, at: a[0] * a[1],
    "Max": lambda a, at: torch.maximum(a[0], a[1]),
    "Slice": _slice_op,
    "Shape": _shape,
    "Gather": _gather,
    "Unsqueeze": _unsqueeze,
    "Concat": _concat,
}


def convert(model: Any) -> OnnxModule:
    """A trainable module computing what ``model`` (an ONNX ModelProto) computes."""
    return OnnxModule(model)
