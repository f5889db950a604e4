"""Every recorded Rich Output Protocol vector, run through `clawcell.reply`.

The vectors are copied verbatim from `../shared/conformance/rich-output/`. Each one names an
OpenClaw function; the adapters below call the matching snake_case function of `clawcell.reply`
with the vector's positional arguments (an options object becomes keyword arguments) and wrap
research results in the notation the data uses (`{"value": n}`, `{"payloads": [...]}` …).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from clawcell import reply

Json = Any
_DATA = Path(__file__).parent / "conformance"
_CAMEL = re.compile(r"(?<!^)([A-Z])")


def _snake(name: str) -> str:
    return _CAMEL.sub(r"_\1", name).lower()


def _undefined(value: Json) -> Json:
    return None if value == {"$undefined": True} else value


def _kwargs(options: Json) -> dict[str, Json]:
    if not isinstance(options, dict):
        return {}
    items = cast(dict[str, Json], options).items()
    return {_snake(key): _undefined(value) for key, value in items}


def _options(args: list[Json], index: int = 1) -> dict[str, Json]:
    return _kwargs(args[index]) if len(args) > index else {}


def _strings(function: Callable[[str], Json]) -> Callable[[list[Json], Json], Json]:
    return lambda args, _vector: function(args[0])


def _ipv4(args: list[Json], _vector: Json) -> Json:
    address = args[0]
    return {
        "blocked": reply.is_blocked_special_use_ipv4_address(address),
        "range": reply.ipv4_special_use_range(address),
    }


def _ipv6(args: list[Json], _vector: Json) -> Json:
    address = args[0]
    embedded = reply.extract_embedded_ipv4_from_ipv6(address)
    return {
        "blocked": reply.is_blocked_special_use_ipv6_address(address),
        "range": reply.ipv6_special_use_range(address),
        "embeddedIpv4": embedded,
        "embeddedIpv4Blocked": None
        if embedded is None
        else reply.is_blocked_special_use_ipv4_address(embedded),
    }


def _legacy(args: list[Json], _vector: Json) -> Json:
    return {
        "legacy": reply.is_legacy_ipv4_literal(args[0]),
        "canonicalDotted": reply.is_canonical_dotted_decimal_ipv4(args[0]),
    }


def _user_path(args: list[Json], vector: Json) -> Json:
    env = vector["env"]
    return {"path": reply.resolve_user_path(args[0], home=env["home"], cwd=env["cwd"])}


def _params(function: Callable[..., Json], key: str) -> Callable[[list[Json], Json], Json]:
    return lambda args, _vector: {key: function(**_kwargs(args[0]))}


ADAPTERS: dict[str, Callable[[list[Json], Json], Json]] = {
    "splitMediaFromOutput": lambda a, _v: reply.split_media_from_output(a[0], **_options(a)),
    "parseReplyDirectives": lambda a, _v: reply.parse_reply_directives(a[0], **_options(a)),
    "parseInlineDirectives": lambda a, _v: reply.parse_inline_directives(a[0], **_options(a)),
    "parseInlineDirectiveParts": lambda a, _v: reply.parse_inline_directive_parts(
        a[0], **_options(a)
    ),
    "stripInlineDirectiveTagsForDisplay": _strings(reply.strip_inline_directive_tags_for_display),
    "stripInlineDirectiveTagsForDelivery": _strings(reply.strip_inline_directive_tags_for_delivery),
    "stripInlineDirectivePartsForDelivery": _strings(
        reply.strip_inline_directive_parts_for_delivery
    ),
    "sanitizeReplyDirectiveId": _strings(reply.sanitize_reply_directive_id),
    "findCodeRegions": _strings(reply.find_code_regions),
    "isAllowedRemoteMediaUrl": _strings(reply.is_allowed_remote_media_url),
    "isBlockedRemoteMediaHostname": _strings(reply.is_blocked_remote_media_hostname),
    "normalizeRemoteMediaHostname": _strings(reply.normalize_remote_media_hostname),
    "isBlockedSpecialUseIpv4Address": _ipv4,
    "isBlockedSpecialUseIpv6Address": _ipv6,
    "extractEmbeddedIpv4FromIpv6": lambda a, _v: {
        "ipv4": reply.extract_embedded_ipv4_from_ipv6(a[0])
    },
    "isLegacyIpv4Literal": _legacy,
    "isValidMedia": lambda a, _v: reply.is_valid_media(a[0], **_options(a)),
    "isLikelyLocalPath": _strings(reply.is_likely_local_path),
    "looksLikeLocalFilePath": _strings(reply.looks_like_local_file_path),
    "hasTraversalOrUnsupportedHomeDirPrefix": _strings(
        reply.has_traversal_or_unsupported_home_dir_prefix
    ),
    "cleanCandidate": _strings(reply.clean_candidate),
    "normalizeMediaSource": _strings(reply.normalize_media_source),
    "unwrapQuoted": _strings(reply.unwrap_quoted),
    "splitUnquotedMediaDirectiveParts": _strings(reply.split_unquoted_media_directive_parts),
    "isRelativeAssistantMediaReference": _strings(reply.is_relative_assistant_media_reference),
    "extractCanvasShortcodes": _strings(reply.extract_canvas_shortcodes),
    "parseCanvasAttributes": lambda a, _v: {"attrs": reply.parse_canvas_attributes(a[0])},
    "defaultCanvasEntryUrl": lambda a, _v: {"url": reply.default_canvas_entry_url(a[0])},
    "previewFromShortcode": lambda a, _v: {"preview": reply.preview_from_shortcode(a[0])},
    "resolveCanvasIframeUrl": lambda a, _v: {
        "src": reply.resolve_canvas_iframe_url(
            a[0], _undefined(a[1]), allow_external_embed_urls=bool(a[2])
        )
    },
    "resolveEmbedSandbox": lambda a, _v: {
        "sandbox": reply.resolve_embed_sandbox(_undefined(a[0]), _undefined(a[1]))
    },
    "coerceCanvasPreview": _strings(reply.coerce_canvas_preview),
    "extractCanvasFromText": _strings(reply.extract_canvas_from_text),
    "extractCanvasFromDetails": _strings(reply.extract_canvas_from_details),
    "normalizePreferredHeight": lambda a, _v: {"value": reply.normalize_preferred_height(a[0])},
    "mergeAttemptToolMediaPayloads": _params(reply.merge_attempt_tool_media_payloads, "payloads"),
    "filterMessagingToolMediaDuplicates": _params(
        reply.filter_messaging_tool_media_duplicates, "payloads"
    ),
    "finalizeAfterBlockStreaming": _params(reply.finalize_after_block_streaming, "payloads"),
    "resolveUserPath": _user_path,
    "projectChatDisplayMessages": lambda a, _v: {
        "messages": reply.project_chat_display_messages(a[0], **_options(a))
    },
    "isSilentReplyText": lambda a, _v: {
        "silent": reply.is_silent_reply_text(a[0], _undefined(a[1]))
    },
    "stripHeartbeatToken": lambda a, _v: reply.strip_heartbeat_token(a[0], **_options(a)),
    "expandTextContent": _strings(reply.expand_text_content),
}


def matches(expected: Json, actual: Json, mode: str = "exact") -> bool:
    """The matcher of `../shared/conformance/README.md`, verbatim in behaviour."""
    if isinstance(expected, dict) and set(cast(dict[str, Json], expected)) == {"$regex"}:
        pattern = cast(str, expected["$regex"])
        return isinstance(actual, str) and re.fullmatch(pattern, actual, re.S) is not None
    if isinstance(expected, dict):
        exp = cast(dict[str, Json], expected)
        if not isinstance(actual, dict):
            return False
        act = cast(dict[str, Json], actual)
        if mode == "exact" and set(exp) != set(act):
            return False
        return all(k in act and matches(v, act[k], mode) for k, v in exp.items())
    if isinstance(expected, list):
        exp_list = cast(list[Json], expected)
        if not isinstance(actual, list):
            return False
        act_list = cast(list[Json], actual)
        return len(exp_list) == len(act_list) and all(
            matches(e, a, mode) for e, a in zip(exp_list, act_list, strict=True)
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return bool(expected == actual)


def _load() -> list[Json]:
    vectors: list[Json] = []
    for path in sorted(_DATA.glob("*.json")):
        vectors.extend(json.loads(path.read_text(encoding="utf-8")))
    return vectors


VECTORS = _load()


def _param(vector: Json) -> Any:
    return pytest.param(vector, id=vector["id"])


def _to_json(value: Json) -> Json:
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def test_the_copied_data_holds_all_568_vectors() -> None:
    assert len(VECTORS) == 568
    assert {vector["function"] for vector in VECTORS} <= set(ADAPTERS)


@pytest.mark.parametrize("vector", [_param(v) for v in VECTORS])
def test_vector(vector: Json) -> None:
    actual = _to_json(ADAPTERS[vector["function"]](vector["args"], vector))
    assert matches(vector["expected"], actual, vector["match"]), (
        f"{vector['id']}: {json.dumps(actual, ensure_ascii=False)[:2000]}"
    )
