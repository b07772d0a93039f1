"""Tables of the instruments (info, asm, profile), printed with rich."""

from __future__ import annotations

import sys

from rich import box
from rich.console import Console
from rich.table import Table

from .asm import LoopMix
from .gpu import NotInspected
from .occupancy import Occupancy


def _console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, highlight=False, width=None if stream.isatty() else 200)


def note(message: str) -> None:
    _console(stderr=True).print(message, markup=False)


def print_table(title: str, header: list[str], rows: list[list[str]], lines_after=(), left=(0,)) -> None:
    table = Table(title=title, box=box.SIMPLE_HEAVY)
    for i, col in enumerate(header):
        table.add_column(col, justify="left" if i in left else "right")
    for row in rows:
        table.add_row(*row)
    out = _console()
    out.print(table)
    for line in lines_after:
        out.print(line, markup=False, style="dim")


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
    print_table(f"gemmbench info · {gpu_name} · {shape}", INFO_COLUMNS, info_rows(rows), lines, left=(0, 1, 9))


def show_mix(mix: LoopMix, top: int = 16) -> None:
    """The most frequent instructions of the main loop, and every math instruction."""
    from .asm import is_math
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
