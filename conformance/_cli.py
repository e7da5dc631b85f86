"""The `conformance` command line: parses options, calls the layers, picks exit codes.

Exit status everywhere: 0 all as expected, 1 something failed or regressed, 2 a usage,
configuration or case-file error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from . import __version__
from ._cases import CaseFileError, bundled_cases_dir, load_corpus
from ._check import check_corpus, load_retired, load_taxonomy
from ._dump import dump_corpus
from ._impls import DEFAULT_TIMEOUT
from ._results import CHECKS
from ._select import Selection
from ._taxonomy_table import render_taxonomy, replace_between_markers
from .errors import ConformanceError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

cases_option = click.option(
    "--cases",
    "case_dirs",
    type=click.Path(exists=True, file_okay=True, path_type=Path),
    multiple=True,
    help="A case file or directory (repeatable). Default: the bundled corpus.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="conformance")
def main() -> None:
    """Conformance suite for reasoning-channel normalizers."""


@main.command()
@click.option(
    "--impl",
    "impls",
    multiple=True,
    metavar="[NAME=]SPEC",
    help="An implementation: `reference`, `python:module:attr` or `cmd:<command>` "
    "(repeatable; several give the side-by-side report). Default: the reference.",
)
@click.option(
    "--options",
    "option_sets",
    multiple=True,
    metavar="[NAME=]JSON",
    help="Options to run under, overriding what the implementation declares "
    "(JSON object; prefix NAME= for one implementation).",
)
@cases_option
@click.option("--category", "categories", multiple=True, help="Only this category.")
@click.option(
    "--taxonomy",
    "taxonomy_entries",
    multiple=True,
    help="Only this taxonomy entry or prefix (SPLIT, SPLIT.close).",
)
@click.option("--id", "ids", multiple=True, help="Only this case ID.")
@click.option("--level", "levels", multiple=True, type=click.Choice(["must", "should", "info"]))
@click.option(
    "--check",
    "checks",
    multiple=True,
    type=click.Choice(list(CHECKS)),
    help="Only this check (default: all).",
)
@click.option(
    "-k",
    "keyword",
    help="pytest-style expression over ID, slug, category, "
    "taxonomy and level, e.g. 'split and not lone'.",
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("reports"),
    show_default=True,
    help="Where the reports go.",
)
@click.option(
    "--expectations",
    "expectations_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Directory of expected-failure files `<NAME>.yaml` "
    "(default: ./expectations if it exists).",
)
@click.option(
    "--timeout",
    type=float,
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds a `cmd:` implementation may take per request.",
)
@click.option(
    "--validate-protocol",
    is_flag=True,
    help="Validate every protocol reply against its JSON Schema.",
)
def run(
    impls: tuple[str, ...],
    option_sets: tuple[str, ...],
    case_dirs: tuple[Path, ...],
    categories: tuple[str, ...],
    taxonomy_entries: tuple[str, ...],
    ids: tuple[str, ...],
    levels: tuple[str, ...],
    checks: tuple[str, ...],
    keyword: str | None,
    report_dir: Path,
    expectations_dir: Path | None,
    timeout: float,
    validate_protocol: bool,
) -> None:
    """Run the corpus against implementations and write the reports."""
    from ._session import RunSettings, execute

    settings = RunSettings(
        impls=impls or ("reference",),
        option_sets=option_sets,
        case_dirs=case_dirs or (bundled_cases_dir(),),
        selection=Selection(categories, taxonomy_entries, ids, levels, checks or CHECKS, keyword),
        report_dir=report_dir,
        expectations_dir=expectations_dir
        or (Path("expectations") if Path("expectations").is_dir() else None),
        timeout=timeout,
        validate_protocol=validate_protocol,
    )
    try:
        status = execute(settings, echo=click.echo, progress=_progress())
    except ConformanceError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(status)


@main.command()
@click.option("--impl", "impls", multiple=True, metavar="[NAME=]SPEC",
              help="An implementation to fuzz (repeatable). Default: the reference.")
@click.option("--options", "option_sets", multiple=True, metavar="[NAME=]JSON",
              help="Options to fuzz under, overriding what the implementation declares.")
@click.option("--property", "properties", multiple=True,
              type=click.Choice(["differential", "chunking", "whole", "discipline",
                                 "idempotence", "conservation"]),
              help="Only this property (repeatable). Default: all six.")
@click.option("--max-examples", type=click.IntRange(1), default=500, show_default=True,
              help="Examples per property.")
@click.option("--time", "seconds", type=click.FloatRange(0, min_open=True),
              help="A time budget in seconds for the whole session, instead of --max-examples.")
@click.option("--seed", type=int, help="Replay a session exactly (with --database none).")
@click.option("--database", default=".hypothesis/conformance", show_default=True,
              help="Directory of Hypothesis' example database (shared between runs and CI "
              "machines; failures found before are replayed first), or `none`.")
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True,
              help="Reports go here, and minimal failing cases into its `found/`.")
@click.option("--timeout", type=float, default=DEFAULT_TIMEOUT, show_default=True,
              help="Seconds a `cmd:` implementation may take per request.")
def fuzz(
    impls: tuple[str, ...],
    option_sets: tuple[str, ...],
    properties: tuple[str, ...],
    max_examples: int,
    seconds: float | None,
    seed: int | None,
    database: str,
    report_dir: Path,
    timeout: float,
) -> None:
    """Property-based fuzzing: find, shrink and write minimal failing cases."""
    from ._fuzz import PROPERTIES
    from ._fuzz_session import FuzzSettings, execute_fuzz

    settings = FuzzSettings(
        impls=impls or ("reference",),
        option_sets=option_sets,
        case_dirs=(bundled_cases_dir(),),
        properties=properties or PROPERTIES,
        max_examples=max_examples,
        seconds=seconds,
        seed=seed,
        database=None if database.lower() == "none" else Path(database),
        report_dir=report_dir,
        timeout=timeout,
    )
    try:
        status = execute_fuzz(settings, echo=click.echo, progress=_progress())
    except ConformanceError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(status)


def _progress() -> Callable[[str], None] | None:
    """A progress line on a terminal, nothing elsewhere."""
    if not sys.stderr.isatty():
        return None

    def show(text: str) -> None:
        click.echo(f"\r\033[K{text}", err=True, nl=False)

    return show


@main.command()
@cases_option
@click.option("--suggest", is_flag=True, help="Print YAML for each missing variant.")
def check(case_dirs: tuple[Path, ...], suggest: bool) -> None:
    """Check the corpus itself: schema, IDs, taxonomy, conservation, reference agreement."""
    dirs = case_dirs or (bundled_cases_dir(),)
    corpus = load_corpus(dirs)
    taxonomy_dir = next((d for d in dirs if (d / "taxonomy.yaml").exists()), bundled_cases_dir())
    taxonomy = load_taxonomy(taxonomy_dir)
    if isinstance(taxonomy, CaseFileError):
        click.echo(str(taxonomy), err=True)
        sys.exit(EXIT_USAGE)
    retired = set().union(*(load_retired(d) for d in {*dirs, taxonomy_dir} if d.is_dir()))
    # Cases checked against another directory's taxonomy (cases found by the fuzzer, say)
    # need not cover all of it.
    coverage = taxonomy_dir in dirs
    problems = check_corpus(corpus, taxonomy, retired, suggest=suggest, coverage=coverage)
    for problem in problems:
        click.echo(str(problem))
    summary = (
        f"{len(corpus.cases)} cases in {len(corpus.files)} files: "
        f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    )
    click.echo(summary, err=True)
    if corpus.errors:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FAILED if problems else EXIT_OK)


@main.command()
@cases_option
@click.option(
    "--format",
    "format_",
    type=click.Choice(["json"]),
    default="json",
    show_default=True,
    help="Output format.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here instead of standard output.",
)
def dump(case_dirs: tuple[Path, ...], format_: str, output: Path | None) -> None:
    """The whole corpus as one document, with a content hash per case."""
    corpus = load_corpus(case_dirs or (bundled_cases_dir(),))
    for problem in corpus.errors:
        click.echo(str(problem), err=True)
    if corpus.errors:
        sys.exit(EXIT_USAGE)
    text = json.dumps(dump_corpus(corpus), ensure_ascii=False, indent=1) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, "utf-8")


@main.command()
@cases_option
@click.option(
    "--write",
    "target",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Replace the table between the taxonomy markers in this file.",
)
@click.option(
    "--check",
    "check_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Exit 1 if the table in this file is out of date.",
)
def taxonomy(case_dirs: tuple[Path, ...], target: Path | None, check_file: Path | None) -> None:
    """The taxonomy with the cases covering each entry, as Markdown."""
    dirs = case_dirs or (bundled_cases_dir(),)
    loaded = load_taxonomy(dirs[0] if dirs[0].is_dir() else bundled_cases_dir())
    if isinstance(loaded, CaseFileError):
        click.echo(str(loaded), err=True)
        sys.exit(EXIT_USAGE)
    table = render_taxonomy(loaded, load_corpus(dirs).cases)
    for path in filter(None, (target, check_file)):
        text = path.read_text("utf-8")
        updated = replace_between_markers(text, table)
        if updated is None:
            click.echo(
                f"{path}: no taxonomy markers (<!-- taxonomy:start --> and <!-- taxonomy:end -->)",
                err=True,
            )
            sys.exit(EXIT_USAGE)
        if path == target:
            path.write_text(updated, "utf-8")
        elif updated != text:
            click.echo(
                f"{path}: the taxonomy table is out of date; run "
                f"`conformance taxonomy --write {path}`",
                err=True,
            )
            sys.exit(EXIT_FAILED)
    if target is None and check_file is None:
        click.echo(table, nl=False)


# --- conformance diff: compare two results documents (reports/_diff.py) ----------------------


@main.command("diff")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "markdown"]),
    default="text",
    show_default=True,
    help="Output format.",
)
def diff(old: Path, new: Path, format_: str) -> None:
    """Compare two results.json files: exit 1 if anything regressed (was ok, now not)."""
    from .reports import ResultsFileError, load_results
    from .reports._diff import compare, exit_status, render

    try:
        before, after = load_results(old), load_results(new)
    except ResultsFileError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    comparison = compare(before, after)
    click.echo(render(comparison, format_), nl=False)
    sys.exit(exit_status(comparison))


# --- conformance smoke: does an implementation speak the protocol? (_smoke.py) --------------


@main.command()
@click.option(
    "--impl",
    "impl",
    required=True,
    metavar="SPEC",
    help="The implementation: `reference`, `python:module:attr` or `cmd:<command line>`.",
)
@click.option(
    "--timeout",
    type=float,
    default=None,
    help="Seconds a `cmd:` implementation may take per request.  [default: 5.0]",
)
@click.option(
    "--validate-protocol",
    is_flag=True,
    help="Validate every protocol reply against its JSON Schema.",
)
def smoke(impl: str, timeout: float | None, validate_protocol: bool) -> None:
    """Send an implementation a few trivial requests: does it speak the protocol?

    Exit status 0 if it does, 1 if not, 2 if it cannot be started.
    """
    from ._impls import DEFAULT_TIMEOUT, connect, parse_impl
    from ._smoke import smoke as run_smoke
    from .errors import ConformanceError

    try:
        connection = connect(
            parse_impl(impl),
            timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
            validate_protocol=validate_protocol,
        )
    except ConformanceError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    info = connection.info
    try:
        click.echo(f"{info.label}: {info.name} {info.version} ({info.language})")
        results = run_smoke(connection)
    finally:
        connection.close()
    width = max(len(result.name) for result in results)
    for result in results:
        click.echo(f"{'ok' if result.ok else 'FAIL':4}  {result.name:{width}}  {result.message}")
    failed = sum(not result.ok for result in results)
    if failed:
        click.echo(
            f"FAIL: {info.label} does not speak the protocol ({failed} of {len(results)} "
            "smoke requests failed)"
        )
        sys.exit(EXIT_FAILED)
    click.echo(f"OK: {info.label} speaks the protocol ({len(results)} smoke requests answered)")


# --- conformance fingerprint: which option values does an implementation follow? -----------


@main.command()
@click.option(
    "--impl",
    "impl",
    required=True,
    metavar="SPEC",
    help="The implementation: `reference`, `python:module:attr` or `cmd:<command line>`.",
)
@click.option(
    "--timeout",
    type=float,
    default=None,
    help="Seconds a `cmd:` implementation may take per request.  [default: 5.0]",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
def fingerprint(impl: str, timeout: float | None, format_: str) -> None:
    """Find the policy an implementation follows, option by option (SPEC.md section 5).

    Prints, per option, the value its outputs agree with (or that they agree with none, or
    with different values on different inputs) and the evidence, then the options to
    declare. Exit status 0 if it follows every option it declares, 1 if not, 2 if it cannot
    be started.
    """
    from ._fingerprint import fingerprint as run_fingerprint
    from ._fingerprint import render_fingerprint
    from ._impls import DEFAULT_TIMEOUT, connect, parse_impl
    from .errors import ConformanceError

    try:
        connection = connect(
            parse_impl(impl), timeout=DEFAULT_TIMEOUT if timeout is None else timeout
        )
    except ConformanceError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    try:
        result = run_fingerprint(connection)
    finally:
        connection.close()
    click.echo(render_fingerprint(result, format_), nl=False)
    sys.exit(EXIT_OK if result.consistent else EXIT_FAILED)


# --- conformance bench: speed side by side (_bench.py) ---------------------------------------


@main.command()
@click.option(
    "--impl",
    "impls",
    multiple=True,
    metavar="[NAME=]SPEC",
    help="An implementation (repeatable). Default: the reference.",
)
@click.option(
    "--quick",
    is_flag=True,
    help="Small inputs (100 KB, growth 200 KB to 2 MB): seconds, not minutes.",
)
@click.option(
    "--timeout",
    type=float,
    default=120.0,
    show_default=True,
    help="Seconds a `cmd:` implementation may take per request (one request is a document).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
def bench(impls: tuple[str, ...], quick: bool, timeout: float, format_: str) -> None:
    """Measure implementations on the same inputs: throughput, holdback, growth.

    In process (`reference`, `python:`) the normalizer alone is timed; through `cmd:` each
    document is one protocol request, so the figure is the protocol plus the implementation.
    Exit status 0 when every figure was measured, 1 when a run failed, 2 for a start failure.
    """
    from ._bench import FULL, QUICK, render_bench
    from ._bench import bench as run_bench
    from ._impls import connect, parse_impl
    from .errors import ConformanceError

    settings = QUICK if quick else FULL
    results = []
    try:
        specs = [parse_impl(text) for text in impls or ("reference",)]
        for spec in specs:
            connection = connect(spec, timeout=timeout)
            try:
                results.append(run_bench(connection, settings, progress=_progress()))
            finally:
                connection.close()
    except ConformanceError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    progress = _progress()
    if progress is not None:
        progress("")
    click.echo(render_bench(results, settings, format_), nl=False)
    sys.exit(EXIT_FAILED if any(result.problems for result in results) else EXIT_OK)


# --- provider cassettes: decode, serve, record, approve, replay (conformance/cassettes/) -----


@main.command()
@click.argument("cassette", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--interaction", type=int, default=0, show_default=True, help="Which interaction.")
@click.option(
    "--family",
    type=click.Choice(
        ["openai-chat", "anthropic", "openai-responses", "gemini", "ollama"], case_sensitive=False
    ),
    help="The wire family, instead of detecting it from the request URL.",
)
def decode(cassette: Path, interaction: int, family: str | None) -> None:
    """Print the chunks of a recorded response as JSON lines (the family on stderr).

    Exit status 2 if the cassette cannot be decoded; the message names the cassette, the
    interaction and the line of the response body.
    """
    from .cassettes import CassetteError, decode_cassette

    try:
        decoded = decode_cassette(cassette, interaction, family)
    except CassetteError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(
        f"{cassette}: interaction {interaction}: {decoded.family} ({decoded.form}), "
        f"{len(decoded.chunks)} chunks",
        err=True,
    )
    for chunk in decoded.chunks:
        click.echo(json.dumps(chunk.to_json(), ensure_ascii=False))


@main.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@cases_option
@click.option(
    "--port", type=int, default=8765, show_default=True, help="Port on 127.0.0.1 (0: any free)."
)
@click.option(
    "--split",
    type=click.Choice(["frames", "adversarial", "bytes", "none"]),
    default="frames",
    show_default=True,
    help="How response bodies are cut into HTTP chunks (docs/cassettes.md).",
)
@click.option("--delay", type=float, default=0.0, help="Seconds to wait between HTTP chunks.")
def serve(
    directory: Path, case_dirs: tuple[Path, ...], port: int, split: str, delay: float
) -> None:
    """Answer HTTP requests on 127.0.0.1 from the cassettes under DIRECTORY.

    Each cassette's base URL is http://127.0.0.1:PORT/<its path without .yaml>; GET / lists
    them with the cases that use them, and POST /_verdict/<CASE ID> with {"assistant",
    "thinking"} judges what a client showed. Runs until interrupted.
    """
    from .cassettes._serve import ReplayServer

    cases = load_corpus(case_dirs or (bundled_cases_dir(),)).cases
    try:
        server = ReplayServer(directory, cases=cases, split=split, delay=delay, port=port)
    except OSError as error:
        click.echo(f"error: cannot listen on 127.0.0.1:{port}: {error}", err=True)
        sys.exit(EXIT_USAGE)
    for problem in server.problems:
        click.echo(f"skipped: {problem}", err=True)
    click.echo(f"serving {len(server.served)} cassettes on {server.url} (split: {split})")
    for entry in server.served:
        ids = ",".join(case.id for case in entry.cases) or "-"
        click.echo(f"  {server.url}/{entry.name}  {'/'.join(set(entry.families))}  cases {ids}")
    sys.stdout.flush()
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    verdicts = [v["verdict"] for v in server.verdicts]
    if verdicts:
        counts = ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
        click.echo(f"verdicts given: {counts}")


@main.command()
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
    from .cassettes import CassetteError, decode_cassette
    from .cassettes._record import RecordError, Recording
    from .cassettes._record import record as record_cassette

    parsed_headers = {}
    for header in headers:
        name, colon, value = header.partition(":")
        if not colon or not name.strip():
            click.echo(f"error: --header {header!r}: write 'Name: value'", err=True)
            sys.exit(EXIT_USAGE)
        parsed_headers[name.strip()] = value.strip()
    try:
        fields = json.loads(extra) if extra else {}
    except ValueError as error:
        click.echo(f"error: --extra is not JSON: {error}", err=True)
        sys.exit(EXIT_USAGE)
    if not isinstance(fields, dict):
        click.echo("error: --extra must be a JSON object", err=True)
        sys.exit(EXIT_USAGE)
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
    )
    try:
        record_cassette(recording, out, force=force)
    except RecordError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_FAILED)
    click.echo(f"wrote {out}")
    try:
        decoded = decode_cassette(out)
    except CassetteError as error:
        click.echo(
            f"error: the capture does not decode: {error}\n"
            "(kept for inspection: see docs/cassettes.md, when a provider changes its format)",
            err=True,
        )
        sys.exit(EXIT_FAILED)
    click.echo(
        f"{decoded.family} ({decoded.form}), {len(decoded.chunks)} chunks; "
        f"next: conformance approve {out}"
    )


@main.command()
@click.argument("cassette", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--cases",
    "cases_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The corpus directory (default: ./cases).",
)
@click.option("--interaction", type=int, default=0, show_default=True, help="Which interaction.")
@click.option(
    "--family",
    type=click.Choice(["openai-chat", "anthropic", "openai-responses", "gemini", "ollama"]),
    help="The wire family, instead of detecting it from the request URL.",
)
@click.option("--accept", is_flag=True, help="Move the reviewed pending case into the corpus.")
def approve(
    cassette: Path, cases_dir: Path | None, interaction: int, family: str | None, accept: bool
) -> None:
    """Turn a capture into a case: first a pending one to review, then (--accept) a corpus case.

    Without --accept: decode CASSETTE, take the reference's split as the expected one, and
    write <cases>/pending/<ID>-<slug>.yaml, which runs report as SKIP (pending review).
    With --accept: check the reviewed case and move it into <cases>/cassettes.yaml.
    """
    from .cassettes import CassetteError
    from .cassettes._approve import ApproveError
    from .cassettes._approve import accept as accept_case
    from .cassettes._approve import approve as approve_case

    directory = cases_dir or Path("cases")
    if not directory.is_dir():
        click.echo("error: no ./cases directory here; name the corpus with --cases", err=True)
        sys.exit(EXIT_USAGE)
    try:
        if accept:
            case, target = accept_case(cassette, directory)
            click.echo(f"accepted {case.id} ({case.slug}) into {target}; commit it with {cassette}")
        else:
            path = approve_case(cassette, directory, interaction=interaction, family=family)
            click.echo(f"wrote {path}: review it, then `conformance approve {cassette} --accept`")
    except (ApproveError, CassetteError) as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_FAILED if accept else EXIT_USAGE)


@main.command()
@click.option(
    "--impl",
    "impls",
    multiple=True,
    required=True,
    metavar="[NAME=]python:module:attr",
    help="A Python client declaring the `http` capability (repeatable).",
)
@click.option(
    "--options",
    "option_sets",
    multiple=True,
    metavar="[NAME=]JSON",
    help="Options to judge under, overriding what the client declares.",
)
@cases_option
@click.option("--category", "categories", multiple=True, help="Only this category.")
@click.option("--id", "ids", multiple=True, help="Only this case ID.")
@click.option("-k", "keyword", help="pytest-style expression over ID, slug, category, ...")
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("reports"),
    show_default=True,
    help="Where the reports go.",
)
def replay(
    impls: tuple[str, ...],
    option_sets: tuple[str, ...],
    case_dirs: tuple[Path, ...],
    categories: tuple[str, ...],
    ids: tuple[str, ...],
    keyword: str | None,
    report_dir: Path,
) -> None:
    """Check Python clients that make their own HTTP requests, on the cassette cases.

    Each client gets an HttpCall per case, makes the request, and vcrpy replays the
    recorded response (record mode none); its channels are judged as check `http`.
    """
    import time

    from ._impls import connect
    from ._runner import new_run
    from ._session import implementation_specs, summary_table
    from .cassettes._http import replay_run
    from .interface import metadata
    from .reports import write_reports

    started = time.perf_counter()
    try:
        specs = implementation_specs(impls, option_sets)
        selection = Selection(categories, (), ids, (), CHECKS, keyword)
        corpus = load_corpus(case_dirs or (bundled_cases_dir(),))
        cases = [case for case in selection.apply(corpus.cases) if case.cassette is not None]
        if not cases:
            raise ConformanceError("the selection has no cassette-backed case")
        runs = []
        for spec in specs:
            if not spec.spec.startswith("python:"):
                raise ConformanceError(
                    f"--impl {spec.spec!r}: replay takes python: clients; check other "
                    "languages with `conformance serve` (docs/cassettes.md)"
                )
            connection = connect(spec)
            factory = getattr(connection, "factory", None)
            if factory is None or "http" not in metadata(factory)["capabilities"]:
                raise ConformanceError(
                    f"{spec.label}: does not declare the http capability "
                    '(@implementation(..., capabilities=["http"])); run normalizers with '
                    "`conformance run`"
                )
            runs.append(replay_run(factory, connection.info, cases))
    except ConformanceError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    run = new_run(runs, {**selection.to_json(), "checks": ["http"]})
    run.duration = time.perf_counter() - started
    for problem in corpus.errors:
        click.echo(str(problem), err=True)
    click.echo(summary_table(run))
    for path in write_reports(run, report_dir):
        click.echo(f"wrote {path}")
    if corpus.errors:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_OK if run.ok else EXIT_FAILED)


# --- conformance matrix: every adapter of a public normalizer, side by side (_matrix.py) ----


@main.command()
@click.option(
    "--adapter",
    "only",
    multiple=True,
    metavar="LABEL",
    help="Only this adapter (repeatable); the reference always runs. Default: every adapter "
    "whose library is installed.",
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("reports") / "matrix",
    show_default=True,
    help="Where the side-by-side reports go.",
)
@click.option(
    "--docs",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs") / "ecosystem.md",
    show_default=True,
    help="The generated ecosystem page.",
)
@click.option("--no-docs", is_flag=True, help="Write no ecosystem page.")
@click.option(
    "--bench",
    "bench_mode",
    type=click.Choice(["small", "quick", "full", "none"]),
    default="small",
    show_default=True,
    help="Speed measurements: a 20 KB document, `conformance bench --quick` (100 KB), its "
    "full sizes (1 MB), or none.",
)
@click.option(
    "--timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds a `cmd:` adapter may take per request (benchmark streams are long).",
)
@click.option(
    "--update-expectations",
    is_flag=True,
    help="Rewrite the adapters' expectation files from this run's failures and "
    "conformance/adapters/divergences.yaml, then judge the run against them.",
)
def matrix(
    only: tuple[str, ...],
    report_dir: Path,
    docs: Path,
    no_docs: bool,
    bench_mode: str,
    timeout: float,
    update_expectations: bool,
) -> None:
    """Run the reference and every installed adapter (pydantic-ai, LiteLLM, SGLang, vLLM,
    transformers, the Vercel AI SDK) and write the side-by-side reports and docs/ecosystem.md.

    Exit status 0 when every adapter behaves as its expectation file says, 1 when one
    regressed or improved (FAIL or XPASS), 2 for a usage error.
    """
    from ._bench import FULL, QUICK
    from ._matrix import SMALL, MatrixSettings, run_matrix
    from .errors import ConformanceError

    settings = MatrixSettings(
        report_dir=report_dir,
        docs=None if no_docs else docs,
        only=only,
        bench={"small": SMALL, "quick": QUICK, "full": FULL, "none": None}[bench_mode],
        timeout=timeout,
        update_expectations=update_expectations,
    )
    try:
        result = run_matrix(settings, echo=click.echo)
    except ConformanceError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    if any(entry.run.failure for entry in result.entries):
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_OK if result.run.ok else EXIT_FAILED)
