"""`UiSettings`: defaults, the `[ui]` table and refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawcell import ConfigurationError
from clawcell.ui import UiSettings, load_settings


def test_the_defaults_are_loopback_scripts_tier_and_no_external_embeds() -> None:
    settings = UiSettings()
    assert (settings.host, settings.port) == ("127.0.0.1", 8787)
    assert settings.embed_sandbox == "scripts"
    assert settings.allow_external_embed_urls is False
    assert settings.media_roots == ()
    assert settings.is_loopback
    assert len(settings.token) >= 32 and settings.token != UiSettings().token


def test_the_ui_table_is_read_with_camel_case_names(tmp_path: Path) -> None:
    config = tmp_path / "clawcell.toml"
    config.write_text(
        '[ui]\nport = 9000\nembedSandbox = "strict"\nallowExternalEmbedUrls = true\n'
        'mediaRoots = ["/srv/media"]\nallowedHosts = ["ui.internal"]\nagent = "app:make"\n'
    )
    settings = load_settings(config, port=None, host="::1")
    assert settings.port == 9000 and settings.host == "::1" and settings.is_loopback
    assert settings.embed_sandbox == "strict" and settings.allow_external_embed_urls
    assert settings.media_roots == (Path("/srv/media"),)
    assert settings.allowed_hosts == ("ui.internal",) and settings.agent == "app:make"


def test_the_attachment_caps_default_to_5_mib_a_file_4_files_and_10_mib_a_message(
    tmp_path: Path,
) -> None:
    defaults = UiSettings()
    assert (defaults.max_attachment_bytes, defaults.max_attachments) == (5 * 2**20, 4)
    assert defaults.max_message_attachment_bytes == 10 * 2**20
    config = tmp_path / "clawcell.toml"
    config.write_text(
        "[ui]\nmaxAttachmentBytes = 1024\nmaxAttachments = 2\nmaxMessageAttachmentBytes = 2048\n"
    )
    settings = load_settings(config)
    assert (settings.max_attachment_bytes, settings.max_attachments) == (1024, 2)
    assert settings.max_message_attachment_bytes == 2048


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"embedSandbox": "loose"},
            "`embedSandbox` must be one of 'strict', 'scripts' or 'trusted', got 'loose'.",
        ),
        ({"port": 70000}, "`port` must be an integer 0–65535, got 70000."),
        ({"port": "80"}, "`port` must be of type int, got '80'."),
        (
            {"allowExternalEmbedUrls": "yes"},
            "`allow_external_embed_urls` must be of type bool, got 'yes'.",
        ),
        ({"mediaRoots": "/srv"}, "`media_roots` must be a list of strings, got '/srv'."),
        (
            {"token": "short"},
            "`token` must be at least 16 characters, got 5; omit it to get a random one.",
        ),
        (
            {"colour": "blue"},
            "unknown `[ui]` setting 'colour'; known: agent, allowExternalEmbedUrls, allowedHosts, "
            "canvasOrigin, canvasPort, embedSandbox, host, maxAttachmentBytes, maxAttachments, "
            "maxMessageAttachmentBytes, mediaRoots, port, token.",
        ),
        ({"maxAttachments": -1}, "`max_attachments` must be a whole number ≥ 0, got -1."),
        (
            {"maxAttachmentBytes": "5MB"},
            "`max_attachment_bytes` must be of type int, got '5MB'.",
        ),
    ],
)
def test_bad_settings_are_refused_with_a_clear_message(
    table: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        UiSettings.from_config(table)
    assert caught.value.message == message


def test_an_unreadable_config_file_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[ui\n")
    with pytest.raises(ConfigurationError) as caught:
        load_settings(broken)
    assert caught.value.message.startswith(f"cannot read the config file {str(broken)!r}: ")


def test_a_non_loopback_host_is_reported_as_such() -> None:
    assert not UiSettings(host="0.0.0.0").is_loopback


def test_the_token_names_an_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWCELL_UI_TOKEN", "shared-by-every-worker-0123")
    config = tmp_path / "clawcell.toml"
    monkeypatch.setenv("CLAWCELL_UI_HOST", "ui.internal")
    config.write_text(
        '[ui]\ntoken = "${env:CLAWCELL_UI_TOKEN}"\nallowedHosts = ["${env:CLAWCELL_UI_HOST}"]\n'
    )
    settings = load_settings(config)
    assert settings.token == "shared-by-every-worker-0123"
    assert settings.allowed_hosts == ("ui.internal",)


def test_an_unset_variable_is_refused_rather_than_taken_literally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAWCELL_UNSET_TOKEN", raising=False)
    config = tmp_path / "clawcell.toml"
    config.write_text('[ui]\ntoken = "${env:CLAWCELL_UNSET_TOKEN}"\n')
    with pytest.raises(ConfigurationError) as refused:
        load_settings(config)
    assert refused.value.message == (
        "`[ui]` setting `token`: environment variable 'CLAWCELL_UNSET_TOKEN' is not set; set it "
        "or write the value."
    )


@pytest.mark.parametrize(
    "origin",
    ["canvas.example.com", "https://canvas.example.com/", "ftp://c.example", "https://c.x/p"],
)
def test_a_canvas_origin_that_is_not_an_origin_is_refused(origin: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        UiSettings(canvas_origin=origin)
    assert refused.value.message == (
        "`canvasOrigin` must be an origin such as 'https://canvas.example.com' (scheme, host "
        f"and optional port, no path or trailing slash), got {origin!r}."
    )


def test_a_canvas_origin_is_read_from_the_table(tmp_path: Path) -> None:
    config = tmp_path / "clawcell.toml"
    config.write_text('[ui]\ncanvasOrigin = "https://canvas.example.com:8443"\n')
    assert load_settings(config).canvas_origin == "https://canvas.example.com:8443"
