"""The card network: a small plain CNN (about 0.25 M parameters, about 12 M multiply-adds).

Plain 3×3 convolutions with batch norm fold into single Conv nodes in ONNX and quantise cleanly
to int8; depthwise blocks would be smaller but onnxruntime runs them slower per FLOP on one core.
The head pools to a 3×2 grid (not a global average) so the network can tell where on the card a
feature sits (the index corners versus the pips), then a 128-d embedding used both by the
classifier layer and by deck enrolment (nearest prototypes).
"""

from __future__ import annotations

import torch
from torch import nn

N_CLASSES = 53
EMBED_DIM = 128


def _block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class _Reader(nn.Module):
    """What every card network ends with: a 128-d embedding (enrolment compares these), dropout and
    the 53-way classifier; and input normalisation in the graph, so the runtime only scales to 0..1."""

    mean: torch.Tensor  # buffers (register_buffer in _add_head): saved with the weights, in the ONNX graph
    std: torch.Tensor

    def _add_head(self, features: int, n_classes: int, embed_dim: int, *, flatten: bool) -> None:
        # created in this order (after the trunk) so a seeded run initialises the weights as before
        self.embed = nn.Sequential(*([nn.Flatten()] if flatten else []), nn.Linear(features, embed_dim),
                                   nn.ReLU(inplace=True))
        self.drop = nn.Dropout(0.2)
        self.classifier = nn.Linear(embed_dim, n_classes)
        self.register_buffer("mean", torch.tensor([0.45, 0.45, 0.45]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.25, 0.25, 0.25]).view(1, 3, 1, 1))

    def _read(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        emb = self.embed(features)
        return self.classifier(self.drop(emb)), emb


class CardNet(_Reader):
    """Input: (N, 3, 88, 64) BGR in 0..1. Outputs: logits (N, 53) and embedding (N, 128)."""

    def __init__(self, width: int = 16, n_classes: int = N_CLASSES, embed_dim: int = EMBED_DIM,
                 *, fine_stem: int = 0) -> None:
        super().__init__()
        w = width
        # fine_stem > 0: a first block of that many channels at full resolution, so thin strokes of
        # small corner indices (a spade's stem, a club's lobes) are seen before the first stride
        stem = [_block(3, fine_stem, 1), _block(fine_stem, w, 2)] if fine_stem > 0 else [_block(3, w, 2)]
        self.features = nn.Sequential(
            *stem,  # 44x32
            _block(w, 2 * w, 2),  # 22x16
            _block(2 * w, 2 * w),
            nn.MaxPool2d(2),  # 11x8
            _block(2 * w, 4 * w),
            _block(4 * w, 4 * w),
            nn.MaxPool2d(2),  # 5x4
            _block(4 * w, 8 * w),
            nn.AvgPool2d(kernel_size=(3, 2), stride=(1, 2)),  # 5x4 -> 3x2 (top, middle, bottom; left, right)
        )
        self._add_head(8 * w * 6, n_classes, embed_dim, flatten=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self._read(self.features((x - self.mean) / self.std))


#: The top-left index of a canonical 64x88 crop, generously (rows, columns): letters and suit
#: sit in the top fifth and left fifth of a card, and the finder's corners may be 3 % off.
INDEX_BOX = (32, 20)


class IndexNet(_Reader):
    """Reads only a card's two corner indices, at the crop's full resolution.

    Input and outputs as :class:`CardNet` (a whole 88x64 crop in; logits and a 128-d embedding
    out), so it trains, exports, quantises and merges like any other member. It cuts the top-left
    index and the bottom-right one turned by 180°, runs both through one small trunk without a
    first stride (a spade's stem in a 10-pixel index is thinner than two pixels), and pools them
    symmetrically (sum and maximum), so the crop and its 180° turn read the same and a finger over
    one index leaves the other. Why: what the whole-card pair still gets wrong are suits and ranks
    that only the index tells (Q♠ read as Q♣, an 8♥ with a finger over a pip read as a 9♥); a
    network that never sees the middle cannot be misled by it, and errs where the others do not.
    """

    def __init__(self, width: int = 16, n_classes: int = N_CLASSES, embed_dim: int = EMBED_DIM) -> None:
        super().__init__()
        w = width
        self.trunk = nn.Sequential(
            _block(3, w, 1),  # 32x20
            _block(w, 2 * w, 2),  # 16x10
            _block(2 * w, 2 * w),
            nn.MaxPool2d(2),  # 8x5
            _block(2 * w, 4 * w),
            _block(4 * w, 4 * w),
            nn.AvgPool2d(kernel_size=(4, 5)),  # 2x1: the rank above, the suit below
            nn.Flatten(),
        )
        self._add_head(2 * 4 * w * 2, n_classes, embed_dim, flatten=False)  # per corner: 4w channels x 2 cells; sum and max

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = (x - self.mean) / self.std
        h, w = INDEX_BOX
        top_left = x[:, :, :h, :w]
        bottom_right = torch.flip(x[:, :, -h:, -w:], dims=(2, 3))
        n = x.shape[0]
        f = self.trunk(torch.cat([top_left, bottom_right], dim=0))
        a, b = f[:n], f[n:]
        return self._read(torch.cat([a + b, torch.maximum(a, b)], dim=1))


def build_net(arch: str = "card", width: int = 16, *, fine_stem: int = 0) -> nn.Module:
    """The network a member's ``arch`` names: ``"card"`` (:class:`CardNet`) or ``"index"`` (:class:`IndexNet`)."""
    if arch == "card":
        return CardNet(width=width, fine_stem=fine_stem)
    if arch == "index":
        return IndexNet(width=width)
    raise ValueError(f"arch must be 'card' or 'index', not {arch!r}")


class AuxHeads(nn.Module):
    """Rank (13 + back) and suit (4 + back) heads on the embedding, used only while training.

    Why: many of the cards the shipped pair gets wrong have the right colour and the wrong suit
    shape (Q♠ read as Q♣) or a neighbouring rank (8♥ as 9♥). The 53-way head learns "spade" once
    per rank; a suit head learns it from all 26 black cards at once and a rank head reads the index
    whatever the suit, which pushes the shared embedding towards the two things an index says.
    The heads are not exported: the shipped graph is the CardNet alone. With weight 0.5 on fb1's
    recipe this gave the best single network so far (run fb1a), at 1.0 a worse one (fb1a1), so
    it stays off by default (models/README.md).
    """

    def __init__(self, embed_dim: int = EMBED_DIM) -> None:
        super().__init__()
        self.rank = nn.Linear(embed_dim, 14)
        self.suit = nn.Linear(embed_dim, 5)

    def loss(self, emb: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Summed cross-entropy of both heads; ``labels`` are card labels 0..52 (52: back)."""
        card = labels < 52
        rank = torch.where(card, labels % 13, torch.full_like(labels, 13))
        suit = torch.where(card, labels // 13, torch.full_like(labels, 4))
        return (nn.functional.cross_entropy(self.rank(emb), rank, label_smoothing=0.05)
                + nn.functional.cross_entropy(self.suit(emb), suit, label_smoothing=0.05))


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
