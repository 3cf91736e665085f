"""A nanoGPT-style model (token and position embeddings, two blocks of
causal self-attention with F.scaled_dot_product_attention and an MLP, a
head) trained for three AdamW steps under bf16 autocast, with torch's
default SDPA backends: on the simulated device (compute capability 9.0)
torch picks cuDNN attention for bf16 (asserted, with
torch._fused_sdp_choice). Prints torch's figures (common.figures), what
the device lost while it ran (cudaMemGetInfo, the simulator's counter),
and the bytes of the attention scores (batch x heads x sequence x
sequence, float): the largest tensor cuDNN's forward attention graph
names (a virtual one), hence its workspace by the simulated cuDNN's rule
(tests/sim/README.md, "cuDNN")."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend

from common import emit, figures

free, total = torch.cuda.mem_get_info()  # the device's, before the program allocates
used_before = total - free
B, T, E, NH, V = 4, 64, 128, 4, 256


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(E)
        self.qkv = nn.Linear(E, 3 * E)
        self.proj = nn.Linear(E, E)
        self.ln2 = nn.LayerNorm(E)
        self.mlp = nn.Sequential(nn.Linear(E, 4 * E), nn.GELU(), nn.Linear(4 * E, E))

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).split(E, dim=2)
        q, k, v = (t.view(B, T, NH, E // NH).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # @attention
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, E))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, E)
        self.pos = nn.Embedding(T, E)
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(E, V)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        return self.head(self.blocks(x))


torch.manual_seed(0)
probe = torch.empty(B, NH, T, E // NH, device="cuda", dtype=torch.bfloat16)
assert torch._fused_sdp_choice(probe, probe, probe, is_causal=True) == \
    SDPBackend.CUDNN_ATTENTION.value
del probe
model = GPT().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
idx = torch.randint(0, V, (B, T), device="cuda")
for step in range(3):
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(idx)
    loss = F.cross_entropy(logits.float().view(-1, V), idx.view(-1))
    loss.backward()
    opt.step()
torch.cuda.synchronize()
free, total = torch.cuda.mem_get_info()
emit(figures(steps=3, device_used=total - free - used_before,
             scores_bytes=B * NH * T * T * 4, attention_calls=2 * 3))
