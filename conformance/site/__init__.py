"""Layer 8 (applications): the results site, static pages built from a results store
(`conformance site`): the index of implementations by category and level with filters kept
in the URL, a page per implementation (options, results by category, history charts, known
divergences, badges), per case, the changes between runs, and a JSON index (`build`, from
`model`'s entries and shares, `pages`' contents and `charts`' geometry; `templates/` and
one stylesheet draw them)."""
