"""The three instruments as functions of KernelSpecs: ``info``, ``asm`` and
``profile``. cli.py parses the options and calls these; each returns an exit
code, or raises UserError (one line, exit 2)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ..backend import Shape
from ..errors import UserError
from ..fsutil import check_target, place, write_new
from ..output.plot import require_matplotlib
from ..spec import KernelSpec
from ..validate import check_plot_path
from . import report
from .asm import build_listing, loop_mix, main_function, parse_arch, parse_listing
from .gpu import NotInspected, inspect_occupancy, load_shape, open_backend, prepare
from .occupancy import Occupancy
from .profile import (export_csv, find_ncu, parse_raw_csv, profile_command, run_profile, stall_reasons,
                      summary)
from .roofline import plot_roofline, point_for, roof_from_profile


def _what(spec: KernelSpec) -> str:
    """'rung 12', or a kernel file's path."""
    return f"rung {spec.id}" if spec.id >= 0 else spec.source


# --------------------------------------------------------------------------
# info
# --------------------------------------------------------------------------

def info(specs: list[KernelSpec], shape: Shape, as_json: bool, gpu: int = 0) -> int:
    backend = open_backend("info", gpu)
    load_shape(backend, shape)
    rows = inspect_occupancy(backend, specs, shape)
    if as_json:
        out = [r.to_dict() if isinstance(r, Occupancy) else {"kernel_id": r.spec.id, "name": r.spec.name,
                                                             "not_inspected": r.reason} for r in rows]
        sys.stdout.write(json.dumps({"gpu": backend.info.name, "shape": [shape.M, shape.N, shape.K],
                                     "kernels": out}, indent=2) + "\n")
    else:
        report.show_info(rows, shape, backend.info.name)
    return 0


# --------------------------------------------------------------------------
# asm
# --------------------------------------------------------------------------

def _target(spec: KernelSpec, shape: Shape, arch: str | None, gpu: int = 0):
    """(record that is built, compute capability, params, where they come from)."""
    if arch is not None:  # static: no GPU needed, the record's defaults
        cc = parse_arch(arch)
        run_spec = spec.for_device(cc)
        return run_spec, cc, dict(run_spec.params), "record defaults"
    try:
        backend = open_backend("asm", gpu)
    except UserError as exc:
        raise UserError(f"{exc}; or give --arch sm_XX to build for an architecture without one")
    load_shape(backend, shape)
    prepared = prepare(backend, spec, shape)
    if isinstance(prepared, NotInspected):
        raise UserError(f"{_what(spec)}: {prepared.reason}")
    return prepared.spec, backend.info.compute_capability, prepared.params, prepared.params_source


def asm(spec: KernelSpec, shape: Shape, kind: str, arch: str | None, output: Path | None, gpu: int = 0,
        overwrite: bool = False) -> int:
    """``output`` (-o) is checked before anything is built and written
    through fsutil.write_new: a new regular file in an existing directory,
    an existing one replaced only with ``overwrite``."""
    if spec.is_baseline:
        raise UserError(f"rung {spec.id} ({spec.name}) is a library kernel: it has no source to show")
    if output is not None:
        check_target(output, overwrite, "-o")
    run_spec, cc, params, source = _target(spec, shape, arch, gpu)
    listing = build_listing(run_spec, cc, params, kind)
    report.note(f"{run_spec.name}: {listing.command}  (parameters: {source})")
    if output is not None:
        write_new(output, listing.text, overwrite, "-o")
        report.note(f"{kind.upper()} written to {output}")
    else:
        sys.stdout.write(listing.text)
    report.show_mix(loop_mix(main_function(parse_listing(listing), run_spec.entry)))
    return 0


# --------------------------------------------------------------------------
# profile
# --------------------------------------------------------------------------

def profile(spec: KernelSpec, shape: Shape, plot: Path | None, export: Path | None, results_dir: Path,
            gpu: int = 0, params: tuple[str, ...] = (), overwrite: bool = False) -> int:
    """``params``: a kernel file's --param overrides, for the profiled process to apply again.
    The report (--export, else a new name in ``results_dir``, which may be
    created: the user named it), its CSV beside it and the --plot are checked
    before ncu runs and written through fsutil (regular files only, replaced
    only with ``overwrite``; --export's directory must exist)."""
    ncu = find_ncu()
    if plot is not None:
        require_matplotlib()
        check_plot_path(plot, overwrite)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    tag = f"rung{spec.id}" if spec.id >= 0 else Path(spec.source).stem
    path = export or results_dir / f"profile-{tag}-{shape}-{stamp}.ncu-rep"
    option = "--export" if export else "--results-dir"
    if path.suffix != ".ncu-rep":
        raise UserError(f"--export {path}: the name must end in .ncu-rep")
    if export is None:
        try:
            results_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"--results-dir {results_dir}: cannot create it ({exc.strerror or exc})") from None
    path = check_target(path, overwrite, option)  # a symlink: its target
    csv_path = path.with_suffix(".csv")
    check_target(csv_path, overwrite, option)
    partial = path.with_name(f".{path.stem}.partial.ncu-rep")  # renamed once complete
    report.note(f"ncu on one call of {_what(spec)} at {shape} after warm-up (a minute or so: ncu replays "
                f"the kernel once per counter pass)")
    try:
        user = spec.id < 0
        runs = run_profile(profile_command(ncu, str(partial), [] if user else [spec.id], shape.M, shape.N, shape.K,
                                           gpu=gpu, kernel_file=spec.source if user else None, params=params))
        for run in runs:
            if "skipped" in run:
                raise UserError(f"{_what(spec)} cannot run here: {run['skipped']}")
        place(partial, path, overwrite, option)
    finally:
        partial.unlink(missing_ok=True)
    text = export_csv(ncu, str(path))
    write_new(csv_path, text, overwrite, option)
    kernels = parse_raw_csv(text)
    if not kernels:
        raise UserError(f"ncu recorded no kernel in {path}")
    run = runs[0] if runs else {}
    params = " ".join(f"{k}={v}" for k, v in (run.get("params") or {}).items())
    for kernel in kernels:
        report.show_profile(kernel.name, summary(kernel), stall_reasons(kernel),
                            [f"{run.get('gpu', '')}, {_what(spec)} {spec.name} at {shape}"
                             + (f", {params} ({run.get('params_source')})" if params else "")])
    if plot is not None:
        _plot(kernels, run, spec, shape, plot, overwrite)
    report.note(f"report kept for the GUI (ncu-ui): {path}; raw CSV: {path.with_suffix('.csv')}")
    return 0


def _plot(kernels, run: dict, spec: KernelSpec, shape: Shape, plot: Path, overwrite: bool = False) -> None:
    main = next((k for k in kernels if k.name == run.get("entry", "sgemm")), kernels[-1])
    roof = roof_from_profile(main)
    if roof is None:
        raise UserError("the profile lacks the peak metrics a roofline needs (ncu --set full has them)")
    points = [p for p in (point_for(k, k.name) for k in kernels) if p]
    if not points:
        raise UserError("no profiled kernel has a duration, DRAM bytes and FLOP counts: nothing to plot")
    plot_roofline(roof, points, plot, f"{_what(spec)} {spec.name} at {shape} on {run.get('gpu', 'the GPU')} "
                                      f"(SM clock {roof_clock(main)})", overwrite)
    for p in points:
        report.note(f"roofline: {p.label}: {p.flops_per_second / 1e12:.2f} TFLOP/s executed at {p.intensity:.0f} "
                    f"FLOP per DRAM byte, {100 * p.share_of_roof(roof):.0f}% of its roof there (FP32 peak "
                    f"{roof.peak_flops / 1e12:.1f} TFLOP/s"
                    + (f", TF32 tensor peak {roof.tensor_flops / 1e12:.0f} TFLOP/s" if roof.tensor_flops else "")
                    + f", DRAM {roof.peak_bandwidth / 1e12:.2f} TB/s)")
    report.note(f"roofline written to {plot}")


def roof_clock(kernel) -> str:
    hz = kernel.get("sm__cycles_elapsed.avg.per_second")
    return f"{hz / 1e6:.0f} MHz" if hz else "as measured"
