"""Lexical tool search: exact lookup first, then BM25 over tool metadata (spec §3.4).

Documents are a tool's name, catalog id, label, description and, for trusted tools, parameter
names and descriptions. Text is split on non-alphanumerics and camelCase, lower-cased, stop
words are dropped and a light suffix stemmer folds plurals and verb forms (`tickets`,
`listing`, `listed` → `ticket`, `list`). The search is deliberately loose: any shared token
matches, so `zzzz_missing_tool` finds `failing_tool` through `tool`.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .._lazy import value_class
from ._json import as_mapping
from ._names import locale_key

if TYPE_CHECKING:
    from ._bindings import Binding
    from ._extension import SearchEntry

__all__ = [
    "MAX_QUERY_CHARS",
    "CatalogSearch",
    "SearchDocument",
    "SearchIndex",
    "catalog_documents",
    "parameter_text",
    "tokenize",
]

MAX_QUERY_CHARS: Final = 2048
K1: Final = 1.2
B: Final = 0.75
_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STOP_WORDS: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "this",
        "to",
        "with",
    ]
)
_PLURAL_ES: Final = ("sses", "xes", "ches", "shes", "zes")


def _stem(word: str) -> str:
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(_PLURAL_ES):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if word[-1] == word[-2] and word[-1] not in "aeiouyls":
                word = word[:-1]  # `shipping`, `planned` -> `ship`, `plan`
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def tokenize(text: str) -> list[str]:
    """Split, lower-case, drop stop words and stem; repeats are kept."""
    words = (match.group(0).lower() for match in _WORDS.finditer(text))
    return [_stem(word) for word in words if word not in _STOP_WORDS]


def parameter_text(schema: object, depth: int = 0) -> str:
    """Property names and descriptions of a parameter schema (4 levels deep)."""
    node = as_mapping(schema)
    if depth > 4 or node is None:
        return ""
    parts: list[str] = []
    if isinstance(node.get("description"), str):
        parts.append(str(node["description"]))
    properties = as_mapping(node.get("properties"))
    if properties is not None:
        for name, child in properties.items():
            parts.append(name)
            parts.append(parameter_text(child, depth + 1))
    if "items" in node:
        parts.append(parameter_text(node["items"], depth + 1))
    return " ".join(part for part in parts if part)


@value_class
class SearchDocument:
    """What one catalog entry contributes to the index."""

    key: str
    """The value returned for a hit (the callable name)."""
    catalog_id: str
    name: str
    label: str
    description: str
    parameters: str


class SearchIndex:
    """An inverted BM25 index built once per catalog."""

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self._documents = tuple(documents)
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._lengths: list[int] = []
        self._literal: list[str] = []
        self._exact: list[tuple[str, str]] = []
        self._id_keys: list[Any] = []
        for position, doc in enumerate(self._documents):
            text = " ".join(
                p
                for p in (doc.name, doc.catalog_id, doc.label, doc.description, doc.parameters)
                if p
            )
            counts: dict[str, int] = defaultdict(int)
            terms = tokenize(text)
            for term in terms:
                counts[term] += 1
            for term, count in counts.items():
                self._postings[term].append((position, count))
            self._lengths.append(len(terms))
            self._literal.append(f"{doc.name} {doc.label} {doc.description}".lower())
            self._exact.append((doc.name.lower(), doc.catalog_id.lower()))
            self._id_keys.append(locale_key(doc.catalog_id))
        total = sum(self._lengths)
        average = total / len(self._lengths) if self._lengths and total else 1.0
        self._norms = [K1 * (1 - B + B * length / average) for length in self._lengths]

    def rank(self, query: str, limit: int | None = None) -> list[str]:
        """Keys of matching documents, best first (at most `limit`).

        Ties go to exact-name matches, then documents containing the query literally, then the
        BM25 score, then the catalog id.
        """
        scores: dict[int, float] = defaultdict(float)
        count = len(self._documents)
        for term in dict.fromkeys(tokenize(query)):
            postings = self._postings.get(term, ())
            if not postings:
                continue
            idf = math.log(1 + (count - len(postings) + 0.5) / (len(postings) + 0.5))
            weight = idf * (K1 + 1)
            norms = self._norms
            for position, frequency in postings:
                scores[position] += weight * frequency / (frequency + norms[position])
        needle = query.strip().lower()

        def order(position: int) -> tuple[Any, ...]:
            exact = needle in self._exact[position]
            literal = bool(needle) and needle in self._literal[position]
            return (not exact, not literal, -scores[position], self._id_keys[position])

        if limit is None or limit >= len(scores):
            ordered = sorted(scores, key=order)
        else:
            ordered = heapq.nsmallest(limit, scores, key=order)
        return [self._documents[position].key for position in ordered]


class CatalogSearch:
    """`catalog.search`: an exact (then case-insensitive) key or name, else the BM25 ranking.

    Exact lookups try the documents in order, so the native tools, listed first, win.
    """

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self._documents = tuple(documents)
        self._index = SearchIndex(self._documents)

    def find(self, query: str, limit: int) -> list[str]:
        """Keys matching `query`, best first (at most `limit`). Only the first
        `MAX_QUERY_CHARS` characters are searched: the search runs on the event loop inside
        the cell's budget, and a 5 MB query would otherwise hold both for seconds."""
        query = query[:MAX_QUERY_CHARS]
        exact = self._exact(query.strip())
        return [exact] if exact is not None else self._index.rank(query, limit)

    def _exact(self, needle: str) -> str | None:
        for doc in self._documents:
            if needle in (doc.key, doc.name):
                return doc.key
        folded = needle.lower()
        for doc in self._documents:
            if folded in (doc.key.lower(), doc.name.lower()):
                return doc.key
        return None


def catalog_documents(
    bindings: Sequence[Binding], entries: Sequence[SearchEntry]
) -> list[SearchDocument]:
    """What a catalog's tools (parameters of trusted ones only) and extension entries index."""
    documents = [
        SearchDocument(
            key=binding.callable_name,
            catalog_id=binding.catalog_id,
            name=binding.tool.name,
            label=binding.tool.label or "",
            description=binding.tool.description,
            parameters=parameter_text(binding.tool.parameters) if binding.trusted else "",
        )
        for binding in bindings
    ]
    documents += (
        SearchDocument(
            key=entry.callable_name,
            catalog_id=entry.catalog_id,
            name=entry.name,
            label=entry.label,
            description=entry.description,
            parameters="",
        )
        for entry in entries
    )
    return documents
