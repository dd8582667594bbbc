"""C++ kernels by their source name (issue 22): layoutsim.demangle reads the names nvcc gives
kernels as c++filt does, and --kernel / ptx.run(kernel=) finds an entry by its mangled name, its
signature, its name with template arguments or its bare name (layoutsim/ptx/kernel_names.py).

The expected readings are tests/data/demangle/kernel_names.tsv: the .entry names nvcc 13.0 gave
the kernels of kernel_names.cu beside it, and names written to reach the other rules, each with
what GNU c++filt 2.40 printed for it (the file's header says how it was made). With nvcc
installed, the names are compiled again and compared; with c++filt or cu++filt installed, the
demangler is compared with it on them."""
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from layoutsim import LayoutsimError
from layoutsim.cli import main
from layoutsim.demangle import demangle, parts
from layoutsim.ptx import compile_cu, load
from layoutsim.ptx.kernel_names import shown

DATA = Path(__file__).resolve().parents[1] / "data" / "demangle"
ROWS = [ln.split("\t") for ln in (DATA / "kernel_names.tsv").read_text().splitlines()[5:] if ln]
NVCC_ROWS = [(m, r) for s, m, r in ROWS if s == "nvcc"]
FILTERS = [t for t in (shutil.which("cu++filt"), shutil.which("c++filt")) if t]


def test_the_data_holds_both_kinds_of_rows():
    assert len(NVCC_ROWS) == 30 and len(ROWS) - len(NVCC_ROWS) == 23


@pytest.mark.parametrize("source,mangled,expected", ROWS, ids=[r[1] for r in ROWS])
def test_demangles_as_cxxfilt_reads_it(source, mangled, expected):
    assert demangle(mangled) == expected


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="compiling kernel_names.cu needs nvcc")
def test_nvcc_still_gives_these_names():
    ptx = compile_cu(DATA / "kernel_names.cu", "sm_90", ["-std=c++17", "--extended-lambda"])
    live = re.findall(r"\.entry (\S+)\(", ptx)
    anonymous = re.compile(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+")   # a hash of the path compiled
    assert sorted(anonymous.sub("", n) for n in live) == sorted(anonymous.sub("", m) for m, _ in NVCC_ROWS)
    assert sorted(demangle(n) for n in live) == sorted(r for _, r in NVCC_ROWS)
    for tool in FILTERS:
        theirs = subprocess.run([tool], input="\n".join(live), capture_output=True, text=True).stdout.split("\n")
        assert [demangle(n) for n in live] == theirs[:len(live)], tool


@pytest.mark.parametrize("name", ["_ZTV3Foo", "_Z1fIXadL_Z1gvEEEvv", "_Zbogus", "_Z1fS5_", "_Z1fT_", "_Z",
                                  "_Z1fM1Ai", "_Z3fooPv.clone.1", "_Z5scalePf junk", "1abc", "a b"])
def test_what_it_cannot_demangle_it_says_and_keeps_the_name(name):
    assert demangle(name) is None and parts(name) is None
    assert shown(name) == f"{name} (not demangled)"


def test_an_unmangled_name_is_itself():
    assert demangle("plain_c") == "plain_c" and shown("plain_c") == "plain_c"
    assert shown("_Z5scalePf") == "_Z5scalePf (scale(float*))"


def test_parts_of_a_template_in_a_namespace():
    p = parts("_ZN2ns4kernINS_3VecIfLi4EEEEEvT_PS3_")
    assert (p.full, p.signature, p.name, p.base) == (
        "void ns::kern<ns::Vec<float, 4> >(ns::Vec<float, 4>, ns::Vec<float, 4>*)",
        "ns::kern<ns::Vec<float, 4> >(ns::Vec<float, 4>, ns::Vec<float, 4>*)", "ns::kern<ns::Vec<float, 4> >",
        "ns::kern")


@pytest.mark.parametrize("name", ["_Z1f" + "P" * 20000 + "i", "_Z1f" + "N1A" * 5000 + "E",
                                  "_Z1fI" + "J" * 3000 + "E" * 3000 + "Evv"])
def test_deep_names_end_without_an_exception(name):
    assert demangle(name) is None


def test_substitutions_cannot_blow_up_the_output():
    """Each B<S, S> doubles the text: 40 of them would be 2**40 characters."""
    name = "_Z1fN1AE" + "".join(f"N1BI{s}{s}EE" for s in ["S_"] + [f"S{k}_" for k in range(1, 40)])
    t = time.perf_counter()
    assert demangle(name) is None and time.perf_counter() - t < 1.0


# ---- finding an entry ------------------------------------------------------------------------
def module_of(names):
    body = "".join(f".visible .entry {n}()\n{{\n\tret;\n}}\n" for n in names)
    return ".version 8.0\n.target sm_90\n.address_size 64\n" + body


MODULE = load(module_of(m for m, _ in NVCC_ROWS))
HIDDEN = next(m for m, _ in NVCC_ROWS if "hidden" in m)
DEEP = next(m for m, _ in NVCC_ROWS if "deep" in m)


@pytest.mark.parametrize("wanted,entry", [
    ("_Z5scaleIfEvPT_", "_Z5scaleIfEvPT_"),                      # 1: the PTX name
    ("void scale<float>(float*)", "_Z5scaleIfEvPT_"),            # 2: the signature
    ("scale<float>(float *)", "_Z5scaleIfEvPT_"),                # ... without the return type, spaced
    ("scale(float*)", "_Z5scalePf"),
    ("scale<float>", "_Z5scaleIfEvPT_"),                         # 3: with template arguments
    ("scale<float const>", "_Z5scaleIKfEvPT_"),
    ("scale", "_Z5scalePf"),                                     # the one entry named scale with no <>
    ("tile", "_Z4tileILi32EEvPf"),                               # 4: the bare name, unique
    ("tile2<-8, false>", "_Z5tile2ILin8ELb0EEvPf"),
    ("lits<4u, -5l, 7ull, (char)65>", "_Z4litsILj4ELln5ELy7ELc65EEvPi"),
    ("ns::inner::axpy", "_ZN2ns5inner4axpyEifPKfPf"),
    ("inner::axpy", "_ZN2ns5inner4axpyEifPKfPf"),
    ("axpy", "_ZN2ns5inner4axpyEifPKfPf"),
    ("ns::kern<ns::Vec<float,4>>", "_ZN2ns4kernINS_3VecIfLi4EEEEEvT_PS3_"),
    ("kern", "_ZN2ns4kernINS_3VecIfLi4EEEEEvT_PS3_"),
    ("hidden", HIDDEN),
    ("(anonymous namespace)::hidden", HIDDEN),
    ("deep<3>", DEEP),
    ("outer::deep", DEEP),
    ("variadic<>", "_Z8variadicIJEEvDpT_"),
    ("plain_c", "plain_c"),
])
def test_an_entry_by_each_of_its_names(wanted, entry):
    assert MODULE.entry(wanted).name == entry


@pytest.mark.parametrize("wanted,message", [
    ("tile2", "kernel 'tile2' names 2 entries: void tile2<64, true>(float*); void tile2<-8, false>(float*); "
              "give the template form (e.g. 'tile2<64, true>'), the signature or the mangled name "
              "(_Z5tile2ILi64ELb1EEvPf, _Z5tile2ILin8ELb0EEvPf)"),
    ("variadic", "kernel 'variadic' names 2 entries: void variadic<int, float>(int, float); void variadic<>()"),
    ("cale", "kernel 'cale' is not in the PTX"),                  # a tail must start after `::`
    ("nope", "its entries: _Z5scalePf (scale(float*)), _Z5scaleIfEvPT_ (void scale<float>(float*)), "),
    ("scal", "(did you mean: scale, "),
    ("", "give the kernel's name"),
])
def test_several_or_no_entries_one_line(wanted, message):
    with pytest.raises(LayoutsimError) as e:
        MODULE.entry(wanted)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_cli_runs_a_template_kernel_by_its_source_name(capsys, tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(module_of(["_Z5scaleIfEvPT_", "_Z5scaleIiEvPT_"]))
    rc = main(["ptx", "run", str(path), "--kernel", "scale<int>", "--grid", "1", "--block", "32", "--json"])
    out, err = capsys.readouterr()
    assert rc == 0 and json.loads(out)["kernel"] == "_Z5scaleIiEvPT_", err
    rc = main(["ptx", "run", str(path), "--kernel", "scale", "--grid", "1", "--block", "32"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "kernel 'scale' names 2 entries: void scale<float>(float*); void scale<int>(int*)" in err


def mutations(n, seed=22):
    """Names one to three edits away from the committed ones, and random _Z strings."""
    import random
    rng, alphabet = random.Random(seed), "NEIJLSTZPKRVOFADpvbcifdjlmxyh_0123456789ABnut"
    names = [m for _, m, _ in ROWS]
    for k in range(n):
        if k % 2:
            yield "_Z" + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
            continue
        b = list(rng.choice(names))
        for _ in range(rng.randint(1, 3)):
            i, op = rng.randrange(len(b)), rng.random()
            if op < 0.4:
                b[i] = rng.choice(alphabet)
            elif op < 0.7:
                b.insert(i, rng.choice(alphabet))
            else:
                del b[i]
        yield "".join(b)


def test_damaged_names_are_read_or_refused_never_an_exception():
    got = {name: demangle(name) for name in mutations(4000)}
    read = {n: d for n, d in got.items() if d is not None and n.startswith("_Z")}
    assert 100 < len(read) < 3000                     # both outcomes happen
    for tool in FILTERS:
        names = [n for n in read if "J" not in n]     # packs: c++filt's spelling of broken ones differs
        theirs = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
        assert [(n, read[n]) for n in names] == list(zip(names, theirs)), tool
