"""Write `tests/reply/recorded/divergences.json`: the vectors where clawcell differs on purpose.

Run after `record_rich_output.py` (no oracle needed). Every recorded vector whose clawcell
answer differs from the original's is matched against the deliberate divergences listed in
`docs/divergences.md`; a matching vector is written with its reason and clawcell's answer (which
`tests/reply/test_recorded.py` then asserts). A difference no rule explains is printed and left
out, so the test fails on it until clawcell is fixed or a divergence is decided and documented.

    .venv/bin/python scripts/oracle/classify_divergences.py
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# The path above makes the checkout's `tests` importable.
from tests.reply.test_recorded import VECTORS, expected_of, outcome_of, python_value  # noqa: E402

from clawcell import reply  # noqa: E402
from clawcell.reply._urls import allowed_remote_media_href  # noqa: E402

Json = Any
_OUT = ROOT / "tests" / "reply" / "recorded" / "divergences.json"
_MEDIA_FUNCTIONS = {
    "splitMediaFromOutput", "parseReplyDirectives", "isValidMedia",
    "splitUnquotedMediaDirectiveParts",
}  # fmt: skip
_CONTROL = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)|\r\n(?=\S)")
_DANGEROUS = re.compile(r"javascript|vbscript|data:|&#|&colon|&tab|\\u000|[\x00-\x1f]", re.I)


def _text(vector: Json) -> str:
    return json.dumps(vector["args"], ensure_ascii=False)


def _orig(vector: Json) -> Json:
    outcome = vector["outcome"]
    return python_value(outcome["result"]) if outcome["ok"] else None


def _media_urls(value: Json) -> list[str]:
    if not isinstance(value, dict):
        return []
    return list(cast(dict[str, list[str]], value).get("mediaUrls", []))


def _dangerous_embed(vector: Json, ours: Json) -> bool:
    if vector["fn"] != "extractCanvasShortcodes":
        return False
    return bool(_DANGEROUS.search(_text(vector)))


def _control_in_media(vector: Json, ours: Json) -> bool:
    raw = json.loads(_text(vector))
    first = raw[0] if isinstance(raw[0], str) else ""
    return vector["fn"] in _MEDIA_FUNCTIONS and bool(_CONTROL.search(first))


def _protocol_relative(vector: Json, ours: Json) -> bool:
    urls = _media_urls(_orig(vector))
    if vector["fn"] == "isValidMedia":
        return vector["args"][0].startswith("//")
    return any(url.startswith("//") for url in urls)


def _file_url(vector: Json, ours: Json) -> bool:
    urls = _media_urls(_orig(vector))
    if vector["fn"] == "isValidMedia":
        urls = [vector["args"][0]]
    return any(re.match(r"file:", url, re.I) or "%2e" in url.lower() for url in urls) or (
        vector["fn"] == "parseReplyDirectives" and "file:" in _text(vector).lower()
    )


def _serialised(vector: Json, ours: Json) -> bool:
    urls = _media_urls(_orig(vector))
    hrefs = [_href(u) for u in urls]
    return bool(urls) and hrefs != urls and hrefs == _media_urls(ours)


def _href(url: str) -> str:
    return allowed_remote_media_href(url) or url


def _parts(vector: Json, ours: Json) -> bool:
    return vector["fn"] in {"parseInlineDirectiveParts", "stripInlineDirectivePartsForDelivery"}


def _idempotent(vector: Json, ours: Json) -> bool:
    strip = {
        "stripInlineDirectiveTagsForDelivery": reply.strip_inline_directive_tags_for_delivery,
        "stripInlineDirectiveTagsForDisplay": reply.strip_inline_directive_tags_for_display,
    }.get(vector["fn"])
    orig = _orig(vector)
    if strip is None or not isinstance(orig, dict) or "text" not in orig:
        return False
    text = cast(dict[str, str], orig)["text"]
    return strip(text)["text"] == ours["text"]


def _undefined_text(vector: Json, ours: Json) -> bool:
    return vector["args"] == [{"$undefined": True}] and ours == {"text": "", "changed": False}


RULES: list[tuple[str, Callable[[Json, Json], bool]]] = [
    ("dangerous-embed-url", _dangerous_embed),
    ("control-characters-in-media", _control_in_media),
    ("protocol-relative-media", _protocol_relative),
    ("file-url-host-or-dot-segments", _file_url),
    ("whatwg-serialised-url", _serialised),
    ("independent-parts", _parts),
    ("idempotent-stripping", _idempotent),
    ("undefined-text-is-empty", _undefined_text),
]


def _original(vector: Json) -> Json:
    outcome = vector["outcome"]
    if not outcome["ok"]:
        return {"raises": "TypeError"}
    if "sha256" in outcome:
        return {"sha256": outcome["sha256"]}
    return python_value(outcome["result"])


def main() -> int:
    divergences_in_file: dict[str, Json] = json.loads(_OUT.read_text(encoding="utf-8"))["vectors"]
    divergences: dict[str, Json] = {}
    counts: Counter[str] = Counter()
    unexplained = 0
    for vector in VECTORS:
        ours = outcome_of(vector)
        divergence = divergences_in_file.get(vector["id"])
        expected = expected_of(vector) if divergence is None else _original(vector)
        if ours == expected:
            continue
        reason = next((name for name, rule in RULES if rule(vector, ours)), None)
        if reason is None:
            unexplained += 1
            print(f"unexplained {vector['id']} {vector['fn']}: {_text(vector)[:160]}")
            continue
        counts[reason] += 1
        divergences[vector["id"]] = {"reason": reason, "clawcell": ours}
    document = {
        "about": "Recorded vectors where clawcell differs on purpose; see docs/divergences.md.",
        "counts": dict(sorted(counts.items())),
        "vectors": dict(sorted(divergences.items())),
    }
    _OUT.write_text(json.dumps(document, indent=0) + "\n", encoding="utf-8")
    print(json.dumps(document["counts"]), f"unexplained={unexplained}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
