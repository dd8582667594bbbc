"""Many `--var` options (issue 22): handled in time linear in their number, and bounded.

The quadratic step was Expr.__call__ converting every variable defined so far on each of the n
parse_variables calls; argparse itself is quadratic in the number of options, so the command
line is bounded too (cli.MAX_ARGUMENTS). The tests count conversions (structure), not seconds.
"""
import argparse

import pytest

from layoutsim import cli
from layoutsim.address import expr as address
from layoutsim.errors import LayoutsimError


def _conversions(monkeypatch, items):
    calls = [0]
    real = address.int64_values

    def counting(*a, **k):
        calls[0] += 1
        return real(*a, **k)
    monkeypatch.setattr(address, "int64_values", counting)
    out = address.parse_variables(items)
    monkeypatch.setattr(address, "int64_values", real)
    return out, calls[0]


@pytest.mark.parametrize("chained", [False, True])
def test_variables_cost_linear_conversions(monkeypatch, chained):
    def items(n):
        return [f"v{i}=v{i - 1}+1" if chained and i else f"v{i}={i}" for i in range(n)]
    small, c_small = _conversions(monkeypatch, items(250))
    big, c_big = _conversions(monkeypatch, items(1000))
    assert big["v999"] == 999 and small["v249"] == 249
    # each variable reads at most one other: at most one conversion per name read
    assert c_big <= 2 * 1000 and c_big <= 4 * c_small + 8


def test_more_variables_than_the_limit_are_refused_at_once(monkeypatch):
    n = address.MAX_VARIABLES + 1
    with pytest.raises(LayoutsimError, match=rf"{n} variables \(--var\) given; at most {address.MAX_VARIABLES}"):
        address.parse_variables([f"v{i}={i}" for i in range(n)])


def test_banks_cli_takes_the_most_variables(capsys):
    n = address.MAX_VARIABLES
    argv = ["banks", "--op", "ld.shared.b32", "--addr", f"lane*4 + v{n - 1} - v{n - 1}"]
    for i in range(n):
        argv += ["--var", f"v{i}=v{i - 1}+1" if i else "v0=1"]
    assert cli.main(argv) == 0
    assert "1 wavefront" in capsys.readouterr().out


def test_ten_thousand_vars_one_line_exit_2(capsys, monkeypatch):
    argv = ["banks", "--op", "ld.shared.b32", "--addr", "lane*4"]
    for i in range(10000):
        argv += ["--var", f"v{i}={i}"]
    # the command line is refused before argparse walks it (its walk is quadratic)
    monkeypatch.setattr(argparse.ArgumentParser, "_parse_known_args",
                        lambda *a, **k: pytest.fail("argparse parsed the 20,000 words"))
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "20005 command-line arguments given; at most 4096" in err[0]


def test_variables_one_over_the_limit_through_the_cli(capsys):
    n = address.MAX_VARIABLES + 1
    argv = ["banks", "--op", "ld.shared.b32", "--addr", "lane*4"]
    for i in range(n):
        argv += ["--var", f"v{i}={i}"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{n} variables (--var) given" in err[0]
