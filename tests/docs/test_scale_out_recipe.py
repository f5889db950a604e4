"""The deployment recipe of docs/scale-out.md ("Serving the UI and MCP from many workers"):
its `clawcell.toml` loads as the commands read it, each systemd unit's `ExecStart` is a
command line clawcell accepts, and nginx streams what must stream."""

from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path

import pytest

from clawcell.cli._command import build_parser
from clawcell.cli._main import COMMANDS
from clawcell.cli._settings import load_settings
from clawcell.ui._settings import load_settings as load_ui_settings

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "scale-out.md").read_text("utf-8")
RECIPE = PAGE[PAGE.index("### Recipe\n") : PAGE.index("### Connection budget\n")]
UNITS = re.findall(r"^```ini\n(.*?)^```", RECIPE, re.M | re.S)
NGINX, STICKY = re.findall(r"^```nginx\n(.*?)^```", RECIPE, re.M | re.S)
(TOML,) = re.findall(r"^```toml\n(.*?)^```", RECIPE, re.M | re.S)
SECRETS = {"PGPASSWORD": "pw", "CLAWCELL_UI_TOKEN": "a-shared-token-0123456789abcdef"}


def test_the_config_loads_as_every_worker_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    config = tmp_path / "clawcell.toml"
    config.write_text(TOML)
    settings = load_settings(config)
    assert settings.store == "postgresql://agents:pw@db.internal/agents"
    assert settings.store_pool == 10
    ui = load_ui_settings(config)
    assert ui.token == SECRETS["CLAWCELL_UI_TOKEN"]  # the variable's value, not the placeholder
    assert (ui.port, ui.canvas_port, ui.canvas_origin) == (8787, 8788, "https://canvas.example.com")
    assert set(ui.allowed_hosts) == {"agents.example.com", "canvas.example.com"}


@pytest.mark.parametrize("unit", UNITS, ids=["ui", "mcp"])
def test_each_unit_runs_a_command_line_clawcell_accepts(unit: str) -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.read_string(unit)
    service = parser["Service"]
    assert service["EnvironmentFile"] == "/etc/clawcell/env"
    program, *argv = shlex.split(service["ExecStart"])
    assert program.endswith("/bin/clawcell")
    args = build_parser(COMMANDS).parse_args(argv)
    assert str(args.config) == "/etc/clawcell/clawcell.toml"
    assert parser["Install"]["WantedBy"] == "multi-user.target"


def test_nginx_streams_ui_and_mcp_unbuffered_to_defined_upstreams() -> None:
    upstreams = set(re.findall(r"^upstream (\w+) +\{", NGINX, re.M))
    servers = re.findall(r"^server \{\n(.*?)^\}", NGINX, re.M | re.S)
    assert len(servers) == 3 and NGINX.count("{") == NGINX.count("}")
    for server in servers:
        (target,) = re.findall(r"proxy_pass http://(\w+);", server)
        assert target in upstreams
        assert "proxy_http_version 1.1;" in server and 'proxy_set_header Connection "";' in server
        if target != "clawcell_canvas":  # the chat's and MCP's Server-Sent Events
            assert "proxy_buffering off;" in server
            assert "proxy_read_timeout 1h;" in server


def test_the_sticky_rule_hashes_the_session_id_of_the_api_path() -> None:
    (pattern,) = re.findall(r"~(\^/api/sessions/\S+)\s+\$sid;", STICKY)
    found = re.match(pattern.replace("(?<sid>", "(?P<sid>"), "/api/sessions/s-1/live")
    assert found is not None and found.group("sid") == "s-1"
    assert re.match(pattern.replace("(?<sid>", "(?P<sid>"), "/static/app.css") is None
    assert "hash $clawcell_route consistent;" in STICKY
    assert STICKY.count("{") == STICKY.count("}")
