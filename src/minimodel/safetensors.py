"""Read a .safetensors file: real pretrained weights, with no pickle and no framework.

What it is: the whole format in one function. A file is
    [8 bytes: N, the header's length, unsigned little-endian]
    [N bytes: a JSON object  name -> {"dtype": "F32", "shape": [384, 384],
                                      "data_offsets": [begin, end]}, plus "__metadata__"]
    [the data: every tensor's raw little-endian bytes, at data_offsets from here]
so reading it is: read N, parse the JSON, and view each [begin, end) slice of the data as an
array of its dtype and shape (`np.frombuffer`). Nothing in the file is ever executed, which is
why the format exists: a PyTorch .bin is a pickle, and unpickling runs code.
What it leaves out: writing (the tests write their files by hand, byte by byte), the 8-bit
float dtypes, complex numbers. F16 and BF16 are widened to float32 on load (NumPy has no
bfloat16); every other dtype keeps its own.
Follows the format's specification (github.com/huggingface/safetensors, README "Format"), and
refuses what its reference reader refuses: an unknown dtype, a size that disagrees with the
shape, tensors that overlap or leave holes, offsets past the end, a truncated file.

Example: load_safetensors(path)["embeddings.word_embeddings.weight"].shape == (30522, 384)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

# the format's dtype names -> NumPy's (all little-endian); BF16 has no NumPy dtype: see _bf16
DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2",
          "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
          "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?"}
MAX_HEADER = 100_000_000  # bytes; the reference reader's limit on N (a guard against garbage)


class SafetensorsError(ValueError):
    """A file that is not a valid safetensors file; the message names the file and the fault."""


def _bf16(raw: np.ndarray) -> np.ndarray:  # [...] uint16 -> [...] float32
    """bfloat16 is float32 with the low 16 bits of the mantissa cut off: put them back as
    zeros. bits(f32) = bits(bf16) << 16, exactly (the same sign, exponent and top mantissa)."""
    return (raw.astype(np.uint32) << 16).view(np.float32)  # [...] the same values, widened


def read_header(path: str | Path) -> tuple[dict, int]:
    """The parsed JSON header (tensor entries and "__metadata__") and where the data starts.

    Checks every entry against the specification before any tensor is read, so a bad file
    fails here, whole, with the first fault it has.
    """
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) < 8:
            raise SafetensorsError(f"{path}: truncated: {size} bytes, not even the 8-byte "
                                   "header length")
        n = int.from_bytes(prefix, "little")  # N: the header's length in bytes
        if n > MAX_HEADER or 8 + n > size:
            raise SafetensorsError(f"{path}: header length {n} does not fit in a file of "
                                   f"{size} bytes (truncated, or not a safetensors file)")
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorsError(f"{path}: the header is not UTF-8 JSON ({e})") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: the header is a JSON {type(header).__name__}, "
                               "not an object")
    check_entries(path, header, data_size=size - 8 - n)
    return header, 8 + n


def check_entries(path: Path, header: dict, data_size: int) -> None:
    """Every entry well-formed, and the tensors tile [0, data_size) exactly, in offset order."""
    spans = []  # (begin, end, name) of every tensor
    for name, entry in header.items():
        if name == "__metadata__":
            continue  # free-form strings ({"format": "pt"}): nothing to check
        if not (isinstance(entry, dict) and {"dtype", "shape", "data_offsets"} <= set(entry)):
            raise SafetensorsError(f"{path}: tensor {name!r} needs dtype, shape and "
                                   f"data_offsets, got {entry!r}")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in DTYPES:
            raise SafetensorsError(f"{path}: tensor {name!r} has dtype {dtype!r}; this reader "
                                   f"knows {', '.join(DTYPES)}")
        if not (isinstance(shape, list) and all(_natural(d) for d in shape)):
            raise SafetensorsError(f"{path}: tensor {name!r} has shape {shape!r}, not a list "
                                   "of sizes >= 0")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_natural, offsets))
                and offsets[0] <= offsets[1]):
            raise SafetensorsError(f"{path}: tensor {name!r} has data_offsets {offsets!r}, "
                                   "not [begin, end] with 0 <= begin <= end")
        nbytes = math.prod(shape) * np.dtype(DTYPES[dtype]).itemsize
        if offsets[1] - offsets[0] != nbytes:
            raise SafetensorsError(f"{path}: tensor {name!r} ({dtype} {shape}) needs {nbytes} "
                                   f"bytes but data_offsets {offsets} hold "
                                   f"{offsets[1] - offsets[0]}")
        spans.append((offsets[0], offsets[1], name))
    # The tensors, sorted by where they start, must follow each other with no gap and no
    # overlap: each begins where the previous one ended, and the last ends at the file's end.
    expected = 0  # where the next tensor must begin
    for begin, end, name in sorted(spans):
        if begin != expected:
            fault = "overlaps the tensor before it" if begin < expected else "leaves a hole"
            raise SafetensorsError(f"{path}: tensor {name!r} at bytes [{begin}, {end}) {fault} "
                                   f"(expected it to begin at {expected})")
        expected = end
    if expected != data_size:
        fault = "truncated" if expected > data_size else "trailing bytes"
        raise SafetensorsError(f"{path}: {fault}: the tensors need {expected} bytes of data, "
                               f"the file has {data_size}")


def _natural(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def load_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """Every tensor of the file by name: float32 for F16/BF16/F32, the file's dtype otherwise.

    The file is memory-mapped, not read: an F32 or integer tensor is a read-only view of the
    mapped pages (the OS reads them when they are first touched, and shares them between
    processes); only F16 and BF16 tensors are copied, widened to float32.
    """
    header, start = read_header(path)
    mapped = np.memmap(path, dtype=np.uint8, mode="r")  # [file bytes] nothing read yet
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        dt = np.dtype(DTYPES[entry["dtype"]])
        a = np.frombuffer(mapped, dtype=dt, count=(end - begin) // dt.itemsize,
                          offset=start + begin)  # [n] a view of the tensor's bytes
        if entry["dtype"] == "BF16":
            a = _bf16(a)  # [n] float32
        elif entry["dtype"] == "F16":
            a = a.astype(np.float32)  # [n] float32 (exact: every f16 is a f32)
        out[name] = a.reshape(entry["shape"])  # [*shape]
    return out


def metadata(path: str | Path) -> dict[str, str]:
    """The header's free-form "__metadata__" (e.g. {"format": "pt"}), {} if it has none."""
    return dict(read_header(path)[0].get("__metadata__") or {})
