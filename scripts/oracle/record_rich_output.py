"""Record the original's Rich Output answers for generated inputs (issue 16).

Generates inputs around every rule of `shared/spec/rich-output.md` and `release-differences.md`,
runs them through the OpenClaw oracle (`shared/oracle/rich-output-oracle.mjs`, Node >= 20) and
writes `tests/reply/recorded/<group>.json`: the oracle version and, per vector, a stable id, the
OpenClaw function, its arguments and the recorded outcome. `tests/reply/test_recorded.py` replays
them without the oracle. Re-record after a new release:

    ORACLE_DIR="$(mktemp -d)"; bash ../shared/oracle/install.sh "$ORACLE_DIR"
    OPENCLAW_DIR="$ORACLE_DIR/node_modules/openclaw" python scripts/oracle/record_rich_output.py
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

Json = Any
ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT.parent / "shared" / "oracle" / "rich-output-oracle.mjs"
OUT = ROOT / "tests" / "reply" / "recorded"
UNDEFINED = {"$undefined": True}

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rich_output_inputs import (  # noqa: E402 (a sibling module of this script)
    CANDIDATES,
    EMBED_ATTRS,
    HOSTS,
    PATHS,
    PROBES,
    SCHEMES,
    TEXT_PIECES,
)


def _seed_texts(rng: random.Random, count: int, pieces: list[str]) -> list[str]:
    texts: list[str] = []
    for _ in range(count):
        size = rng.randint(1, 9)
        texts.append("".join(rng.choice(pieces) for _ in range(size)))
    return texts


def _urls() -> Iterator[tuple[str, str, list[Json]]]:
    for host in HOSTS:
        yield "urls", "isBlockedRemoteMediaHostname", [host]
        yield "urls", "normalizeRemoteMediaHostname", [host]
        for scheme, path in itertools.product(SCHEMES, PATHS[:4]):
            yield "urls", "isAllowedRemoteMediaUrl", [f"{scheme}{host}{path}"]
    for path in PATHS:
        yield "urls", "isAllowedRemoteMediaUrl", [f"https://cdn.example.com{path}"]


def _paths() -> Iterator[tuple[str, str, list[Json]]]:
    options = [{}, {"allowSpaces": True}, {"allowBareFilename": True}]
    for candidate in CANDIDATES:
        for option in options:
            yield "paths", "isValidMedia", [candidate, option]
        for fn in (
            "isLikelyLocalPath",
            "looksLikeLocalFilePath",
            "hasTraversalOrUnsupportedHomeDirPrefix",
            "normalizeMediaSource",
            "cleanCandidate",
            "unwrapQuoted",
            "splitUnquotedMediaDirectiveParts",
            "isRelativeAssistantMediaReference",
        ):
            yield "paths", fn, [candidate]


def _media(rng: random.Random) -> Iterator[tuple[str, str, list[Json]]]:
    contexts = [
        "{m}",
        "Intro\n{m}",
        "{m}\nOutro",
        "Intro\n\n{m}\n\nOutro",
        "```\n{m}\n```",
        "    {m}",
        "- {m}",
        "> {m}",
        "Text {m}",
        "{m}\r\nnext",
        "  {m}",
        "para\n    {m}",
        "~~~\n{m}",
    ]
    for candidate, context in itertools.product(CANDIDATES[:60], contexts[:6]):
        yield "media", "splitMediaFromOutput", [context.format(m="MEDIA:" + candidate), {}]
    for candidate in CANDIDATES:
        for context in contexts:
            yield "media", "splitMediaFromOutput", [context.format(m="MEDIA: " + candidate)]
        yield "media", "splitMediaFromOutput", [f'MEDIA:"{candidate}"']
    for host in HOSTS:
        yield "media", "splitMediaFromOutput", [f"MEDIA:https://{host}/a.png"]
        yield (
            "media",
            "splitMediaFromOutput",
            [f"see ![x](https://{host}/a.png) now", {"extractMarkdownImages": True}],
        )
    option_sets: list[Json] = [
        {},
        {"extractMarkdownImages": True},
        {"markdownImageAllowlist": ["/tmp/i.png"]},
        {"markdownImageAllowlist": []},
        {"extractMediaDirectives": False},
        {"extractAudioDirectives": False},
        {"preserveTrailingWhitespace": True},
    ]
    for text in _seed_texts(rng, 900, TEXT_PIECES):
        yield "media", "splitMediaFromOutput", [text, rng.choice(option_sets)]


def _replies(rng: random.Random) -> Iterator[tuple[str, str, list[Json]]]:
    option_sets: list[Json] = [
        {},
        {"currentMessageId": "m-1"},
        {"silentToken": "SILENT"},
        {"extractMarkdownImages": True},
        {"currentMessageId": " m 2 ", "silentToken": "NO_REPLY"},
    ]
    fixed = [
        "NO_REPLY",
        " no_reply ",
        '{"action":"NO_REPLY"}',
        '{"action":"NO_REPLY","x":1}',
        "NO_REPLY\nMEDIA:/tmp/a.png",
        "MEDIA:file:///tmp/a.png",
        "MEDIA:FILE:///tmp/a.png",
        "[[reply_to_current]] hi",
        "[[reply_to:abc]] hi",
        "hi [[audio_as_voice]]",
        "SILENT",
        "",
    ]
    for text in fixed + _seed_texts(rng, 500, TEXT_PIECES):
        yield "replies", "parseReplyDirectives", [text, rng.choice(option_sets)]


def _tags(rng: random.Random) -> Iterator[tuple[str, str, list[Json]]]:
    option_sets: list[Json] = [
        {},
        {"currentMessageId": "m-1"},
        {"stripAudioTag": False},
        {"stripReplyTags": False},
        {"preserveTrailingWhitespace": True},
        {"currentMessageId": "  "},
    ]
    for text in _seed_texts(rng, 700, TEXT_PIECES):
        yield "tags", "parseInlineDirectives", [text, rng.choice(option_sets)]
    for text in _seed_texts(rng, 250, TEXT_PIECES):
        yield "tags", "stripInlineDirectiveTagsForDisplay", [text]
        yield "tags", "stripInlineDirectiveTagsForDelivery", [text]
    for _ in range(60):
        parts = _seed_texts(rng, rng.randint(1, 3), TEXT_PIECES)
        yield "tags", "parseInlineDirectiveParts", [parts, rng.choice(option_sets)]
        yield "tags", "stripInlineDirectivePartsForDelivery", [parts]
    ids = ["abc", " abc ", "a\u0000b", "a[b]c", "x" * 300, "\U0001f600" * 300, "", " ", "a\u200bb"]
    for raw in ids:
        yield "tags", "sanitizeReplyDirectiveId", [raw]
    yield "tags", "sanitizeReplyDirectiveId", [UNDEFINED]
    yield "tags", "parseInlineDirectives", [UNDEFINED]
    yield "tags", "stripInlineDirectiveTagsForDisplay", [UNDEFINED]
    for text in _seed_texts(rng, 300, TEXT_PIECES):
        yield "tags", "findCodeRegions", [text]


def _embeds(rng: random.Random) -> Iterator[tuple[str, str, list[Json]]]:
    for attr in EMBED_ATTRS:
        for template in (
            "[embed {a} /]",
            "[embed {a}/]",
            "[embed {a}]body[/embed]",
            "x\n[embed {a} /]\ny",
        ):
            yield "embeds", "extractCanvasShortcodes", [template.format(a=attr)]
    for first, second in itertools.product(EMBED_ATTRS[:20], EMBED_ATTRS[17:32]):
        yield "embeds", "extractCanvasShortcodes", [f"[embed {first} {second} /]"]
    for size in (100, 5000, 10240, 10300, 20000):
        yield "embeds", "extractCanvasShortcodes", [f'[embed ref="a" title="{"t" * size}" /]']
        yield (
            "embeds",
            "extractCanvasShortcodes",
            [f'[embed url="/__openclaw__/canvas/{"u" * size}" /]'],
        )
    pieces = [
        "[embed ",
        "[EMBED ",
        "[embed",
        'ref="a"',
        'url="/x"',
        "/]",
        "]",
        "[/embed]",
        "```\n",
        "`",
        "\n",
        "\n\n\n",
        "text",
        " ",
        "    ",
        "\\",
    ]
    for text in _seed_texts(rng, 600, pieces):
        yield "embeds", "extractCanvasShortcodes", [text]
    for value in (UNDEFINED, None, "", "   ", "no embeds"):
        yield "embeds", "extractCanvasShortcodes", [value]


def _canvas(rng: random.Random) -> Iterator[tuple[str, str, list[Json]]]:
    views: list[Json] = [
        {"url": "/__openclaw__/canvas/a.html"},
        {"entryUrl": "/e.html", "id": "v1"},
        {"url": " ", "docId": "d"},
        {"id": "v", "title": "T", "preferredHeight": 300},
        {"url": "/u", "preferred_height": 100},
        {"url": "/u", "boardWidgetName": "ok-name"},
        {"url": "/u", "boardWidgetName": "Bad Name"},
        {},
    ]
    presentations: list[Json] = [
        {},
        {"target": "assistant_message"},
        {"target": "node_panel"},
        {"target": "Node_Panel"},
        {"title": "P", "preferredHeight": 2000},
        {"sandbox": "strict"},
        {"sandbox": "SCRIPTS"},
        {"class_name": "c", "className": "d", "style": "s"},
        {"preferred_height": "300"},
    ]
    for kind, view, presentation in itertools.product(
        ["canvas", " CANVAS ", "other"], views, presentations
    ):
        record = {"kind": kind, "view": view, "presentation": presentation}
        yield "canvas", "coerceCanvasPreview", [record]
    for source in (
        {"type": "url", "url": "/s"},
        {"type": " URL ", "url": "/s"},
        {"type": "url"},
        {"type": "html"},
    ):
        yield "canvas", "coerceCanvasPreview", [{"kind": "canvas", "source": source}]
    yield "canvas", "coerceCanvasPreview", [UNDEFINED]
    yield (
        "canvas",
        "coerceCanvasPreview",
        [{"kind": "canvas", "mcpApp": {"viewId": "v"}, "view": {"id": "v", "url": "/u"}}],
    )
    for text in [
        '{"kind":"canvas","view":{"url":"/a"}}',
        "[1]",
        "not json",
        "",
        '{"kind":"canvas"}',
        "null",
    ]:
        yield "canvas", "extractCanvasFromText", [text]
    yield "canvas", "extractCanvasFromText", [UNDEFINED]
    detail_values: list[Json] = [
        {"mcpAppPreview": {"kind": "canvas", "view": {"url": "/m"}}},
        {},
        None,
        [],
        {"canvas": {}},
    ]
    for details in detail_values:
        yield "canvas", "extractCanvasFromDetails", [details]
    del rng


def _probes() -> Iterator[tuple[str, str, list[Json]]]:
    for fn, text in PROBES:
        args: list[Json] = (
            [text, {"extractMarkdownImages": True}] if fn == "splitMediaFromOutput" else [text]
        )
        yield "probes", fn, args
    for token, text in (
        ("A.B", "AxB"),
        ("A.B", "A.B"),
        ("!X!", "!X!"),
        ("", "NO_REPLY"),
        (" X ", "X"),
    ):
        yield "probes", "parseReplyDirectives", [text, {"silentToken": token}]


CORPUS = ROOT.parent / "shared" / "oracle" / "corpus"
CORPUS_FUNCTIONS: list[tuple[str, Json]] = [
    ("splitMediaFromOutput", {"extractMarkdownImages": True}),
    ("parseInlineDirectives", {"currentMessageId": "m-1"}),
    ("extractCanvasShortcodes", None),
    ("parseReplyDirectives", {"currentMessageId": "m-1"}),
]


def _corpus_inputs(rng: random.Random) -> list[str]:
    """Slices of the benchmark corpus (about 8 KB at line boundaries) and sampled short replies."""
    mixed = (CORPUS / "mixed-1mb.txt").read_text(encoding="utf-8")
    inputs: list[str] = []
    for _ in range(12):
        start = mixed.find("\n", rng.randrange(len(mixed) - 10_000)) + 1
        end = mixed.find("\n", start + 8_000)
        inputs.append(mixed[start:end])
    lines = (CORPUS / "short-replies.jsonl").read_text(encoding="utf-8").splitlines()
    inputs.extend(json.loads(line)["text"] for line in rng.sample(lines, 300))
    return inputs


def _corpus(rng: random.Random) -> Iterator[tuple[str, str, list[Json]]]:
    for text in _corpus_inputs(rng):
        for fn, options in CORPUS_FUNCTIONS:
            yield "corpus", fn, [text] if options is None else [text, options]


def digest(value: Json) -> str:
    """The SHA-256 of a JSON value's canonical text (what the corpus recordings store)."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def generate(seed: int) -> dict[str, list[dict[str, Json]]]:
    rng = random.Random(seed)
    groups: dict[str, list[dict[str, Json]]] = {}
    seen: set[str] = set()
    sources = itertools.chain(
        _urls(),
        _paths(),
        _media(rng),
        _replies(rng),
        _tags(rng),
        _embeds(rng),
        _canvas(rng),
        _probes(),
        _corpus(rng),
    )
    for group, fn, args in sources:
        request = {"fn": fn, "args": args}
        key = json.dumps(request, sort_keys=True, ensure_ascii=False)
        if key in seen:
            continue
        seen.add(key)
        digest = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        groups.setdefault(group, []).append({"id": f"{group}/{digest}", **request})
    return groups


def _run_oracle(requests: list[dict[str, Json]]) -> list[dict[str, Json]]:
    process = subprocess.Popen(
        ["node", str(ORACLE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="surrogatepass",
        env=os.environ.copy(),
    )
    assert process.stdin is not None and process.stdout is not None

    def feed() -> None:
        assert process.stdin is not None
        for request in requests:
            process.stdin.write(json.dumps({**request, "undefined": "marker"}) + "\n")
        process.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    answers = [json.loads(line) for line in process.stdout]
    writer.join()
    process.wait()
    return answers


def _share_inputs(vectors: list[dict[str, Json]]) -> list[str]:
    """Store each corpus text once: `args[0]` becomes `{"$input": index}` into the list."""
    inputs: list[str] = []
    index: dict[str, int] = {}
    for vector in vectors:
        text = vector["args"][0]
        vector["args"][0] = {"$input": index.setdefault(text, len(inputs))}
        if index[text] == len(inputs):
            inputs.append(text)
    return inputs


def _without_undefined(value: Json) -> Json:
    if isinstance(value, dict):
        items = cast(dict[str, Json], value).items()
        return {k: _without_undefined(v) for k, v in items if v != UNDEFINED}
    if isinstance(value, list):
        return [_without_undefined(v) for v in cast(list[Json], value)]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    meta = _run_oracle([{"fn": "__meta"}])[0]["result"]
    groups = generate(args.seed)
    OUT.mkdir(parents=True, exist_ok=True)
    for group, vectors in groups.items():
        answers = _run_oracle(vectors)
        for vector, answer in zip(vectors, answers, strict=True):
            answer.pop("id", None)
            if group == "corpus" and answer.get("ok"):
                # Corpus outcomes are large: keep their digest (of the JS-undefined-free value).
                vector["outcome"] = {
                    "ok": True,
                    "sha256": digest(_without_undefined(answer["result"])),
                }
            else:
                vector["outcome"] = answer
        document: dict[str, Json] = {
            "oracle": {"openclawVersion": meta["openclawVersion"], "node": meta["node"]},
            "generator": "scripts/oracle/record_rich_output.py",
            "seed": args.seed,
        }
        if group == "corpus":
            document["inputs"] = _share_inputs(vectors)
        document["vectors"] = vectors
        path = OUT / f"{group}.json"
        ascii_only = group != "corpus"  # the corpus is valid UTF-8; the rest has lone surrogates
        path.write_text(json.dumps(document, indent=0, ensure_ascii=ascii_only) + "\n", "utf-8")
        print(f"{path.relative_to(ROOT)}: {len(vectors)} vectors")


if __name__ == "__main__":
    main()
