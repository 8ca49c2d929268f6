"""The published side: `site` (the static pages, or `--serve`) and `view` (the pages on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path

import click

from benchcard._cli.common import project_of, report, say_line


@click.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Folder to build into (default: site/ "
              "in the project; with --serve, a temporary folder). Emptied first if benchcard built it; any other "
              "non-empty folder is refused.")
@click.option("--json", "as_json", is_flag=True, help="Print what was built as JSON.")
@click.option("--serve", is_flag=True, help="Serve the pages on 127.0.0.1, rebuilt as results change.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="With --serve: the port (default: a free one).")
@click.pass_context
def site(ctx: click.Context, out_dir: str | None, as_json: bool, serve: bool, port: int) -> None:
    """Build the static site: card pages, results tables, ledger, plots (no script); --serve: a local viewer."""
    from benchcard.publish.build import build_site
    from benchcard.publish.serve import serve as serve_site

    project, out = project_of(ctx), Path(out_dir).resolve() if out_dir else None
    if serve:
        return serve_site(project, out, port, say_line)  # a temporary folder unless --out names one
    report(build_site(project, out or project.root / "site"), as_json)


@click.command("view")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="The port (default: a free one).")
@click.pass_context
def view_cmd(ctx: click.Context, port: int) -> None:
    """`site --serve`: the pages on 127.0.0.1, each run's outputs side by side, rebuilt as results change."""
    from benchcard.publish.serve import serve as serve_site

    serve_site(project_of(ctx), None, port, say_line)
