"""The web family: `web_fetch` (fetch, decode, extract, cache) and `web_search` (its providers).

Internals of `clawcell.tools`; the public names are re-exported there."""
