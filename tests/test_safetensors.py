"""safetensors.py: files written byte by byte here (8-byte length, JSON header, raw little-endian
data, as the format's README lays them out), read back with their exact values in F32, F16,
BF16 and integer dtypes; then every kind of bad file is a SafetensorsError naming the file:
truncated, a header that lies, unknown dtypes, overlapping, holey or out-of-range offsets."""

import json
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minimodel.safetensors import SafetensorsError, load_safetensors, metadata, read_header


def write(path, header: dict, data: bytes, header_len: int | None = None) -> None:
    """A safetensors file by hand: N (u64 little-endian), N bytes of JSON, the data."""
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h) if header_len is None else header_len) + h + data)


def test_f32_f16_bf16_and_ints_round_trip(tmp_path):
    w = np.array([[1.0, -2.5, 3.25], [0.0, 1e-3, -7.0]], dtype="<f4")  # [2, 3]
    h = np.array([0.5, -1.0, 65504.0], dtype="<f2")  # 65504: the largest float16
    # bfloat16 by its bits: 0x3F80 = 1.0, 0xC020 = -2.5, 0x4049 = 3.140625 (pi, to 8 bits)
    bf = struct.pack("<3H", 0x3F80, 0xC020, 0x4049)
    ids = np.arange(4, dtype="<i8")
    data = w.tobytes() + h.tobytes() + bf + ids.tobytes()  # 24 + 6 + 6 + 32 bytes
    header = {"__metadata__": {"format": "pt"},
              "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "h": {"dtype": "F16", "shape": [3], "data_offsets": [24, 30]},
              "bf": {"dtype": "BF16", "shape": [3, 1], "data_offsets": [30, 36]},
              "ids": {"dtype": "I64", "shape": [2, 2], "data_offsets": [36, 68]}}
    write(tmp_path / "m.safetensors", header, data)
    t = load_safetensors(tmp_path / "m.safetensors")
    assert set(t) == {"w", "h", "bf", "ids"}
    assert t["w"].dtype == np.float32 and np.array_equal(t["w"], w)
    assert t["h"].dtype == np.float32 and t["h"].tolist() == [0.5, -1.0, 65504.0]
    assert t["bf"].dtype == np.float32 and t["bf"].ravel().tolist() == [1.0, -2.5, 3.140625]
    assert t["bf"].shape == (3, 1)
    assert t["ids"].dtype == np.int64 and t["ids"].tolist() == [[0, 1], [2, 3]]
    assert metadata(tmp_path / "m.safetensors") == {"format": "pt"}
    _, start = read_header(tmp_path / "m.safetensors")
    assert start == 8 + len(json.dumps(header).encode())


@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=40))
def test_bf16_is_the_top_half_of_f32(tmp_path_factory, values):
    """bfloat16 bits = the float32's top 16 bits (truncated), so the reader must give back the
    float32 with its low 16 bits zeroed: a check on any float32 at all."""
    x = np.array(values, dtype="<f4")  # [n]
    top = (x.view("<u4") >> 16).astype("<u2")  # [n] bf16 bits by truncation
    path = tmp_path_factory.mktemp("bf") / "x.safetensors"
    write(path, {"x": {"dtype": "BF16", "shape": [len(x)], "data_offsets": [0, 2 * len(x)]}},
          top.tobytes())
    got = load_safetensors(path)["x"]  # [n] float32
    assert np.array_equal(got.view("<u4"), x.view("<u4") & 0xFFFF0000)


def test_a_zero_size_tensor_and_an_empty_file(tmp_path):
    write(tmp_path / "e.safetensors", {"e": {"dtype": "F32", "shape": [0, 3],
                                             "data_offsets": [0, 0]}}, b"")
    assert load_safetensors(tmp_path / "e.safetensors")["e"].shape == (0, 3)
    write(tmp_path / "n.safetensors", {}, b"")
    assert load_safetensors(tmp_path / "n.safetensors") == {}


def good(tmp_path):
    """A valid two-tensor file's header and data, for the tests below to spoil."""
    header = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
              "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}
    return header, np.array([1, 2, 3], dtype="<f4").tobytes()


def expect_error(path, match):
    with pytest.raises(SafetensorsError, match=match) as e:
        load_safetensors(path)
    assert str(path) in str(e.value)  # the message names the file


def test_truncated_files(tmp_path):
    header, data = good(tmp_path)
    p = tmp_path / "t.safetensors"
    p.write_bytes(b"\x10\x00\x00")  # not even the 8-byte length
    expect_error(p, "truncated")
    write(p, header, data[:-4])  # the data stops 4 bytes short
    expect_error(p, "truncated")
    write(p, header, b"", header_len=10_000)  # the length points past the end of the file
    expect_error(p, "header length 10000")


def test_a_header_that_is_not_json_or_not_an_object(tmp_path):
    p = tmp_path / "j.safetensors"
    p.write_bytes(struct.pack("<Q", 5) + b"{nope")
    expect_error(p, "not UTF-8 JSON")
    p.write_bytes(struct.pack("<Q", 2) + b"[]")
    expect_error(p, "not an object")


def test_unknown_dtype_and_bad_shapes(tmp_path):
    header, data = good(tmp_path)
    p = tmp_path / "d.safetensors"
    write(p, {**header, "a": {**header["a"], "dtype": "F8_E4M3"}}, data)
    expect_error(p, "dtype 'F8_E4M3'")
    write(p, {**header, "a": {**header["a"], "shape": [-2]}}, data)
    expect_error(p, "shape")
    write(p, {**header, "a": {**header["a"], "shape": [3]}}, data)  # 3 floats in 8 bytes
    expect_error(p, "needs 12 bytes")
    write(p, {**header, "a": {"dtype": "F32", "shape": [2]}}, data)
    expect_error(p, "data_offsets")


def test_overlapping_holey_and_out_of_range_offsets(tmp_path):
    header, data = good(tmp_path)
    p = tmp_path / "o.safetensors"
    write(p, {**header, "b": {**header["b"], "data_offsets": [4, 8]}}, data)  # inside "a"
    expect_error(p, "overlaps")
    write(p, {"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, data[:8])
    expect_error(p, "hole")
    write(p, {**header, "b": {**header["b"], "data_offsets": [8, 4]}}, data)  # end < begin
    expect_error(p, "data_offsets")
    write(p, {**header, "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, data)
    expect_error(p, "truncated: the tensors need 16 bytes")  # "b" ends past the file's end
    write(p, header, data + b"\x00" * 4)  # 4 bytes no tensor owns
    expect_error(p, "trailing")
