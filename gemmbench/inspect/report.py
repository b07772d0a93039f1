"""Tables of the instruments (info, asm, profile), printed with rich.

Through the same text path as every other table (``output.text``): kernel
names from a kernel file, SASS mnemonics and ncu's names are data, shown as
typed with control characters escaped; tables fit the console (names cut,
numbers never).
"""

from __future__ import annotations

from ..output.rows import Column, text_column
from ..output.table import fit_table, left_out_line
from ..output.text import make_console, prose
from .asm import LoopMix, is_math
from .gpu import NotInspected
from .occupancy import Occupancy


def note(message: str) -> None:
    make_console(stderr=True).print(prose(message), soft_wrap=True)


def print_table(title: str, header: list[str], rows: list[list[str]], lines_after=(), left=(0,)) -> None:
    """A table whose ``left`` columns are names (cut when too long) and the others numbers."""
    columns = [text_column(h, h, 10) if i in left else Column(h, h, len(header) - i) for i, h in enumerate(header)]
    out = make_console()
    table, dropped = fit_table(out, title, columns, rows)
    out.print(table)
    for line in [*lines_after, *left_out_line(dropped)]:
        out.print(prose(line, "dim"))


def _kib(nbytes: int) -> str:
    return f"{nbytes / 1024:.1f} KiB" if nbytes else "0"


INFO_COLUMNS = ["rung", "kernel", "regs", "spill B", "smem static", "smem dyn", "threads", "grid",
                "blocks/SM", "limited by", "occupancy", "waves", "tail"]


def info_rows(rows: list) -> list[list[str]]:
    out = []
    for r in rows:
        if isinstance(r, NotInspected):
            out.append([str(r.spec.id), f"{r.spec.name}: {r.reason}", *["-"] * (len(INFO_COLUMNS) - 2)])
            continue
        res = r.resources
        out.append([str(r.kernel_id), r.name + (f" [{r.note}]" if r.note else ""), str(res.registers),
                    str(res.local_bytes), _kib(res.static_shared), _kib(res.dynamic_shared), str(res.threads),
                    "x".join(map(str, r.grid)), str(r.blocks_per_sm), " + ".join(r.binding),
                    f"{100 * r.theoretical_occupancy:.1f}%", f"{r.waves:.2f}", f"{100 * r.tail_share:.0f}%"])
    return out


def show_info(rows: list, shape, gpu_name: str) -> None:
    inspected = [r for r in rows if isinstance(r, Occupancy)]
    lines = ["regs: registers per thread; spill B: local memory per thread (spills); blocks/SM: the driver's "
             "occupancy calculator; limited by: the resource whose own limit equals it; "
             "occupancy: resident warps / warp slots; tail: how full the last wave is."]
    if inspected:
        sm = inspected[0].sm
        lines.append(f"per SM: {sm.registers} registers, {sm.shared_bytes // 1024} KiB shared memory "
                     f"({sm.reserved_shared_per_block} B reserved per block), {sm.max_threads} threads, "
                     f"{sm.max_blocks} blocks; {sm.sm_count} SMs.")
    lines += [f"rung {r.kernel_id} at {shape}: {r.choice}" for r in inspected if r.choice]
    print_table(f"gemmbench info · {gpu_name} · {shape}", INFO_COLUMNS, info_rows(rows), lines, left=(0, 1, 9))


def show_mix(mix: LoopMix, top: int = 16) -> None:
    """The most frequent instructions of the main loop, and every math instruction."""
    loop = mix.loop
    where = (f"main loop: instructions {loop.start}..{loop.end} of {mix.total_instructions} "
             f"({loop.length} in the body)" if loop else
             f"no loop with math instructions: the whole function ({mix.total_instructions} instructions)")
    total = sum(mix.mix.values())
    ranked = mix.mix.most_common()
    shown = [item for i, item in enumerate(ranked) if i < top or is_math(item[0])]
    rows = [[key, str(count), f"{100 * count / total:.1f}%"] for key, count in shown]
    rest = total - sum(count for _, count in shown)
    if rest:
        rows.append(["(others)", str(rest), f"{100 * rest / total:.1f}%"])
    print_table(f"{mix.function}: instruction mix", ["instruction", "count", "share"], rows,
                [where + ". The main loop is the innermost backward-branch loop body with tensor-core "
                         "instructions, else the one with the most FFMAs; the shortest among equals."])


def _format(unit: str, value: float) -> str:
    if unit == "%":
        return f"{value:.1f}%"
    if unit == "ns":
        return f"{value / 1000:.1f} us"
    if unit == "Hz":
        return f"{value / 1e6:.0f} MHz"
    if unit == "B":
        return f"{value / 2**20:.1f} MiB"
    return f"{value:,.0f}"


def show_profile(kernel_name: str, summary: list, stalls: list, extra_lines=()) -> None:
    print_table(f"ncu · {kernel_name}", ["metric", "value"], [[label, _format(unit, v)] for label, unit, v in summary],
                extra_lines)
    if stalls:
        print_table(f"warp stalls · {kernel_name}", ["reason", "cycles per issued instruction", "share"],
                    [[reason, f"{value:.2f}", f"{100 * share:.1f}%"] for reason, value, share in stalls],
                    ["cycles a warp spends in each state per instruction issued (ncu WarpStateStats)."])
