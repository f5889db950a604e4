"""`serve_ui`'s two listeners send each response at once (`TCP_NODELAY`)."""

from __future__ import annotations

import asyncio

import pytest

from clawcell.errors import ConfigurationError
from clawcell.ui import UiSettings, bind_listeners, serve_ui
from clawcell.ui._servers import bind  # pyright: ignore[reportPrivateUsage]
from tests._sockets import accepted_nodelay, answered_connection, listening_ports
from tests.ui._fakes import FakeAgent


@pytest.mark.parametrize("listener", ["app", "canvas host"])
def test_both_listeners_answer_kept_alive_connections_without_waiting_for_an_ack(
    listener: str,
) -> None:
    async def main() -> bool:
        async with serve_ui(FakeAgent(), UiSettings(token="t" * 20, port=0, canvas_port=0)) as ui:
            settings = ui.settings
            port = settings.port if listener == "app" else settings.canvas_port
            request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
            client = await asyncio.to_thread(answered_connection, "127.0.0.1", port, request)
            with client:
                return accepted_nodelay(client)

    assert asyncio.run(main()) is True


@pytest.mark.parametrize(
    ("host", "says"),
    [
        ("bad host!!", "`host` 'bad host!!' does not resolve: give an IP address"),
        ("192.0.2.1", "'192.0.2.1' is not an address of this machine: use 127.0.0.1"),
    ],
)
def test_a_host_that_cannot_be_bound_is_told_about_the_host_not_the_port(
    host: str, says: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        bind(host, 0)
    assert says in caught.value.message
    assert "port" not in caught.value.message


def _refused_beside(busy_port: int) -> tuple[int, str]:
    """`bind_listeners` on a port free a moment ago and on `busy_port`: the app's port and the
    error. Another process may take the app's port before it is bound again; then once more,
    on another port."""
    for _ in range(3):
        with bind("127.0.0.1", 0) as probe:
            app_port = probe.getsockname()[1]
        settings = UiSettings(token="t" * 20, port=app_port, canvas_port=busy_port)
        with pytest.raises(ConfigurationError) as caught:
            bind_listeners(settings)
        if f"cannot bind 127.0.0.1:{app_port}:" not in caught.value.message:
            return app_port, caught.value.message
    raise AssertionError("three free ports were taken before `bind_listeners` bound them")


def test_bind_listeners_leaves_nothing_open_when_the_canvas_port_is_taken() -> None:
    with bind("127.0.0.1", 0) as busy:
        busy_port = busy.getsockname()[1]
        app_port, message = _refused_beside(busy_port)
        assert message.startswith(f"cannot bind 127.0.0.1:{busy_port}: ")
        assert app_port not in listening_ports()  # the app's socket was closed


def test_bind_listeners_binds_the_app_and_the_canvas_host_for_serve_ui() -> None:
    app, canvas = bind_listeners(UiSettings(token="t" * 20, port=0, canvas_port=0))
    with app, canvas:
        assert app.getsockname()[1] != canvas.getsockname()[1]
        assert app.getblocking() is False and canvas.getblocking() is False
