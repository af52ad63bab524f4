"""A tiny GPT in NumPy with hand-written backward passes; knows nothing of RAG.

layers.py (forward/backward pairs), mini_gpt.py (the model, generation with a KV cache),
optim.py (AdamW), train.py (the loop; `python -m minimodel.train`), checkpoint.py (.npz files).
See theory/07-minigpt-reader.md.
"""

from minimodel.checkpoint import CheckpointError
from minimodel.mini_gpt import MiniGPT, MiniGPTConfig
from minimodel.optim import AdamW, clip_grad_norm, cosine_lr

# minimodel.train is not imported here: `python -m minimodel.train` must find it unimported.
__all__ = ["AdamW", "CheckpointError", "MiniGPT", "MiniGPTConfig", "clip_grad_norm", "cosine_lr"]
