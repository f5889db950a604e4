"""Media: the remote policy for page URLs, and local files only from the media roots."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawcell.ui._media import MediaRoots
from tests.ui._client import client

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


@pytest.fixture
def roots(tmp_path: Path) -> Path:
    media = tmp_path / "media"
    (media / "sub").mkdir(parents=True)
    (media / "chart.png").write_bytes(PNG)
    (media / "sub" / "note.ogg").write_bytes(b"OggS")
    (media / "page.html").write_text("<script>alert(1)</script>")
    (media / "logo.svg").write_text("<svg onload='alert(1)'/>")
    (tmp_path / "secret.txt").write_text("secret")
    (media / "escape.png").symlink_to(tmp_path / "secret.txt")
    return media


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("https://cdn.example.com/a.png", ("https://cdn.example.com/a.png", None)),
        ("https://127.0.0.1/a.png", (None, "remote media blocked by the media policy")),
        (
            "https://metadata.google.internal/a.png",
            (None, "remote media blocked by the media policy"),
        ),
        ("http://cdn.example.com/a.png", (None, "plain http media is not loaded")),
        ("data:image/png;base64,AAAA", ("data:image/png;base64,AAAA", None)),
        ("/etc/passwd", (None, "local file outside the configured media roots")),
    ],
)
def test_page_urls_follow_the_media_policy(
    reference: str, expected: tuple[str | None, str | None]
) -> None:
    assert MediaRoots([]).page_url(reference) == expected


def test_a_local_file_inside_a_root_gets_a_media_route_url(roots: Path) -> None:
    reference = str(roots / "chart.png")
    assert MediaRoots([roots]).page_url(reference) == (f"/media?path={reference}", None)


@pytest.mark.parametrize(
    "name", ["../secret.txt", "sub/../../secret.txt", "escape.png", "missing.png", "sub"]
)
def test_traversal_symlink_escape_and_non_files_are_not_contained(roots: Path, name: str) -> None:
    assert MediaRoots([roots]).contained(f"{roots}/{name}") is None


def test_relative_and_home_user_references_are_not_contained(roots: Path) -> None:
    media = MediaRoots([roots])
    assert media.contained("chart.png") is None
    assert media.contained("~root/chart.png") is None
    assert media.contained(f"file://{roots}/chart.png") == roots / "chart.png"


def _get(roots: Path, reference: str):
    return client(media_roots=(roots,)).get("/media", params={"path": reference})


def test_the_media_route_serves_an_image_inline_with_its_type(roots: Path) -> None:
    response = _get(roots, str(roots / "chart.png"))
    assert response.status_code == 200
    assert response.content == PNG
    assert response.headers["content-type"] == "image/png"
    assert response.headers["content-disposition"].startswith("inline")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == "sandbox; default-src 'none'"


def test_the_media_route_serves_audio_with_its_type(roots: Path) -> None:
    response = _get(roots, str(roots / "sub" / "note.ogg"))
    assert response.headers["content-type"] == "audio/ogg"


@pytest.mark.parametrize("name", ["page.html", "logo.svg"])
def test_active_content_is_sent_as_a_download_never_inline(roots: Path, name: str) -> None:
    response = _get(roots, str(roots / name))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["content-disposition"].startswith("attachment")


@pytest.mark.parametrize("name", ["../secret.txt", "escape.png", "missing.png"])
def test_the_media_route_refuses_what_is_not_contained(roots: Path, name: str) -> None:
    reference = f"{roots}/{name}"
    response = _get(roots, reference)
    assert response.status_code == 404
    assert response.text == (
        f"Refused: {reference!r} is not a file inside the configured media roots."
    )


def test_without_media_roots_no_local_file_is_served(roots: Path) -> None:
    response = client().get("/media", params={"path": str(roots / "chart.png")})
    assert response.status_code == 404
