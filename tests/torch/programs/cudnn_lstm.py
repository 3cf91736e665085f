"""nn.LSTM trained with cuDNN on (torch's default): two layers,
bidirectional, sequences of 12 steps, batch 6, Adam, three steps. Prints
torch's figures (common.figures) and the size cuDNN gave its flat weight
buffer (the module's _flat_weights share one: torch asks
cudnnGetRNNWeightSpaceSize), against the size the LSTM's parameters take."""
import torch
import torch.nn as nn

from common import emit, figures

assert torch.backends.cudnn.enabled and torch.backends.cudnn.is_available()
free, total = torch.cuda.mem_get_info()  # the device's, before the program allocates
used_before = total - free
torch.manual_seed(0)
T, B, I, H = 12, 6, 20, 32
lstm = nn.LSTM(I, H, num_layers=2, bidirectional=True).cuda()
head = nn.Linear(2 * H, 5).cuda()
opt = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=1e-3)
x = torch.randn(T, B, I, device="cuda")
target = torch.randn(T, B, 5, device="cuda")
for step in range(3):
    opt.zero_grad(set_to_none=True)
    out, _ = lstm(x)  # @lstm
    loss = nn.functional.mse_loss(head(out), target)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
params = sum(p.numel() * p.element_size() for p in lstm.parameters())
flat = lstm._flat_weights[0].untyped_storage().nbytes()
free, total = torch.cuda.mem_get_info()
emit(figures(steps=3, device_used=total - free - used_before, max_memory_allocated=torch.cuda.max_memory_allocated(),
             lstm_param_bytes=params, flat_weight_bytes=flat,
             x_bytes=T * B * I * 4))
