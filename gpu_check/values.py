"""Raw bits <-> exact values for the element formats the checks use (display and exact refs).

The layout checks only ever put small integers and one-hot values into operands, so every
value here is exactly representable; `encode` refuses anything that would round.
"""
import numpy as np

_FLOAT_VIEW = {"f16": ("float16", np.uint16), "f32": ("float32", np.uint32),
               "f64": ("float64", np.uint64)}
WIDTH = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "e4m3": 8, "e5m2": 8,
         "s8": 8, "u8": 8, "s4": 4, "u4": 4, "s32": 32, "b16": 16, "b32": 32}
# largest positive integer N such that every integer 1..N is exact in the format
EXACT_INT_MAX = {"f16": 2048, "bf16": 256, "tf32": 2048, "f32": 1 << 24, "f64": 1 << 53,
                 "e4m3": 16, "e5m2": 8, "s8": 127, "u8": 255, "s4": 7, "u4": 15, "s32": (1 << 31) - 1}


def _ml(fmt):
    import ml_dtypes
    return {"bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
            "e5m2": ml_dtypes.float8_e5m2}[fmt]


def uint_dtype(fmt):
    w = WIDTH[fmt]
    return {4: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[w]


def decode(fmt, raw):
    """Exact value of raw bits: float64 for float formats, int64 for integer ones."""
    raw = np.asarray(raw).astype(np.uint64)
    if fmt in _FLOAT_VIEW:
        name, u = _FLOAT_VIEW[fmt]
        return raw.astype(u).view(name).astype(np.float64)
    if fmt == "tf32":
        return raw.astype(np.uint32).view(np.float32).astype(np.float64)
    if fmt in ("bf16", "e4m3", "e5m2"):
        u = np.uint16 if fmt == "bf16" else np.uint8
        return raw.astype(u).view(_ml(fmt)).astype(np.float64)
    w = WIDTH[fmt]
    v = (raw & np.uint64((1 << w) - 1)).astype(np.int64)
    if fmt in ("s8", "s4", "s32"):
        v = np.where(v >= (1 << (w - 1)), v - (1 << w), v)
    return v


def encode(fmt, values):
    """Raw bits (as uint64) of exactly representable values; raises if any value would round."""
    v = np.asarray(values)
    if fmt in _FLOAT_VIEW or fmt in ("tf32", "bf16", "e4m3", "e5m2"):
        if fmt in _FLOAT_VIEW:
            name, u = _FLOAT_VIEW[fmt]
            x = v.astype(name)
            raw = x.view(u).astype(np.uint64)
        elif fmt == "tf32":
            x = v.astype(np.float32)
            raw = x.view(np.uint32).astype(np.uint64)
            if (raw & np.uint64(0x1FFF)).any():
                raise ValueError("value not exact in tf32")
        else:
            x = v.astype(_ml(fmt))
            raw = x.view(np.uint16 if fmt == "bf16" else np.uint8).astype(np.uint64)
        back = decode(fmt, raw)
        if not np.array_equal(back, v.astype(np.float64)):
            raise ValueError(f"value not exact in {fmt}")
        return raw
    w = WIDTH[fmt]
    iv = v.astype(np.int64)
    lo, hi = ((-(1 << (w - 1)), (1 << (w - 1)) - 1) if fmt in ("s8", "s4", "s32")
              else (0, (1 << w) - 1))
    if (iv < lo).any() or (iv > hi).any():
        raise ValueError(f"value out of range for {fmt}")
    return (iv & ((1 << w) - 1)).astype(np.uint64)


def show(fmt, raw):
    """'0x41200000 (10.0)': hex of the raw bits and the value they encode."""
    w = WIDTH.get(fmt, 32)
    digits = max(1, (w + 3) // 4)
    r = int(raw)
    try:
        val = decode(fmt, np.array([r]))[0]
        vs = repr(int(val)) if np.issubdtype(type(val), np.integer) else _fmt_float(float(val))
    except Exception:   # noqa: BLE001 - display only
        vs = "?"
    return f"0x{r:0{digits}x} ({vs})"


def _fmt_float(x):
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return f"{x:.1f}"
    return f"{x:.9g}"
