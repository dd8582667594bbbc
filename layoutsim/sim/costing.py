"""The simulator's bridge to the bank model (`layoutsim.banks`): one warp's shared access -> cost.

The simulator knows nothing about banks; it hands the bank model the op, the 32 (or, for
AMD wave64, 64) per-lane byte offsets and the active lanes, and records what comes back.
"""
import importlib
import inspect

_STATE = {}


def _banks():
    if "mod" not in _STATE:
        try:
            mod = importlib.import_module("layoutsim.banks")
        except ModuleNotFoundError as e:
            if e.name not in ("layoutsim.banks",):
                raise
            mod = None
        if mod is not None and not hasattr(mod, "analyze"):
            mod = None
        _STATE["mod"] = mod
        if mod is None:
            _STATE["why"] = "bank model (layoutsim.banks.analyze) not available: not costed"
    return _STATE["mod"]


def unavailable_reason():
    return _STATE.get("why", "")


def available():
    return _banks() is not None


def cost(op, offsets, active, arch):
    """(wavefronts, ideal, conflicts) of one warp's access, or None without a bank model."""
    banks = _banks()
    if banks is None:
        return None
    offs = [int(o) for o in offsets]
    mask = [bool(a) for a in active]
    kw = {"arch": arch}
    if not all(mask):
        kw[_mask_param(banks.analyze)] = mask
    r = banks.analyze(op, offs, **kw)
    return int(r.wavefronts), int(r.ideal), int(r.conflicts)


def _mask_param(fn):
    if "mask_param" not in _STATE:
        params = inspect.signature(fn).parameters
        _STATE["mask_param"] = next((p for p in ("mask", "active", "active_mask") if p in params), "mask")
    return _STATE["mask_param"]
