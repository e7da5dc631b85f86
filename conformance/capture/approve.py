"""`conformance approve`: a new capture -> a pending case for review -> a corpus case.

`approve CASSETTE` decodes the capture, takes the reference normalizer's split as the
expected one (with variants wherever another option profile changes it), and writes a case
marked `pending: true` to `<cases>/pending/`, where every run reports it as SKIP (pending
review), never as a pass. A person reviews it against SPEC.md, edits what is wrong, and runs
`approve CASSETTE --accept`, which checks the case like `conformance check` does and moves it
into `<cases>/cassettes.yaml`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import shutil
from collections.abc import Mapping
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from conformance.cassettes._decode import decode_cassette
from conformance.cassettes._load import (
    CAPTURE_SUFFIXES,
    bundled_cassettes_dir,
    cassettes_dir_for,
    load_cassette,
)
from conformance.cassettes._model import CassetteError
from conformance.cassettes._secrets import refusal
from conformance.contracts.normalizer import own_cases
from conformance.corpus.casegen import (
    expectations_for,
    guess_taxonomy,
    new_case_id,
    quote,
    render_case_file,
)
from conformance.corpus.cases import bundled_cases_dir, load_corpus, load_file
from conformance.corpus.check import check_corpus, load_retired, load_taxonomy
from conformance.errors import UsageError
from conformance.model.cases import Case, CaseFileProblem, Corpus

#: Case IDs written here start with a digit, so they never collide with hand-written ones.
ID_FIRST = "23456789"
_ID = re.compile(r"\bid:\s*[\"']?([A-HJ-NP-Z2-9]{4})\b")
CORPUS_FILE = "cassettes.yaml"
PENDING_DIR = "pending"
CORPUS_DESCRIPTION = (
    "Cases whose input is a recorded provider response: a vcrpy cassette under cassettes/, "
    "decoded into chunks when the corpus loads (docs/cassettes.md)."
)
_HEADER = f"category: cassettes\ndescription: {quote(CORPUS_DESCRIPTION)}\ncases:\n"


class ApproveError(UsageError):
    """The capture cannot be approved (or, raised again as AcceptError, accepted); the message
    says why and what to do (exit status 2)."""


class AcceptError(ApproveError):
    """The reviewed case cannot be accepted into the corpus; the message says why and what to
    do. Exit status 1, as when `conformance check` finds problems: the review did not pass."""

    exit_status: ClassVar[int] = 1


def approve(
    cassette: Path, cases_dir: Path, *, interaction: int = 0, family: str | None = None
) -> Path:
    """Write a pending case for `cassette` and return its file. The cases directory and the
    `cassettes/` directory beside it are made when missing; a capture that is not under a
    cassettes directory is copied into `cassettes/captures/`. Nothing is written (no copy,
    no directory) unless the case is."""
    pending_dir = cases_dir / PENDING_DIR
    _refuse_credentials(cassette)
    copy = _copy_target(cassette, pending_dir / "x.yaml")
    name = _relative_name(copy or cassette, pending_dir / "x.yaml", made=copy is not None)
    corpus = load_corpus([cases_dir]) if cases_dir.is_dir() else Corpus((), (), ())
    for existing in corpus.cases:
        ref = existing.cassette
        if ref is not None and (ref.name, ref.interaction) == (name, interaction):
            state = "a pending case" if existing.pending else "case"
            raise ApproveError(f"{name} is already {state} {existing.id} ({existing.where})")
    decoded = decode_cassette(cassette, interaction, family)
    loaded = load_cassette(cassette)
    used = {case.id for case in corpus.cases}
    if cases_dir.is_dir():
        used |= load_retired(cases_dir)
    # Also the IDs of cases that did not load: an ID is never reused, even from a broken file.
    for path in corpus.files:
        used.update(_ID.findall(path.read_text("utf-8", errors="replace")))
    case_id = new_case_id(used, first=ID_FIRST)
    stem = PurePosixPath(name).with_suffix("").as_posix()
    slug = fresh_slug(f"capture {stem}", {case.slug for case in corpus.cases})
    entry: dict[str, Any] = {
        "id": case_id,
        "slug": slug,
        "title": f"Capture {stem}"[:90],
        "taxonomy": guess_taxonomy([c.to_json() for c in decoded.chunks]),
        "level": "must",
        "pending": True,
        "cassette": name,
        **({"interaction": interaction} if interaction else {}),
        **({"family": family} if family else {}),
        **expectations_for([c.to_json() for c in decoded.chunks]),
        "provenance": [{"kind": "cassette", "ref": f"cassettes/{name}"}],
    }
    path = pending_dir / f"{case_id}-{slug}.yaml"
    made = [d for d in (cases_dir, pending_dir) if not d.is_dir()]
    if copy is not None:
        made += [d for d in (copy.parent.parent, copy.parent) if not d.is_dir()]
        copy.parent.mkdir(parents=True, exist_ok=True)
        if not copy.exists():
            shutil.copyfile(cassette, copy)
    pending_dir.mkdir(parents=True, exist_ok=True)
    header = _review_header(name, decoded, loaded.provenance or {})
    path.write_text(header + render_case_file("cassettes", CORPUS_DESCRIPTION, [entry]), "utf-8")
    _, errors = load_file(path)
    if errors:  # a bug here, not the user's: never leave a broken file behind
        path.unlink()
        if copy is not None:
            copy.unlink(missing_ok=True)
        for directory in reversed(made):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise ApproveError("the pending case did not load: " + "; ".join(map(str, errors)))
    return path


def capture_suffix(path: Path) -> str:
    """The suffix a case may name the capture at `path` by: its own where it is one the
    loader looks for (`CAPTURE_SUFFIXES`), else one saying what the content is."""
    if path.suffix in CAPTURE_SUFFIXES:
        return path.suffix
    head = path.read_bytes()[:4096].lstrip()
    if head.startswith(b"{") and b'"log"' in head:
        return ".har"
    return ".json" if head.startswith((b"{", b"[")) else ".yaml"


def fresh_slug(text: str, used: set[str], limit: int = 56) -> str:
    """A slug the case schema takes (lowercase words joined by hyphens, at most 60
    characters) made of `text` (a host such as `10.0.0.5` becomes `10-0-0-5`), numbered
    where `used` has it already."""
    base = slug_words(text)[:limit].rstrip("-") or "capture"
    slug, number = base, 2
    while slug in used:
        slug, number = f"{base}-{number}", number + 1
    return slug


def slug_words(text: str) -> str:
    """`text` as lowercase words joined by hyphens (what slugs and directory names take)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def accept(cassette: Path, cases_dir: Path) -> tuple[Case, Path]:
    """Check the reviewed pending case of `cassette` and move it into the corpus; an
    AcceptError says why not."""
    try:
        return _accept(cassette, cases_dir)
    except (ApproveError, CassetteError) as error:
        raise AcceptError(str(error)) from error


def _accept(cassette: Path, cases_dir: Path) -> tuple[Case, Path]:
    pending_dir = cases_dir / PENDING_DIR
    copy = _copy_target(cassette, pending_dir / "x.yaml")
    if copy is not None and copy.exists():  # approved from elsewhere: the copy is the case's
        cassette = copy
    name = _relative_name(cassette, pending_dir / "x.yaml")
    _refuse_credentials(cassette)
    found = [
        (path, case)
        for path in sorted(pending_dir.glob("*.yaml"))
        for case in own_cases(load_file(path)[0])
        if case.cassette is not None and case.cassette.name == name
    ]
    if not found:
        raise ApproveError(
            f"no pending case for {name} in {pending_dir}; write one with "
            f"`conformance approve {cassette}` first"
        )
    path, case = found[0]
    _, errors = load_file(path)
    problems = [str(error) for error in errors]
    # A cases directory of one's own may have no taxonomy of its own: the corpus's applies.
    own = cases_dir / "taxonomy.yaml"
    taxonomy = load_taxonomy(cases_dir if own.exists() else bundled_cases_dir())
    if isinstance(taxonomy, CaseFileProblem):
        raise ApproveError(str(taxonomy))
    reviewed = dataclasses.replace(case, pending=False)
    others = [c for c in load_corpus([cases_dir]).cases if c.file != path]
    clashes = [c for c in others if c.id == case.id or c.slug == case.slug]
    problems += [
        f"{case.id}: the ID or slug is already used by {c.id} at {c.where}" for c in clashes
    ]
    retired = load_retired(cases_dir)
    corpus = Corpus((reviewed,), (), (path,))
    problems += [
        str(problem)
        for problem in check_corpus(corpus, taxonomy, retired)
        if "has no case" not in problem.message  # taxonomy coverage is the corpus's concern
    ]
    if problems:
        raise ApproveError(
            f"{path} is not ready: fix these and accept again:\n  " + "\n  ".join(problems)
        )
    target = cases_dir / CORPUS_FILE
    before = target.read_text("utf-8") if target.exists() else None
    known = {str(error) for error in load_file(target)[1]} if before is not None else set()
    block = _case_block(path.read_text("utf-8"))
    text = _HEADER + block if before is None else before.rstrip("\n") + "\n\n" + block
    target.write_text(text, "utf-8")
    # The case goes at the end, so problems the file had before keep their lines.
    target_errors = [error for error in load_file(target)[1] if str(error) not in known]
    if target_errors:
        if before is None:
            target.unlink()
        else:
            target.write_text(before, "utf-8")
        raise ApproveError(f"{target} would not load: " + "; ".join(map(str, target_errors)))
    path.unlink()
    return reviewed, target


def _refuse_credentials(cassette: Path) -> None:
    """ApproveError if the cassette holds anything that looks like a credential: nothing
    with one goes into the corpus, pending or not."""
    message = refusal(cassette)
    if message is not None:
        raise ApproveError(f"{message}\nNothing was written; remove it and approve again.")


#: Where `approve` copies a capture that is not yet under a cassettes directory.
CAPTURES = "captures"


def _copy_target(cassette: Path, case_file: Path) -> Path | None:
    """None when `case_file` can name the cassette where it is; otherwise where its copy
    goes: `captures/` in the cassettes directory of the cases, `cassettes/` beside the
    cases directory where there is none yet (made when the copy is), so that a capture can
    be approved from anywhere, also from a plain install. The packaged corpus takes no new
    cases."""
    suffix = capture_suffix(cassette)
    if cassette.resolve().is_relative_to(cassettes_dir_for(case_file).resolve()):
        if suffix != cassette.suffix:
            raise ApproveError(
                f"{cassette}: a case names a capture ending in "
                f"{', '.join(CAPTURE_SUFFIXES)}; rename it to {cassette.stem}{suffix}"
            )
        return None
    packaged = Path(str(resources.files("conformance"))).resolve()
    if case_file.resolve().is_relative_to(packaged):
        raise ApproveError(
            f"{case_file.parent} is inside the installed package; name your own cases "
            "directory with --cases DIR"
        )
    target = _own_cassettes_dir(case_file) / CAPTURES / (cassette.stem + suffix)
    if target.exists() and target.read_bytes() != cassette.read_bytes():
        raise ApproveError(f"{target} exists and differs from {cassette}; rename one of them")
    return target


def _own_cassettes_dir(case_file: Path) -> Path:
    """The cassettes directory the case file finds (`cassettes_dir_for`), or the one it
    will find once made beside the cases directory (`cases/pending/x.yaml` -> `cassettes/`)."""
    found = cassettes_dir_for(case_file)
    if found.resolve() != bundled_cassettes_dir().resolve():
        return found
    return case_file.parent.parent.parent / "cassettes"


def _relative_name(cassette: Path, case_file: Path, *, made: bool = False) -> str:
    directory = _own_cassettes_dir(case_file) if made else cassettes_dir_for(case_file)
    try:
        return cassette.resolve().relative_to(directory.resolve()).as_posix()
    except ValueError:
        raise ApproveError(
            f"{cassette} is not under {directory}, where cases in {case_file.parent.parent} "
            "find their cassettes; move it there (cassettes/<provider>/<name>.yaml)"
        ) from None


def _review_header(name: str, decoded: Any, recorded: Mapping[str, Any]) -> str:
    lines = [
        f"# Pending review: written by `conformance approve` from cassettes/{name}",
        f"# ({decoded.family}, {decoded.form}). Every run reports it as SKIP (pending review)",
        "# until accepted. Review against SPEC.md: the title, the taxonomy entry (a guess), the",
        "# level, the expected split (the reference's) and its variants; edit what is wrong,",
        f"# then run: conformance approve cassettes/{name} --accept",
        "# The chunks decoded from the capture:",
        *(f"#   {json.dumps(chunk.to_json())}" for chunk in decoded.chunks),
    ]
    if recorded:
        lines.append(f"# The cassette's provenance: {json.dumps(dict(recorded), default=str)}")
    return "\n".join(lines) + "\n"


def _case_block(text: str) -> str:
    """The case of a pending file as it goes into the corpus: after `cases:`, without the
    `pending: true` line."""
    _, _, after = text.partition("\ncases:\n")
    kept = [line for line in after.splitlines() if line.strip() != "pending: true"]
    return "\n".join(kept).rstrip("\n") + "\n"
