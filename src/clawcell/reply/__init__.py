"""The Rich Output Protocol: media, directive tags, embeds, canvas blocks and reply payloads."""

from __future__ import annotations

from ._directives import sanitize_reply_directive_id
from ._fences import find_code_regions
from ._ip import (
    extract_embedded_ipv4_from_ipv6,
    ipv4_special_use_range,
    ipv6_special_use_range,
    is_blocked_special_use_ipv4_address,
    is_blocked_special_use_ipv6_address,
    is_canonical_dotted_decimal_ipv4,
    is_legacy_ipv4_literal,
)
from ._media import split_media_from_output
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
from ._tags import (
    parse_inline_directive_parts,
    parse_inline_directives,
    strip_inline_directive_parts_for_delivery,
    strip_inline_directive_tags_for_delivery,
    strip_inline_directive_tags_for_display,
)
from ._urls import (
    is_allowed_remote_media_url,
    is_blocked_remote_media_hostname,
    normalize_remote_media_hostname,
)

__all__ = [
    "clean_candidate",
    "extract_embedded_ipv4_from_ipv6",
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
    "is_valid_media",
    "looks_like_local_file_path",
    "normalize_media_source",
    "normalize_remote_media_hostname",
    "parse_inline_directive_parts",
    "parse_inline_directives",
    "resolve_user_path",
    "sanitize_reply_directive_id",
    "split_media_from_output",
    "split_unquoted_media_directive_parts",
    "strip_inline_directive_parts_for_delivery",
    "strip_inline_directive_tags_for_delivery",
    "strip_inline_directive_tags_for_display",
    "unwrap_quoted",
]
