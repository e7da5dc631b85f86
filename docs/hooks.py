"""The MkDocs hook of the site (mkdocs.yml): the repository's Markdown, linked as on GitHub.

Every page is written to be read on GitHub, its relative links relative to the file in the
repository (`docs/PROTOCOL.md` from README.md, `../SPEC.md` from docs/). The site is the same
pages, so this hook

- adds the pages that live outside docs/ (TOP_PAGES: README.md as the home page, SPEC.md,
  ARCHITECTURE.md, tests/README.md);
- rewrites each relative link to what it points at in the site: a page of the site becomes a
  link to that page, anchor kept, which MkDocs then checks (`validation:` in mkdocs.yml); any
  other file or directory of the repository (a schema, a module, `cases/`) becomes a link to
  it in the repository at `repo_url` when mkdocs.yml sets one, and plain text when it does
  not. A link to something the repository does not hold is a warning, an error under
  `mkdocs build --strict`.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File, Files

log = get_plugin_logger("repository")

ROOT = Path(__file__).resolve().parent.parent
#: Pages from outside docs/: the file in the repository, and where the site serves it.
TOP_PAGES = {
    "README.md": "index.md",
    "SPEC.md": "SPEC.md",
    "ARCHITECTURE.md": "ARCHITECTURE.md",
    "tests/README.md": "tests.md",
}
#: An inline link or image, `[text](target)` or `[text](target "title")`.
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*([^)\s]+)((?:\s+\"[^\"]*\")?)\s*\)")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def repository_paths(files: Files) -> dict[str, str]:
    """The path in the repository of each page of the site, from the page's URI."""
    pages = {uri: repo for repo, uri in TOP_PAGES.items()}
    for file in files.documentation_pages():
        pages.setdefault(file.src_uri, f"docs/{file.src_uri}")
    return pages


def on_files(files: Files, config: Any) -> Files:
    for repo, uri in TOP_PAGES.items():
        if files.get_file_from_path(uri) is not None:
            log.warning(f"docs/{uri} is in the way of {repo}, which the site serves as {uri}")
            continue
        files.append(File.generated(config, uri, abs_src_path=str(ROOT / repo)))
    return files


def exists_exactly(path: str) -> bool:
    """Whether the repository holds `path`, each name with the same case."""
    here = ROOT
    for part in path.split("/"):
        if part and (not here.is_dir() or part not in os.listdir(here)):
            return False
        here = here / part
    return True


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    pages = repository_paths(files)
    sites = {repo: uri for uri, repo in pages.items()}
    source = pages.get(page.file.src_uri, f"docs/{page.file.src_uri}")
    here = posixpath.dirname(page.file.src_uri)

    def rewrite(match: re.Match[str]) -> str:
        bang, text, target, title = match.groups()
        if re.match(r"^(?:[a-z][a-z0-9+.-]*:|#|/)", target, re.IGNORECASE):
            return match.group(0)
        path, hash_, anchor = target.partition("#")
        repo = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
        if repo in sites:
            link = posixpath.relpath(sites[repo], here or ".") + hash_ + anchor
            return f"{bang}[{text}]({link}{title})"
        if repo.startswith("../") or not exists_exactly(repo):
            log.warning(f"{source}: link to '{target}': the repository has no '{repo}'")
            return match.group(0)
        repo_url = config.get("repo_url")
        if not repo_url:
            return text
        kind = "tree" if (ROOT / repo).is_dir() else "blob"
        return f"{bang}[{text}]({repo_url.rstrip('/')}/{kind}/HEAD/{repo}{title})"

    out, block, fence = [], [], None
    for line in markdown.splitlines(keepends=True):
        marker = FENCE.match(line)
        if marker and (fence is None or marker.group(1).startswith(fence)):
            if fence is None:
                out.append(LINK.sub(rewrite, "".join(block)))
                block = []
            fence = None if fence else marker.group(1)
            out.append(line)
        elif fence:
            out.append(line)
        else:
            block.append(line)
    out.append(LINK.sub(rewrite, "".join(block)))
    return "".join(out)
