"""Rebuild tests/data/triton_sm100/tmem_loads.json: Triton's own choice of TMEM load for the
accumulator of a tl.dot on sm_100a, as data.

    python tests/isa/triton_sm100/rebuild.py        (needs the PyPI package triton==3.6.0; no GPU)

Compiles one matmul kernel per (BLOCK_M, BLOCK_N, num_warps) for GPUTarget("cuda", 100, 32) and
keeps, per configuration: the tcgen05.ld lines of the PTX (with their immediates) and the bases of
the register layout (#ttg.linear: register, lane, warp -> (row, col) of the tile) that the
ttgir's tmem_load of the accumulator produces. tests/isa/test_tcgen05.py predicts both from the
catalog (the ld map composed with the data-path layout) and compares.
"""
import json
import re
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "data" / "triton_sm100" / "tmem_loads.json"
CONFIGS = [(128, 128, 4, "fp32"), (128, 128, 8, "fp32"), (128, 64, 4, "fp32"), (64, 128, 4, "fp32"),
           (64, 64, 4, "fp32"), (128, 128, 4, "fp16")]


def main():
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
        pm = tl.program_id(0)
        pn = tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), ACC)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc = tl.dot(x, y, acc, out_dtype=ACC)
        tl.store(c + rm[:, None] * N + rn[None, :], acc)

    out = {"source": f"Triton {triton.__version__} (PyPI), tl.dot f16 x f16 -> f32 / f16 compiled for "
                     "GPUTarget('cuda', 100, 32): PTX tcgen05.ld lines and the ttgir tmem_load's "
                     "#ttg.linear register layout", "configs": []}
    sig = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "ACC": "constexpr"}
    for bm, bn, warps, acc in CONFIGS:
        sig["c"] = f"*{acc}"
        src = triton.compiler.ASTSource(fn=mm, signature=sig, constexprs={
            "BM": bm, "BN": bn, "BK": 64, "ACC": getattr(tl, {"fp32": "float32", "fp16": "float16"}[acc])})
        k = triton.compile(src, target=GPUTarget("cuda", 100, 32), options={"num_warps": warps})
        ptx, ttgir = k.asm["ptx"], k.asm["ttgir"]
        lds = sorted({re.sub(r"\{[^}]*\}", "{...}", re.sub(r"%\w+", "%r", m.group(0)))
                      for m in re.finditer(r"tcgen05\.ld\.[^;]*;", ptx)})
        name = re.search(r"= ttng\.tmem_load .* -> tensor<[^,]+, (#\w+)>", ttgir).group(1)
        line = next(x for x in ttgir.splitlines() if x.startswith(name + " ="))
        bases = {key: json.loads(re.search(rf"{key} = (\[[^=]*?\]\])", line).group(1))
                 for key in ("register", "lane", "warp")}
        tmem = next(x for x in ttgir.splitlines() if x.startswith("#tmem"))
        out["configs"].append({"block_m": bm, "block_n": bn, "num_warps": warps, "acc": acc,
                               "col_stride": int(re.search(r"colStride = (\d+)", tmem).group(1)),
                               "tcgen05_ld": lds, "linear": bases})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=1) + "\n")
    tmp.replace(OUT)
    print(f"{len(out['configs'])} configurations -> {OUT}")


if __name__ == "__main__":
    main()
