"""The realistic workloads as a PyTorch user writes them: one source for both frameworks.

Each builder takes the framework module (`torch` or `lamina`) and returns a model written
with its `nn.Module`, `nn.functional` and tensor methods only, so that the same lines run
on both, which is the port lamina promises.
  resnet: ResNet-18 for 32x32x3 images (BasicBlocks 64-128-256-512, batch norm, stride-2
          downsampling with 1x1 projections, global average pooling), 10 classes.
  gpt:    nanoGPT's small block stack (6 layers, 6 heads, width 384, context 128,
          vocabulary 512, GELU MLP x4, pre-norm, tied embedding).
  lstm2:  a 2-layer LSTM language model (width 512, dropout 0.2), vocabulary 512.
Sizes are arguments, so that tests build small ones from the same code.
"""

from __future__ import annotations

import math
from typing import Any


def resnet(t: Any, widths: tuple[int, ...] = (64, 128, 256, 512), blocks: int = 2,
           classes: int = 10) -> Any:
    nn, F = t.nn, t.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, widths[0], 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(widths[0])
            layers, cin = [], widths[0]
            for i, w in enumerate(widths):
                for b in range(blocks):
                    layers.append(BasicBlock(cin, w, 2 if i and not b else 1))
                    cin = w
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(widths[-1], classes)

        def forward(self, x: Any) -> Any:
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.layers(out)
            out = F.adaptive_avg_pool2d(out, 1).flatten(1)
            return self.fc(out)

    return ResNet()


def gpt(t: Any, n_layer: int = 6, n_head: int = 6, n_embd: int = 384, block_size: int = 128,
        vocab_size: int = 512, dropout: float = 0.0) -> Any:
    nn, F = t.nn, t.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.dropout = dropout

        def forward(self, x: Any) -> Any:
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.c_proj = nn.Linear(4 * n_embd, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x: Any) -> Any:
            return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = MLP()

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab_size, n_embd)
            self.wpe = nn.Embedding(block_size, n_embd)
            self.drop = nn.Dropout(dropout)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
            self.wte.weight = self.lm_head.weight  # tied, as nanoGPT
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

        def forward(self, idx: Any) -> Any:
            _, T = idx.size()
            pos = t.arange(0, T, dtype=t.long)
            x = self.drop(self.wte(idx) + self.wpe(pos))
            for block in self.h:
                x = block(x)
            return self.lm_head(self.ln_f(x))

        def configure_optimizers(self, weight_decay: float, lr: float) -> Any:
            """AdamW with two groups, as nanoGPT: matrices decay, biases and norms do not."""
            params = [p for p in self.parameters() if p.requires_grad]
            groups = [{"params": [p for p in params if p.dim() >= 2],
                       "weight_decay": weight_decay},
                      {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
            return t.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))

    return GPT()


def lstm2(t: Any, vocab_size: int = 512, width: int = 512, layers: int = 2,
          dropout: float = 0.2) -> Any:
    nn = t.nn

    class LSTMLanguageModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab_size, width)
            self.drop = nn.Dropout(dropout)
            self.lstm = nn.LSTM(width, width, num_layers=layers, dropout=dropout,
                                batch_first=True)
            self.head = nn.Linear(width, vocab_size)

        def forward(self, idx: Any) -> Any:
            out, _ = self.lstm(self.drop(self.embed(idx)))
            return self.head(self.drop(out))

    return LSTMLanguageModel()
