"""The Rich Output Protocol: media, directive tags, embeds, canvas blocks and reply payloads.

Start with `build_reply`; every protocol function of OpenClaw is available under its snake_case
name (`splitMediaFromOutput` → `split_media_from_output`). See `docs/reply.md`.
"""

from __future__ import annotations

from ._canvas import (
    CanvasPreview,
    coerce_canvas_preview,
    extract_canvas_from_details,
    extract_canvas_from_text,
    normalize_preferred_height,
    resolve_canvas_iframe_url,
    resolve_embed_sandbox,
)
from ._controlui import expand_text_content
from ._directives import sanitize_reply_directive_id
from ._embeds import (
    default_canvas_entry_url,
    extract_canvas_shortcodes,
    parse_canvas_attributes,
    preview_from_shortcode,
    split_canvas_shortcodes,
)
from ._history import project_chat_display_messages
from ._ip import (
    extract_embedded_ipv4_from_ipv6,
    ipv4_special_use_range,
    ipv6_special_use_range,
    is_blocked_special_use_ipv4_address,
    is_blocked_special_use_ipv6_address,
    is_canonical_dotted_decimal_ipv4,
    is_legacy_ipv4_literal,
)
from ._media import MediaSegment, SplitMedia, split_media_from_output
from ._paths import (
    clean_candidate,
    has_traversal_or_unsupported_home_dir_prefix,
    is_likely_local_path,
    is_relative_assistant_media_reference,
    is_valid_media,
    looks_like_local_file_path,
    normalize_media_source,
    resolve_user_path,
    split_unquoted_media_directive_parts,
    unwrap_quoted,
)
from ._payloads import (
    filter_messaging_tool_media_duplicates,
    finalize_after_block_streaming,
    merge_attempt_tool_media_payloads,
)
from ._regions import find_code_regions
from ._reply import Reply, ReplyDirectives, ToolMedia, build_reply, parse_reply_directives
from ._tags import (
    InlineDirectives,
    StripResult,
    parse_inline_directive_parts,
    parse_inline_directives,
    strip_inline_directive_parts_for_delivery,
    strip_inline_directive_tags_for_delivery,
    strip_inline_directive_tags_for_display,
)
from ._tokens import (
    is_silent_reply_payload_text,
    is_silent_reply_text,
    strip_heartbeat_token,
)
from ._urls import (
    is_allowed_remote_media_url,
    is_blocked_remote_media_hostname,
    normalize_remote_media_hostname,
)
from ._youtube import YouTubeCard, youtube_card

__all__ = [
    "CanvasPreview",
    "InlineDirectives",
    "MediaSegment",
    "Reply",
    "ReplyDirectives",
    "SplitMedia",
    "StripResult",
    "ToolMedia",
    "YouTubeCard",
    "build_reply",
    "clean_candidate",
    "coerce_canvas_preview",
    "default_canvas_entry_url",
    "expand_text_content",
    "extract_canvas_from_details",
    "extract_canvas_from_text",
    "extract_canvas_shortcodes",
    "extract_embedded_ipv4_from_ipv6",
    "filter_messaging_tool_media_duplicates",
    "finalize_after_block_streaming",
    "find_code_regions",
    "has_traversal_or_unsupported_home_dir_prefix",
    "ipv4_special_use_range",
    "ipv6_special_use_range",
    "is_allowed_remote_media_url",
    "is_blocked_remote_media_hostname",
    "is_blocked_special_use_ipv4_address",
    "is_blocked_special_use_ipv6_address",
    "is_canonical_dotted_decimal_ipv4",
    "is_legacy_ipv4_literal",
    "is_likely_local_path",
    "is_relative_assistant_media_reference",
    "is_silent_reply_payload_text",
    "is_silent_reply_text",
    "is_valid_media",
    "looks_like_local_file_path",
    "merge_attempt_tool_media_payloads",
    "normalize_media_source",
    "normalize_preferred_height",
    "normalize_remote_media_hostname",
    "parse_canvas_attributes",
    "parse_inline_directive_parts",
    "parse_inline_directives",
    "parse_reply_directives",
    "preview_from_shortcode",
    "project_chat_display_messages",
    "resolve_canvas_iframe_url",
    "resolve_embed_sandbox",
    "resolve_user_path",
    "sanitize_reply_directive_id",
    "split_canvas_shortcodes",
    "split_media_from_output",
    "split_unquoted_media_directive_parts",
    "strip_heartbeat_token",
    "strip_inline_directive_parts_for_delivery",
    "strip_inline_directive_tags_for_delivery",
    "strip_inline_directive_tags_for_display",
    "unwrap_quoted",
    "youtube_card",
]
