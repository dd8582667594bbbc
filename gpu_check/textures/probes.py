"""The probe kernels of the texture/surface measurement, written as PTX (one module, `module()`).

Every kernel is `NAME(.u64 obj, .u64 in, .u64 out, .u32 n)`: thread i reads four 32-bit words
in[i] (coordinates as f32 or s32 bits; a layer first for the layered forms; the value to store
for sust), runs one texture or surface instruction and writes four 32-bit words out[i] (the
result registers' raw bits; a load of fewer bytes leaves the rest zero). The same text runs on
the H200 (gpu_check/textures/measure.py) and through the executor (tests/ptx/test_textures_h200.py).
"""
HEAD = """.version 8.0
.target sm_90
.address_size 64
"""

TEX_FORMS = {          # geometry: (coordinate operands from the in-words, layered)
    "1d": ("{%c0}", "{%i0}"), "2d": ("{%c0, %c1}", "{%i0, %i1}"), "3d": ("{%c0, %c1, %c2, %c3}",
                                                                      "{%i0, %i1, %i2, %i3}"),
    "a1d": ("{%i0, %c1}", None), "a2d": ("{%i0, %c1, %c2, %c3}", None), "cube": ("{%c0, %c1, %c2, %c3}", None),
}
RESULTS = ("f32", "s32", "u32")
SURF = {"1d": "{%i0}", "2d": "{%i0, %i1}", "3d": "{%i0, %i1, %i2, %i3}", "a1d": "{%i0, %i1}",
        "a2d": "{%i0, %i1, %i2, %i3}"}
SURF_FORMS = {1: ("b8", 1), 2: ("b16", 1), 4: ("b32", 1), 8: ("b64", 1), 16: ("b32", 4)}   # bytes: (type, vec)
MODES = ("trap", "clamp", "zero")
QUERIES = ("width", "height", "depth", "array_size", "channel_data_type", "channel_order",
           "normalized_coords", "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2",
           "num_mipmap_levels")
SURF_QUERIES = ("width", "height", "depth", "array_size", "channel_data_type", "channel_order",
                "memory_layout")


def _kernel(name, body):
    return f"""
.visible .entry {name}(.param .u64 p_obj, .param .u64 p_in, .param .u64 p_out, .param .u32 p_n)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b32 %i<4>;
  .reg .b32 %o<16>;
  .reg .f32 %c<4>;
  .reg .f32 %f<4>;
  .reg .b16 %h<4>;
  .reg .b64 %rd<8>;
  .reg .b64 %d<2>;
  ld.param.u64 %rd1, [p_obj];
  ld.param.u64 %rd2, [p_in];
  ld.param.u64 %rd3, [p_out];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  mul.wide.u32 %rd4, %r5, 16;
  add.u64 %rd5, %rd2, %rd4;
  add.u64 %rd6, %rd3, %rd4;
  ld.global.v4.b32 {{%i0, %i1, %i2, %i3}}, [%rd5];
  mov.b32 %c0, %i0;
  mov.b32 %c1, %i1;
  mov.b32 %c2, %i2;
  mov.b32 %c3, %i3;
  mov.b32 %o0, 0;
  mov.b32 %o1, 0;
  mov.b32 %o2, 0;
  mov.b32 %o3, 0;
{body}
  st.global.v4.b32 [%rd6], {{%o0, %o1, %o2, %o3}};
DONE:
  ret;
}}
"""


def _tex_body(op, rtype):
    if rtype == "f32":
        return (f"  {op.replace('DST', '{%f0, %f1, %f2, %f3}')};\n"
                + "".join(f"  mov.b32 %o{k}, %f{k};\n" for k in range(4)))
    return f"  {op.replace('DST', '{%o0, %o1, %o2, %o3}')};\n"


def kernels():
    """{kernel name: PTX body} of every probe."""
    out = {}
    for geom, (fc, ic) in TEX_FORMS.items():
        for r in RESULTS:
            out[f"tex_{geom}_{r}_f32"] = _tex_body(f"tex.{geom}.v4.{r}.f32 DST, [%rd1, {fc}]", r)
            if ic:
                out[f"tex_{geom}_{r}_s32"] = _tex_body(f"tex.{geom}.v4.{r}.s32 DST, [%rd1, {ic}]", r)
    out["tex_level_2d_f32_f32"] = _tex_body("tex.level.2d.v4.f32.f32 DST, [%rd1, {%c0, %c1}], %c3", "f32")
    out["tex_grad_2d_f32_f32"] = _tex_body("tex.grad.2d.v4.f32.f32 DST, [%rd1, {%c0, %c1}], {%c2, %c2}, "
                                           "{%c3, %c3}", "f32")
    for comp in "rgba":
        for r in RESULTS:
            out[f"tld4_{comp}_2d_{r}"] = _tex_body(f"tld4.{comp}.2d.v4.{r}.f32 DST, [%rd1, {{%c0, %c1}}]", r)
    for op, names in (("txq", QUERIES), ("suq", SURF_QUERIES)):
        out[op] = _queries(op, names[:4])                 # what the executor answers
        out[f"{op}_more"] = _queries(op, names[4:])       # measured for reference (refused by the executor)
    for geom, c in SURF.items():
        for nbytes, (t, vec) in SURF_FORMS.items():
            for mode in MODES:
                out[f"suld_{geom}_{nbytes}_{mode}"] = _suld(geom, c, t, vec, mode)
                out[f"sust_{geom}_{nbytes}_{mode}"] = _sust(geom, c, t, vec, mode)
    return out


def _queries(op, names):
    """One query per word of out (the query kernels run one thread; out has four rows)."""
    return "".join(f"  {op}.{q}.b32 %o{k}, [%rd1];\n" if k < 4 else
                   f"  {op}.{q}.b32 %r6, [%rd1];\n  st.global.b32 [%rd6+{4 * k}], %r6;\n"
                   for k, q in enumerate(names))


def _suld(geom, c, t, vec, mode):
    if t == "b8" or t == "b16":
        return (f"  suld.b.{geom}.{t}.{mode} {{%h0}}, [%rd1, {c}];\n"
                f"  cvt.u32.u16 %o0, %h0;\n")
    if t == "b64":
        return (f"  suld.b.{geom}.b64.{mode} {{%d0}}, [%rd1, {c}];\n"
                f"  mov.b64 {{%o0, %o1}}, %d0;\n")
    regs = "{%o0}" if vec == 1 else "{%o0, %o1, %o2, %o3}"
    return f"  suld.b.{geom}{'.v4' if vec == 4 else ''}.b32.{mode} {regs}, [%rd1, {c}];\n"


def _sust(geom, c, t, vec, mode):
    """Stores the word 3 of the in-row (and, for 16 bytes, words 3, 3^1, 3^2, 3^3 as a pattern)."""
    if t == "b8" or t == "b16":
        return f"  cvt.u16.u32 %h0, %i3;\n  sust.b.{geom}.{t}.{mode} [%rd1, {c}], {{%h0}};\n"
    if t == "b64":
        return (f"  not.b32 %r6, %i3;\n  mov.b64 %d0, {{%i3, %r6}};\n"
                f"  sust.b.{geom}.b64.{mode} [%rd1, {c}], {{%d0}};\n")
    if vec == 1:
        return f"  sust.b.{geom}.b32.{mode} [%rd1, {c}], {{%i3}};\n"
    return ("  xor.b32 %r6, %i3, 1;\n  xor.b32 %r7, %i3, 2;\n  xor.b32 %r8, %i3, 3;\n"
            f"  sust.b.{geom}.v4.b32.{mode} [%rd1, {c}], {{%i3, %r6, %r7, %r8}};\n")


def module(names=None):
    """The PTX module holding the probes `names` (default: all)."""
    ks = kernels()
    return HEAD + "".join(_kernel(n, ks[n]) for n in (names or ks))
