"""A UI app over a PostgreSQL store stops however its store's pool is busy (stop 46's hang).

The app's lifespan closes its own turn registry, not the agent's store, which is the
caller's; the store closes with the test client's event loop (`store/_postgres/_pool`). Left
growing its pool as the loop ended, it kept the client's exit waiting for ever.
"""

from __future__ import annotations

import asyncio
import threading

from starlette.testclient import TestClient

from clawcell.agent import Agent, ScriptedModel
from clawcell.store import PostgresStore
from clawcell.ui import UiSettings, create_app
from tests._swallowing import HANG_CEILING_S
from tests.store.postgres._held import HeldProxy
from tests.ui._client import BASE, TOKEN


async def _grow(store: PostgresStore) -> None:
    """Three reads at once: two wait for the pool's one connection, and the pool grows."""
    await asyncio.gather(*(store.get("s", "k") for _ in range(3)))


def test_the_client_of_an_app_over_postgres_exits_while_the_pool_is_connecting(
    postgres_dsn: str, postgres_schema: str
) -> None:
    with HeldProxy(postgres_dsn) as proxy:
        store = PostgresStore(proxy.dsn, schema=postgres_schema, min_size=1, max_size=4)
        agent = Agent(model=ScriptedModel([]), tools=[], store=store)
        client = TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE)

        def serve_and_leave() -> None:
            with client:
                assert client.get(f"/?token={TOKEN}").status_code == 200
                proxy.hold()
                assert client.portal is not None
                client.portal.call(_grow, store)
                assert proxy.holding.wait(HANG_CEILING_S)

        thread = threading.Thread(target=serve_and_leave, daemon=True)
        thread.start()
        thread.join(HANG_CEILING_S)  # a ceiling, not a timing: it takes milliseconds
        assert not thread.is_alive(), "the test client's exit hung"
