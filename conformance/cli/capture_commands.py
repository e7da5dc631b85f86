"""Commands that bring captures in and read them: decode, import, approve, record; serving
and replaying them to clients is `replay_commands` (docs/cassettes.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from conformance.cassettes._model import FAMILIES, Interaction
from conformance.cli.common import fail, usage_error
from conformance.session.orchestrator import EXIT_USAGE

_FAMILY_CHOICE = click.Choice(list(FAMILIES), case_sensitive=False)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--interaction",
    type=int,
    help="Which interaction (default: every interaction that is a model call).",
)
@click.option(
    "--family",
    type=_FAMILY_CHOICE,
    help="The wire family, instead of detecting it from the request URL.",
)
def decode(paths: tuple[Path, ...], interaction: int | None, family: str | None) -> None:
    """Print the chunks of recorded responses as JSON lines (what was decoded on stderr).

    PATHS are captures or directories of them, as any tool stored them: vcrpy cassettes
    (YAML or JSON, pydantic-ai's parsed_body, compressed or binary bodies), Ruby VCR, HAR.
    Interactions that are not model calls are listed on stderr and skipped. Exit status 2
    if any capture cannot be decoded; the message names the capture, the interaction and
    the line and byte of the response body.
    """
    from conformance.cassettes import (
        CassetteError,
        decode_interaction,
        guess_family,
        load_cassette,
    )
    from conformance.cassettes._load import iter_cassette_files

    failed = False
    for path in paths:
        walked = path.is_dir()
        for file in iter_cassette_files(path) if walked else (path,):
            try:
                cassette = load_cassette(file)
            except CassetteError as error:
                if walked and error.interaction is None:
                    click.echo(f"{file}: skipped, not a capture ({error.message})", err=True)
                else:
                    click.echo(f"error: {error}", err=True)
                    failed = True
                continue
            chosen: tuple[Interaction, ...]
            if interaction is not None:
                try:
                    chosen = (cassette.interaction(interaction),)
                except CassetteError as error:
                    click.echo(f"error: {error}", err=True)
                    failed = True
                    continue
            else:
                chosen = cassette.interactions
            for item in chosen:
                several = interaction is None and family is None and len(chosen) > 1
                if several and (item.method != "POST" or guess_family(item) is None):
                    click.echo(
                        f"{file}: interaction {item.index}: skipped, not a model call "
                        f"({item.method} {item.uri})",
                        err=True,
                    )
                    continue
                try:
                    decoded = decode_interaction(item, family)
                except CassetteError as error:
                    click.echo(f"error: {error}", err=True)
                    failed = True
                    continue
                click.echo(
                    f"{file}: interaction {item.index}: {decoded.family} ({decoded.form}), "
                    f"{len(decoded.chunks)} chunks",
                    err=True,
                )
                for chunk in decoded.chunks:
                    click.echo(json.dumps(chunk.to_json(), ensure_ascii=False))
    if failed:
        sys.exit(CassetteError.exit_status)


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--pending",
    "pending_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the interesting captures as pending cases here (e.g. cases/pending); the "
    "captures are copied into the cassettes/ directory beside it (made when missing).",
)
@click.option(
    "--cases",
    "cases_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The corpus to deduplicate against (default: the parent of --pending).",
)
@click.option("--repository", metavar="OWNER/NAME", help="The public repository of the captures.")
@click.option("--commit", metavar="SHA", help="The commit of that repository.")
@click.option(
    "--source-root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Record source paths relative to this directory (captures copied out of a checkout).",
)
@click.option("--license", "license_", metavar="SPDX", help="The captures' license, noted.")
@click.option("--interaction", type=int, help="Only this interaction of each capture.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per interaction.")
def import_(
    paths: tuple[Path, ...],
    pending_dir: Path | None,
    cases_dir: Path | None,
    repository: str | None,
    commit: str | None,
    source_root: Path | None,
    license_: str | None,
    interaction: int | None,
    as_json: bool,
) -> None:
    """Scan captures from the wild and say what each holds; propose the interesting ones.

    For every file under PATHS and every interaction: the provider, the wire family and
    framing, whether it carries native reasoning and/or tags in its content, and what the
    reference makes of it. With --pending, those with reasoning that the corpus does not
    already hold (same chunks) become pending cases for review, provenance `recorded`
    (source path; repository and commit where the source is in a git checkout, or as given);
    the captures are copied into the cassettes/ directory beside the cases, made if missing.
    A capture that cannot be written leaves nothing behind and is named with the reason; the
    others are still written. Exit status 2 if any capture failed to decode or be written.
    """
    from conformance.capture.importer import scan, summary_line
    from conformance.capture.pending import ImportProblem, write_pending

    findings = []
    for finding in scan(paths):
        if interaction is not None and finding.interaction not in (None, interaction):
            continue
        findings.append(finding)
        if as_json:
            click.echo(json.dumps(finding.to_json(), ensure_ascii=False))
        else:
            click.echo(summary_line(finding))
    decoded = [f for f in findings if f.family is not None]
    errors = [f for f in findings if f.error is not None]
    interesting = [f for f in findings if f.interesting]
    click.echo(
        f"{len(decoded)} model calls decoded, {len(interesting)} with reasoning "
        f"({sum(f.native for f in interesting)} native, {sum(f.tags for f in interesting)} "
        f"with tags in content), {len(errors)} errors, "
        f"{sum(f.skipped is not None for f in findings)} skipped",
        err=True,
    )
    if pending_dir is not None:
        corpus = cases_dir or (pending_dir.parent if pending_dir.name == "pending" else None)
        try:
            written = write_pending(
                findings,
                pending_dir,
                corpus,
                repository=repository,
                commit=commit,
                license=license_,
                source_root=source_root,
            )
        except ImportProblem as error:
            fail(error)
        for item in written:
            source = f"{item.finding.source} #{item.finding.interaction}"
            if item.error is not None:
                click.echo(f"error: {source}: not imported: {item.error}", err=True)
            elif item.case_file is None:
                click.echo(f"{source}: no case: {item.reason}", err=True)
            else:
                click.echo(f"{source}: wrote {item.case_file} ({item.cassette})", err=True)
        failed = [item for item in written if item.error is not None]
        if failed:
            click.echo(
                f"{len(failed)} of {len(written)} captures with reasoning not imported; the "
                "others were written",
                err=True,
            )
            sys.exit(EXIT_USAGE)
    if errors:
        sys.exit(EXIT_USAGE)


@click.command()
@click.argument("cassette", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--cases",
    "cases_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The corpus directory (default: ./cases; made when missing, with cassettes/ beside it).",
)
@click.option("--interaction", type=int, default=0, show_default=True, help="Which interaction.")
@click.option(
    "--family",
    type=_FAMILY_CHOICE,
    help="The wire family, instead of detecting it from the request URL.",
)
@click.option("--accept", is_flag=True, help="Move the reviewed pending case into the corpus.")
def approve(
    cassette: Path, cases_dir: Path | None, interaction: int, family: str | None, accept: bool
) -> None:
    """Turn a capture into a case: first a pending one to review, then (--accept) a corpus case.

    Without --accept: decode CASSETTE, take the reference's split as the expected one, and
    write <cases>/pending/<ID>-<slug>.yaml, which runs report as SKIP (pending review). A
    capture outside the cassettes directory is copied into cassettes/captures/ beside the
    cases; the directories are made when missing.
    With --accept: check the reviewed case and move it into <cases>/cassettes.yaml.
    """
    from conformance.capture.approve import ApproveError
    from conformance.capture.approve import accept as accept_case
    from conformance.capture.approve import approve as approve_case
    from conformance.cassettes import CassetteError

    directory = cases_dir or Path("cases")
    if directory.exists() and not directory.is_dir():
        usage_error(f"{directory} is not a directory; name the corpus with --cases")
    try:
        if accept:
            case, target = accept_case(cassette, directory)
            assert case.cassette is not None
            click.echo(
                f"accepted {case.id} ({case.slug}) into {_shown(target)}; commit it with "
                f"{_shown(case.cassette.path)}"
            )
        else:
            path = approve_case(cassette, directory, interaction=interaction, family=family)
            click.echo(f"wrote {path}: review it, then `conformance approve {cassette} --accept`")
    except (ApproveError, CassetteError) as error:
        fail(error)  # accepting: an AcceptError, exit status 1


def _shown(path: Path) -> str:
    """`path` as the user would type it: relative to the working directory when under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


@click.command()
@click.option(
    "--provider",
    required=True,
    type=click.Choice(
        ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama", "ollama-generate"]
    ),
    help="The wire family to speak.",
)
@click.option(
    "--base-url",
    required=True,
    help="As the provider's SDK takes it, e.g. https://api.openai.com/v1.",
)
@click.option("--model", required=True)
@click.option("--prompt", required=True, help="The user message.")
@click.option("--stream", is_flag=True, help="Ask for a streamed response.")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The cassette to write, e.g. cassettes/deepseek/my-capture.yaml.",
)
@click.option(
    "--api-key-env",
    metavar="VARIABLE",
    help="Environment variable holding the key (default by provider: OPENAI_API_KEY, "
    "ANTHROPIC_API_KEY, GEMINI_API_KEY; none for Ollama).",
)
@click.option(
    "--header", "headers", multiple=True, metavar="'NAME: VALUE'", help="An extra request header."
)
@click.option(
    "--keep-header",
    "keep_headers",
    multiple=True,
    metavar="NAME",
    help="Record this --header's value as given (the others are recorded as [scrubbed]).",
)
@click.option("--extra", metavar="JSON", help="Fields merged into the request body.")
@click.option("--key-in-query", is_flag=True, help="Gemini: send the key as ?key= in the URL.")
@click.option("--note", help="What to say about the server in the provenance (version, flags).")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
def record(
    provider: str,
    base_url: str,
    model: str,
    prompt: str,
    stream: bool,
    out: Path,
    api_key_env: str | None,
    headers: tuple[str, ...],
    keep_headers: tuple[str, ...],
    extra: str | None,
    key_in_query: bool,
    note: str | None,
    force: bool,
) -> None:
    """Send one real request and record it as a cassette, with secrets scrubbed.

    Credential, cookie, organization and project headers and `key=` query parameters are
    removed; if the cassette still holds anything that looks like a credential, nothing is
    written (exit status 1). Then review it with `conformance approve`.
    """
    from conformance.capture.provider_request import RecordError, Recording
    from conformance.capture.record import record as record_cassette
    from conformance.cassettes import CassetteError, decode_cassette

    parsed_headers = {}
    for header in headers:
        name, colon, value = header.partition(":")
        if not colon or not name.strip():
            usage_error(f"--header {header!r}: write 'Name: value'")
        parsed_headers[name.strip()] = value.strip()
    try:
        fields = json.loads(extra) if extra else {}
    except ValueError as error:
        usage_error(f"--extra is not JSON: {error}")
    if not isinstance(fields, dict):
        usage_error("--extra must be a JSON object")
    recording = Recording(
        provider,
        base_url,
        model,
        prompt,
        stream,
        Recording.key_from_env(provider, api_key_env),
        parsed_headers,
        fields,
        key_in_query,
        note,
        keep_headers,
    )
    try:
        record_cassette(recording, out, force=force)
    except RecordError as error:
        fail(error)
    click.echo(f"wrote {out}")
    try:
        decoded = decode_cassette(out)
    except CassetteError as error:
        fail(
            RecordError(
                f"the capture does not decode: {error}\n(kept for inspection: see "
                "docs/cassettes.md, when a provider changes its format)"
            )
        )
    click.echo(
        f"{decoded.family} ({decoded.form}), {len(decoded.chunks)} chunks; "
        f"next: conformance approve {out}"
    )
