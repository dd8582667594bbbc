"""`layoutsim swizzle-search`: rank paddings and CuTe swizzles of a shared-memory tile.

    layoutsim swizzle-search --tile 128x64 --dtype f16 --read ldmatrix.x4 --write st.shared.v4.b32
"""
from . import add_arch


def register(sub):
    p = sub.add_parser("swizzle-search", help="rank tile paddings and swizzles by bank conflicts",
                       description="Cost every padding (up to --max-pad-bytes) and CuTe Swizzle<B,M,S> "
                                   "of a tile with the bank model over the accesses that write and read "
                                   "it; rank by total wavefronts, then wasted bytes.")
    p.add_argument("--tile", required=True, help="ROWSxCOLS, e.g. 128x64")
    p.add_argument("--dtype", default="f16", help="element format (default f16)")
    p.add_argument("--read", action="append", metavar="OP",
                   help="op reading the whole tile: ldmatrix.x4 (16x16 blocks), ldmatrix.x2.trans, "
                        "ld.shared.v4.b32 (row-wise), ... (repeatable; default ldmatrix.x4)")
    p.add_argument("--write", action="append", metavar="OP",
                   help="op writing the whole tile: st.shared.v4.b32 (row-wise), stmatrix.x4, ... "
                        "(repeatable; default st.shared.v4.b32)")
    add_arch(p, "arch: sm_90 (default), sm_80, gfx1201, ...")
    p.add_argument("--read-weight", type=int, default=1, help="times each read access runs per write (default 1)")
    p.add_argument("--write-weight", type=int, default=1, help="weight of the writes (default 1)")
    p.add_argument("--max-pad-bytes", type=int, default=128, help="largest row padding tried (default 128)")
    p.add_argument("--top", type=int, default=10, help="layouts shown (default 10)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args):
    from ..banks.search import search
    from ..errors import integer
    from ..inputs import shape
    from .banks import print_json
    rows, cols = shape(args.tile)
    reads, writes = args.read, args.write
    if reads is None and writes is None:
        reads, writes = ["ldmatrix.x4"], ["st.shared.v4.b32"]
    integer(args.top, "--top", 1)
    integer(args.read_weight, "--read-weight", 0, 1 << 20)
    integer(args.write_weight, "--write-weight", 0, 1 << 20)
    r = search(rows, cols, args.dtype, reads or (), writes or (), args.arch, args.read_weight,
               args.write_weight, args.max_pad_bytes)
    if args.json:
        print_json(r.to_json(args.top))
    else:
        print(r.format(args.top))
    return 0
