"""The safety net of the PTX entry points (`load`, `run`): an exception that is not a
LayoutsimError while the executor reads, compiles or runs PTX is a bug of the executor, not of
the user's input; the user sees one line that says so, names the PTX line it was at (when a frame
of the executor knows it) and asks for a report, never a traceback.

Every cause of bad input is refused where it is read, with its own message; this net only keeps
an unforeseen one from ending in a traceback. `PtxInternalError` is its own subclass so that the
PTX fuzz test (tests/ptx/test_ptx_fuzz.py) counts each hit as a failure to fix at its cause.
A LayoutsimError passes through on one line: a message that quotes PTX text with a newline or a
control character in it has them escaped (errors.one_line).
"""
import functools
import os

from ..errors import LayoutsimError, one_line

REPORT = "this is a bug of layoutsim: please report it with the PTX that gives it"
_PTX_DIR = os.path.dirname(os.path.abspath(__file__))


class PtxInternalError(LayoutsimError):
    """An unexpected exception inside the PTX executor (a bug): one line, with the PTX line."""


def ptx_line(tb):
    """The PTX line the innermost executor frame of a traceback was at, or None: an instruction
    (`ins`, or a scheduler `step`), a statement of the loader (`st`), or a `line` number."""
    found = None
    while tb is not None:
        frame = tb.tb_frame
        if os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PTX_DIR:
            loc = frame.f_locals
            for name in ("ins", "step", "st"):
                obj = loc.get(name)
                obj = getattr(obj, "ins", obj) if name == "step" else obj
                if isinstance(getattr(obj, "line", None), int):
                    found = obj.line
                    break
            else:
                if isinstance(loc.get("line"), int) and not isinstance(loc.get("line"), bool):
                    found = loc["line"]
        tb = tb.tb_next
    return found


def guarded(stage):
    """Decorate an entry point: anything but a LayoutsimError (or KeyboardInterrupt and other
    BaseExceptions, which are not errors) becomes one PtxInternalError line."""
    def wrap(fn):
        @functools.wraps(fn)
        def entry(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except LayoutsimError as e:
                # one line, whatever text of the PTX a message quotes (PtxFault keeps its .run)
                if e.args and isinstance(e.args[0], str) and one_line(e.args[0], limit=10 ** 6) != e.args[0]:
                    e.args = (one_line(e.args[0], limit=10 ** 6),) + e.args[1:]
                raise
            except Exception as e:      # noqa: BLE001 - the net: every other exception is a bug
                line = ptx_line(e.__traceback__)
                where = f" at PTX line {line}" if line is not None else ""
                raise PtxInternalError(one_line(
                    f"internal error of the PTX executor while {stage}{where}: {type(e).__name__}: "
                    f"{e}; {REPORT}", limit=400)) from e
        return entry
    return wrap
