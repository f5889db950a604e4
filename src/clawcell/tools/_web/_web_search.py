"""The `web_search` tool: pluggable providers behind one normalized result union."""

from __future__ import annotations

from typing import Any, Final, Literal, NotRequired, Protocol, TypedDict, cast

from ...catalog import Tool
from .._schema import array, integer, literal, obj, string

__all__ = [
    "SEARCH_OUTPUT",
    "SearchOutcome",
    "SearchProvider",
    "SearchResult",
    "outcome",
    "web_search_tool",
]

MAX_COUNT: Final = 20


class SearchResult(TypedDict):
    """One normalized hit."""

    title: str
    url: str
    snippet: str
    published: NotRequired[str]


class SearchOutcome(TypedDict):
    """What a provider answers: `kind` picks which of `results`, `answer`, `error`, `raw` is set."""

    kind: Literal["results", "answer", "error", "raw"]
    provider: str
    query: str
    results: NotRequired[list[SearchResult]]
    answer: NotRequired[str]
    error: NotRequired[str]
    raw: NotRequired[Any]


class SearchProvider(Protocol):
    """A search backend (`SearxngProvider`, `BraveProvider`, or your own)."""

    @property
    def name(self) -> str:
        """The provider name reported in every outcome (`"searxng"`, `"brave"`)."""
        ...

    async def search(self, query: str, count: int) -> SearchOutcome:
        """At most `count` results for `query`; failures are `kind: "error"` outcomes."""
        ...


def outcome(provider: str, query: str, kind: str, **fields: Any) -> SearchOutcome:
    """A `SearchOutcome` of the given kind."""
    return cast(SearchOutcome, {"kind": kind, "provider": provider, "query": query, **fields})


_RESULT = obj({"title": string(), "url": string(), "snippet": string()}, {"published": string()})
_HEAD = {"provider": string(), "query": string()}
SEARCH_OUTPUT: Final = {
    "anyOf": [
        obj({"kind": literal("results"), **_HEAD, "results": array(_RESULT)}),
        obj({"kind": literal("answer"), **_HEAD, "answer": string(), "results": array(_RESULT)}),
        obj({"kind": literal("error"), **_HEAD, "error": string()}),
        obj({"kind": literal("raw"), **_HEAD, "raw": {}}),
    ]
}
_SEARCH_INPUT = obj(
    {"query": string("What to search for.", minLength=1)},
    {"count": integer("Most results (default 5).", minimum=1, maximum=MAX_COUNT)},
)
_DESCRIPTION = (
    "Search the web. Returns `{kind: 'results', results: [{title, url, snippet, published?}]}`, "
    "`{kind: 'answer', answer, results}` when the engine has a direct answer, `{kind: 'error', "
    "error}` when the provider failed, or `{kind: 'raw', raw}` for an answer it could not "
    "normalize. Results are untrusted web content; fetch a URL with `web_fetch`."
)


def web_search_tool(provider: SearchProvider) -> Tool:
    """The `web_search` tool over `provider` (network content: the run becomes untrusted)."""

    async def execute(params: dict[str, Any]) -> SearchOutcome:
        count = min(int(params.get("count", 5)), MAX_COUNT)
        return await provider.search(str(params["query"]), count)

    return Tool(
        name="web_search",
        description=_DESCRIPTION,
        parameters=_SEARCH_INPUT,
        output_schema=SEARCH_OUTPUT,
        execute=execute,
        replay_safe=True,
        network=True,
    )
