"""What crosses the pipe between the grader and the worker that runs a submission.

A message is a tree of ``None``, booleans, integers, floats, strings, lists,
tuples, dicts with string keys and NumPy arrays of booleans, integers or
floats.  It travels as one frame:

    8 bytes   the header's length (big-endian)
    header    JSON: {"tree": ..., "sizes": [bytes of array 0, 1, ...]}
    arrays    each in NumPy's ``.npy`` format, one after the other

In the tree an array is ``{"__array__": i}`` and a tuple ``{"__tuple__":
[...]}``.  ``decode`` is what the grader runs on the worker's replies, so it
trusts nothing: the frame's size is capped before anything is read, the
header is plain JSON with a depth limit, every array is read with
``allow_pickle=False`` and must have a numeric or boolean dtype.  Nothing is
ever unpickled.  The worker runs a copy of this file.
"""
import io
import json
import struct

import numpy as np

MAX_DEPTH = 24
MAX_HEADER = 2 ** 20                 # the JSON header's bytes: the tree, not the arrays (a few kB in practice)
KINDS = "biuf"                       # bool, signed and unsigned integers, floats


class WireError(ValueError):
    """A frame that breaks the format (too large, too deep, a dtype that is not numeric, not JSON)."""


def _flatten(value, arrays, depth=0):
    if depth > MAX_DEPTH:
        raise WireError(f"nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in KINDS:
            raise WireError(f"an array of dtype {value.dtype}; only booleans, integers and floats are sent")
        arrays.append(value)
        return {"__array__": len(arrays) - 1}
    if isinstance(value, np.generic):
        return _flatten(np.asarray(value).item(), arrays, depth)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"__tuple__": [_flatten(v, arrays, depth + 1) for v in value]}
    if isinstance(value, list):
        return [_flatten(v, arrays, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value) or "__array__" in value or "__tuple__" in value:
            raise WireError("a dict whose keys are not all plain strings")
        return {k: _flatten(v, arrays, depth + 1) for k, v in value.items()}
    raise WireError(f"a value of type {type(value).__name__}, which is not sent")


def encode(value) -> bytes:
    """``value`` (see the module docstring) as one frame."""
    arrays = []
    tree = _flatten(value, arrays)
    blobs = []
    for a in arrays:
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(a), allow_pickle=False)
        blobs.append(buffer.getvalue())
    header = json.dumps({"tree": tree, "sizes": [len(b) for b in blobs]}).encode("utf-8")
    return struct.pack(">Q", len(header)) + header + b"".join(blobs)


def _read_exact(read, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = read(n - got)
        if not chunk:
            raise EOFError("the pipe closed in the middle of a frame")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(read, limit: int) -> tuple:
    """(header bytes, body bytes) of the next frame from ``read(n)``; a
    WireError if it is larger than ``limit`` bytes, EOFError at the end."""
    size = struct.unpack(">Q", _read_exact(read, 8))[0]
    if size > min(limit, MAX_HEADER):
        raise WireError(f"a header of {size} bytes (the limit is {min(limit, MAX_HEADER)})")
    header = _read_exact(read, size)
    try:
        sizes = json.loads(header.decode("utf-8"))["sizes"]
        if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
            raise TypeError
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
        raise WireError("a header that is not the frame's JSON") from None
    if size + sum(sizes) > limit:
        raise WireError(f"a reply of {size + sum(sizes)} bytes (the limit is {limit})")
    return header, _read_exact(read, sum(sizes))


def decode(header: bytes, body: bytes):
    """The tree of a frame read by ``read_frame``, arrays loaded without pickle."""
    try:
        outer = json.loads(header.decode("utf-8"))
    except RecursionError:
        raise WireError(f"nested more than {MAX_DEPTH} levels deep") from None
    arrays, offset = [], 0
    for size in outer["sizes"]:
        try:
            a = np.load(io.BytesIO(body[offset:offset + size]), allow_pickle=False)
        except (ValueError, OSError, EOFError) as err:
            raise WireError(f"an array that is not in NumPy's format ({err})") from None
        if not isinstance(a, np.ndarray) or a.dtype.kind not in KINDS:
            raise WireError(f"an array of dtype {getattr(a, 'dtype', type(a).__name__)}; only booleans, integers"
                            " and floats are accepted")
        arrays.append(a)
        offset += size
    return _unflatten(outer["tree"], arrays, 0)


def _unflatten(node, arrays, depth):
    if depth > MAX_DEPTH:
        raise WireError(f"nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, list):
        return [_unflatten(v, arrays, depth + 1) for v in node]
    if isinstance(node, dict):
        if set(node) == {"__array__"}:
            i = node["__array__"]
            if not isinstance(i, int) or not 0 <= i < len(arrays):
                raise WireError("a reference to an array that was not sent")
            return arrays[i]
        if set(node) == {"__tuple__"} and isinstance(node["__tuple__"], list):
            return tuple(_unflatten(v, arrays, depth + 1) for v in node["__tuple__"])
        return {str(k): _unflatten(v, arrays, depth + 1) for k, v in node.items()}
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    raise WireError("a value that is not part of the format")
