"""The text scanners of `clawcell.reply` as they were before the throughput work (an oracle).

A frozen copy of `_text`, `_fences`, `_images`, `_directives`, `_tags`, `_media`, `_embeds`,
`_tokens` and `_urls` from commit 50eb247 (plus `parse_reply_directives`), kept only so the
differential tests in `tests/reply/test_differential.py` can prove the optimised code behaves
identically. Modules the throughput work did not touch (`_paths`, `_canvas`, `_ip`) are imported
from the package. Do not edit these copies except to keep them importable; they are slow on
purpose.
"""
