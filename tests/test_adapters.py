"""The adapters of public normalizers: each runs, reports the installed library's version, and
shows the library's known behaviour on a few inputs (docs/ecosystem.md). An adapter
whose library is not installed here is skipped, with the command that installs it."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator

import pytest

from conformance.adapters import (
    ADAPTERS,
    EXPECTATIONS_DIR,
    NODE_DIR,
    Adapter,
    adapter,
    llamacpp_program,
)
from conformance.adapters.common import installed_version
from conformance.adapters.engine_families import VARIANTS
from conformance.corpus.expectations import load_expected_failures
from conformance.engine.runner import run_implementation
from conformance.model.cases import Case
from conformance.model.chunks import Chunk
from conformance.model.requests import Ok, StreamRequest, WholeRequest
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import bundled_corpus
from .tiers import slow_to_import

# The libraries warn about their own internals on import (pydantic schemas, torch); not ours.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

#: The distribution whose version each Python adapter reports.
DISTRIBUTIONS = {
    "pydantic-ai": ("pydantic-ai-slim", "pydantic-ai"),
    "litellm": ("litellm",),
    "litellm-ollama": ("litellm",),
    "transformers-qwen3": ("transformers",),
    "transformers-qwen3.5": ("transformers",),
    "langchain-openai": ("langchain-openai",),
    "langchain-deepseek": ("langchain-deepseek",),
    "langchain-ollama": ("langchain-ollama",),
    "langchain-ollama-reasoning": ("langchain-ollama",),
    # Every family of vLLM and SGLang: the engine's own distribution.
    **{variant.label: (variant.engine.lower(),) for variant in VARIANTS},
    # -- agent frameworks and small splitters
    "openai-agents": ("openai-agents",),
    "llama-index-ollama": ("llama-index-llms-ollama",),
    "aider": ("aider-chat",),
    "hermes-agent": ("hermes-agent",),
    "litellm-ollama-generate": ("litellm",),
    "autogen-r1": ("autogen-ext",),
}
#: Adapters whose library drops native reasoning (their divergence rules say why).
DROPS_NATIVE = {"langchain-openai", "langchain-ollama"}
#: Adapters whose library changes streamed native reasoning: what the thinking is for "plan".
#: AutoGen strips "<think>" and "</think>" as character sets (microsoft/autogen#7364).
CHANGES_NATIVE = {"autogen-r1": "pla"}

SPLIT_CLOSE = ("<think>abc</thi", "nk>Final")
ORPHAN = ("...done</think>answer",)
PARTIAL_AT_END = ("answer: <th",)
TWO_BLOCKS = ("a<think>r1</think>b<think>r2</think>c",)
SECOND_BLOCK = ("a</think>b", "<think>c</think>d")

#: label -> (kind, input, (assistant, thinking)): what the library does today, right or wrong.
#: Kind "stream" sends the content chunks; "whole" sends one message (content, reasoning).
KNOWN: dict[str, list[tuple[str, tuple[str | None, ...], tuple[str, str]]]] = {
    "pydantic-ai": [
        # Tags are recognised only as whole deltas (pydantic/pydantic-ai#3007).
        ("stream", ("<think>", "abc", "</think>", "Final"), ("Final", "abc")),
        ("stream", SPLIT_CLOSE, ("<think>abc</think>Final", "")),
        # The non-streaming split shows an unclosed block's body as text.
        ("whole", ("<think>abc", None), ("abc", "")),
        ("whole", ("x", "plan"), ("x", "plan")),
    ],
    "litellm": [
        ("whole", ("<think>abc</think>Final", None), ("Final", "abc")),
        # Only a block at the very start is split off (re.match).
        ("whole", ("pre<think>a</think>b", None), ("pre<think>a</think>b", "")),
        # With a reasoning field present, the content is not parsed.
        ("whole", ("<think>a</think>b", "R"), ("<think>a</think>b", "R")),
    ],
    "litellm-ollama": [
        # Per-chunk `in` checks, nothing held back.
        ("stream", SPLIT_CLOSE, ("nk>Final", "abc</thi")),
        # Both tags in one chunk: the chunk goes to the content (BerriAI/litellm#14121).
        ("stream", ("<think>abc</think>Final",), ("abcFinal", "")),
        # Whole responses: OllamaChatConfig.transform_response, a block at the start only.
        ("whole", ("<think>abc</think>Final", None), ("Final", "abc")),
        ("whole", ("pre<think>a</think>b", None), ("pre<think>a</think>b", "")),
        ("whole", ("<think>a</think>b", "R"), ("<think>a</think>b", "R")),
    ],
    "sglang-deepseek-r1": [
        ("stream", ORPHAN, ("answer", "...done")),
        ("stream", SPLIT_CLOSE, ("Final", "abc")),
        ("whole", (TWO_BLOCKS[0], None), ("b<think>r2</think>c", "a<think>r1")),
    ],
    "sglang-qwen3": [
        # The server forces reasoning for the Qwen3 template (enable_thinking defaults to true).
        ("stream", ORPHAN, ("answer", "...done")),
        ("stream", SPLIT_CLOSE, ("Final", "abc")),
    ],
    "vllm-deepseek-r1": [
        # Token IDs: a close tag split across chunks is not the close token.
        ("stream", SPLIT_CLOSE, ("", "<think>abc</think>Final")),
        ("stream", ORPHAN, ("answer", "...done")),
        # The server stops calling the reasoning parser after the first close tag.
        ("stream", SECOND_BLOCK, ("b<think>c</think>d", "a")),
        # Text before <think> is dropped (vllm-project/vllm#50901).
        ("whole", ("a<think>b</think>c", None), ("c", "b")),
    ],
    "vllm-qwen3": [
        ("stream", SPLIT_CLOSE, ("", "abc</think>Final")),
        ("stream", SECOND_BLOCK, ("b<think>c</think>d", "a")),
        ("stream", PARTIAL_AT_END, ("", "answer: <th")),
    ],
    "transformers-qwen3": [
        ("stream", TWO_BLOCKS, ("abc", "r1r2")),
        # parse_response keeps the last region of each field.
        ("whole", (TWO_BLOCKS[0], None), ("c", "r2")),
        ("stream", SPLIT_CLOSE, ("Final", "abc")),
    ],
    "transformers-qwen3.5": [
        ("stream", ORPHAN, ("answer", "...done")),
        ("stream", ("<think>abc",), ("", "<think>abc")),
    ],
    "litellm-ollama-generate": [
        # A chunk with both tags: only <think> is seen (`elif`), and the answer stays in the
        # reasoning for the rest of the stream.
        ("stream", ("<think>a</think>b", "c"), ("", "a</think>bc")),
        ("stream", SPLIT_CLOSE, ("", "abc</think>Final")),
        ("whole", ("<think>abc</think>Final", None), ("Final", "abc")),
        ("whole", ("pre<think>a</think>b", None), ("pre<think>a</think>b", "")),
    ],
    "vercel-ai": [
        ("stream", SPLIT_CLOSE, ("Final", "abc")),
        # No flush(): a partial tag held at the end is lost (vercel/ai#15583).
        ("stream", PARTIAL_AT_END, ("answer: ", "")),
        ("stream", ORPHAN, ("...done</think>answer", "")),
        # generate: the regular expression needs a closing tag.
        ("whole", ("<think>abc", None), ("<think>abc", "")),
    ],
    "vercel-ai-start-with-reasoning": [
        ("stream", ORPHAN, ("answer", "...done")),
        ("stream", ("plain text",), ("", "plain text")),
    ],
    # LangChain's Python chat models pass content through: tags are the answer's text.
    "langchain-openai": [
        ("stream", SPLIT_CLOSE, ("<think>abc</think>Final", "")),
        # ChatOpenAI drops reasoning_content (langchain-ai/langchain#35059).
        ("whole", ("x", "plan"), ("x", "")),
    ],
    "langchain-deepseek": [
        ("stream", SPLIT_CLOSE, ("<think>abc</think>Final", "")),
        ("whole", ("<think>a</think>b", "plan"), ("<think>a</think>b", "plan")),
    ],
    "langchain-ollama": [
        ("stream", ORPHAN, ("...done</think>answer", "")),
        # thinking is kept only with reasoning=True.
        ("whole", ("x", "plan"), ("x", "")),
    ],
    "langchain-ollama-reasoning": [
        ("stream", SPLIT_CLOSE, ("<think>abc</think>Final", "")),
        ("whole", ("x", "plan"), ("x", "plan")),
    ],
    "langchain-js-openai": [
        ("stream", SPLIT_CLOSE, ("<think>abc</think>Final", "")),
        ("whole", ("x", "plan"), ("x", "plan")),
    ],
    # ChatDeepSeek's stream parses <think> tags; its invoke does not.
    "langchain-js-deepseek": [
        ("stream", SPLIT_CLOSE, ("Final", "abc")),
        ("whole", ("<think>a</think>b", None), ("<think>a</think>b", "")),
    ],
    "langchain-js-ollama": [
        ("stream", SPLIT_CLOSE, ("<think>abc</think>Final", "")),
        ("whole", ("x", "plan"), ("x", "plan")),
    ],
    # llama.cpp: one optional block right after the generation prompt (PEG parser).
    "llamacpp-deepseek-r1": [
        # The template's generation prompt ends in "<think>\n": its newline starts the reasoning,
        # and the model's own <think> stays in it.
        ("stream", ORPHAN, ("answer", "\n...done")),
        ("stream", SPLIT_CLOSE, ("Final", "\n<think>abc")),
        ("whole", (TWO_BLOCKS[0], None), ("b<think>r2</think>c", "\na<think>r1")),
    ],
    "llamacpp-qwen3": [
        ("stream", SPLIT_CLOSE, ("Final", "abc")),
        ("stream", ORPHAN, ("...done</think>answer", "")),
        ("stream", TWO_BLOCKS, (TWO_BLOCKS[0], "")),
        # Lenient parses: a lone prefix of the open tag is taken as the tag, even at the end.
        ("whole", ("<", None), ("", "")),
    ],
    "llamacpp-glm4.6": [
        ("stream", SPLIT_CLOSE, ("Final", "abc")),
        ("whole", ("<think>abc", None), ("", "abc")),
    ],
    "llamacpp-magistral": [
        ("stream", ("[THINK]abc[/TH", "INK]Final"), ("Final", "abc")),
        ("stream", SPLIT_CLOSE, ("".join(SPLIT_CLOSE), "")),
    ],
    # -- agent frameworks and small splitters
    # Field mappers: tags are the content's, native reasoning is thinking.
    "openai-agents": [
        ("stream", ("<think>", "abc", "</think>", "Final"), ("<think>abc</think>Final", "")),
        ("whole", ("<think>abc</think>Final", None), ("<think>abc</think>Final", "")),
    ],
    "llama-index-ollama": [
        ("stream", SPLIT_CLOSE, ("<think>abc</think>Final", "")),
        ("whole", ("<think>abc</think>Final", None), ("<think>abc</think>Final", "")),
    ],
    # Answer-only: the body of a block is removed and kept nowhere.
    "aider": [
        ("stream", SPLIT_CLOSE, ("Final", "")),
        ("whole", (ORPHAN[0], None), ("answer", "")),
        ("whole", (TWO_BLOCKS[0], None), ("abc", "")),
    ],
    "hermes-agent": [
        ("stream", SPLIT_CLOSE, ("Final", "")),
        # A close tag with no open one is dropped, the text before it kept.
        ("stream", ORPHAN, ("...doneanswer", "")),
        # An open tag mid-line is not a block boundary.
        ("stream", SECOND_BLOCK, ("abd", "")),
    ],
    # The split of the whole reply (parse_r1_content): first <think> to first </think>.
    "autogen-r1": [
        ("stream", SPLIT_CLOSE, ("Final", "abc")),
        ("stream", ORPHAN, (ORPHAN[0], "")),
        # Text before the block is dropped; a second block stays in the content.
        ("stream", TWO_BLOCKS, ("b<think>r2</think>c", "r1")),
        # Both sides stripped of blanks.
        ("whole", (" <think> abc </think>\n\nFinal ", None), ("Final", "abc")),
        # With reasoning_content present the content is not parsed.
        ("whole", ("<think>a</think>b", "R"), ("<think>a</think>b", "R")),
    ],
}


def available(candidate: Adapter) -> Adapter:
    reason = candidate.unavailable()
    if reason is not None:
        pytest.skip(reason)
    return candidate


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(a.label, marks=[pytest.mark.slow] if slow_to_import(a.spec) else [])
        for a in ADAPTERS
    ],
)
def live(request: pytest.FixtureRequest) -> Iterator[tuple[Adapter, Connection]]:
    """One connection per adapter for the module: every request starts from fresh state."""
    candidate = available(adapter(request.param))
    connection = connect(parse_impl(f"{candidate.label}={candidate.spec}"), timeout=30)
    yield candidate, connection
    connection.close()


def expected_version(candidate: Adapter) -> str:
    if candidate.language == "typescript":
        package = NODE_DIR / "node_modules" / candidate.npm_package / "package.json"
        return json.loads(package.read_text())["version"]
    if candidate.language == "c++":
        return llamacpp_program.VERSION  # the llama-cpp-python release that vendors llama.cpp
    return installed_version(*DISTRIBUTIONS[candidate.label])


def test_every_adapter_has_known_behaviour_and_a_version_source() -> None:
    labels = {a.label for a in ADAPTERS}
    # An engine's family variants are checked by their locks (the slow tier) and their
    # declared profiles (test_engine_families.py); a few keep hand-written behaviour here.
    families = {v.label for v in VARIANTS}
    assert labels - families <= set(KNOWN) <= labels
    assert set(DISTRIBUTIONS) == {a.label for a in ADAPTERS if a.language == "python"}
    assert len(labels) >= 8
    assert {a.language for a in ADAPTERS} == {"python", "typescript", "c++"}


def test_adapter_reports_the_installed_version(live: tuple[Adapter, Connection]) -> None:
    candidate, connection = live
    version = expected_version(candidate)
    assert version != "not installed"
    assert connection.info.version == version
    assert connection.info.label == candidate.label


def test_adapter_shows_the_library_behaviour(live: tuple[Adapter, Connection]) -> None:
    candidate, connection = live
    requests = []
    if candidate.label not in KNOWN:
        pytest.skip("an engine family variant: its lock shows its behaviour")
    for kind, given, _ in KNOWN[candidate.label]:
        if kind == "stream":
            requests.append(StreamRequest(tuple(Chunk(text) for text in given)))
        else:
            requests.append(WholeRequest(*given))
    replies = connection.send(requests)
    for (kind, given, want), reply in zip(KNOWN[candidate.label], replies, strict=True):
        assert isinstance(reply, Ok), (given, reply)
        if kind == "stream":
            assert reply.deltas is not None and len(reply.deltas) == len(given) + 1
            got = tuple("".join(d[c] for d in reply.deltas) for c in ("assistant", "thinking"))
        else:
            assert reply.channels is not None
            got = (reply.channels["assistant"], reply.channels["thinking"])
        assert got == want, (kind, given)


def test_native_reasoning_reaches_the_thinking_channel(live: tuple[Adapter, Connection]) -> None:
    candidate, connection = live
    [reply] = connection.send([StreamRequest((Chunk(None, "plan"), Chunk("Answer")))])
    assert reply.deltas is not None
    thinking = "".join(d["thinking"] for d in reply.deltas)
    if candidate.label in CHANGES_NATIVE:
        assert thinking == CHANGES_NATIVE[candidate.label]
        return
    assert ("plan" in thinking) is (candidate.label not in DROPS_NATIVE)


def test_an_unknown_adapter_is_named_with_the_known_ones() -> None:
    with pytest.raises(KeyError, match="vercel-ai"):
        adapter("nope")


def test_an_adapter_without_its_library_says_how_to_install_it() -> None:
    missing = Adapter(
        "x",
        "python:not_installed_module:X",
        "Nothing",
        "pip install nothing",
        module="not_installed_module",
    )
    reason = missing.unavailable()
    assert (
        reason is not None and "pip install nothing" in reason and "ModuleNotFoundError" in reason
    )


#: A client driven through HTTP costs 10 to 100 times an in-process parser per stream: its lock
#: is checked here on a fixed share of the corpus (every check of each case chosen), and on all
#: of it by `conformance matrix` (docs/ci.md), which keeps CI within its time.
HTTP_SHARE = 4


def judged_cases(candidate: Adapter) -> list[Case]:
    cases = bundled_corpus().cases
    if not candidate.over_http:
        return list(cases)
    return [case for case in cases if zlib.crc32(case.id.encode()) % HTTP_SHARE == 0]


def test_an_http_client_is_judged_on_a_fixed_share_of_every_category() -> None:
    client = next(a for a in ADAPTERS if a.over_http)
    chosen = judged_cases(client)
    everything = bundled_corpus().cases
    assert len(everything) / 6 < len(chosen) < len(everything) / 2
    assert chosen == judged_cases(client)
    assert {c.category for c in chosen} == {c.category for c in everything}


@pytest.mark.slow
def test_adapter_behaves_as_its_expectation_file_says(live: tuple[Adapter, Connection]) -> None:
    """The whole corpus with the adapter's expected failures: green while the library and the
    corpus stay as they were. A FAIL is a regression, an XPASS a fix: after review, run
    `conformance matrix --update-expectations` (docs/ecosystem.md)."""
    candidate, connection = live
    expected = load_expected_failures(EXPECTATIONS_DIR / f"{candidate.label}.yaml")
    run = run_implementation(connection, judged_cases(candidate), expected_failures=expected)
    surprises = sorted(
        f"{r.case} {r.check} {r.verdict.value}" for r in run.results if not r.verdict.ok
    )
    assert not surprises, (
        f"{len(surprises)} results differ from {candidate.label}.yaml: {surprises[:10]}"
    )
