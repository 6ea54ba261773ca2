"""`chitta checkpoint` (registered on the main group in chitta/cli/app.py)."""

from __future__ import annotations

import dataclasses
import sys

import click

from chitta.cli.app import EPILOG, _emit_json, _errors_to_exit, _field_path, console, main


@main.command(epilog=EPILOG)
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option(
    "--if-needed",
    is_flag=True,
    help="Write one only when the compaction policy says it is due (records or bytes since the last).",
)
@click.option(
    "--records",
    type=click.IntRange(min=1),
    default=None,
    help="With --if-needed: records since the last checkpoint that make one due (default 50,000).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def checkpoint(
    ctx: click.Context, path: str | None, if_needed: bool, records: int | None, as_json: bool
) -> None:
    """Write a checkpoint so the field opens fast (docs/FORMAT.md, Checkpoints).

    The field's derived state (memories, vectors, codes, graph, encoder) is
    saved as of the log's current end; later opens load it and replay only
    what came after. Writers keep appending meanwhile. Exit 0 when written (or
    not due with --if-needed), 6 when another process is writing one.

    \b
    Examples:
      chitta checkpoint
      chitta --path ./field checkpoint --if-needed --json
    """
    from chitta.field.checkpoint.policy import CheckpointPolicy
    from chitta.field.checkpoint.run import write_checkpoint

    policy = None
    if if_needed:
        policy = CheckpointPolicy() if records is None else CheckpointPolicy(records=records)
    elif records is not None:
        raise click.UsageError("--records only makes sense with --if-needed")
    root = _field_path(ctx, path)
    with _errors_to_exit():
        if as_json or not sys.stderr.isatty():
            info = write_checkpoint(root, policy=policy)
        else:
            with console.status("checkpoint") as status:
                info = write_checkpoint(
                    root, policy=policy, on_step=lambda s: status.update(f"checkpoint: {s}")
                )
    if info is None:
        if as_json:
            _emit_json({"written": False, "reason": "not due"})
        else:
            console.print("no checkpoint needed yet (see --records)")
        return
    if as_json:
        _emit_json({"written": True, **dataclasses.asdict(info)})
        return
    console.print(
        f"checkpoint {info.path}: {info.memories:,} memories, {info.vectors:,} vectors, "
        f"{info.records:,} records up to seqno {info.clock:,}, {info.bytes:,} bytes, {info.seconds:.2f} s"
    )
