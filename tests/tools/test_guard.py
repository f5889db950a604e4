"""The address guard: one special-use policy (clawcell.reply's) for every resolved address."""

from __future__ import annotations

import asyncio

import pytest

from clawcell import ToolError
from clawcell.tools import AddressGuard
from clawcell.tools._guard import refused_range

from ._fakes import ScriptedResolver

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "linkLocal"),
    ("100.64.0.1", "carrierGradeNat"),
    ("0.0.0.0", "unspecified"),
    ("255.255.255.255", "broadcast"),
    ("224.0.0.1", "multicast"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fe80::1", "linkLocal"),
    ("fe80::1%eth0", "linkLocal"),
    ("fd00::1", "uniqueLocal"),
    ("::ffff:10.0.0.1", "private (embedded in IPv6)"),
    ("64:ff9b::a00:1", "private (embedded in IPv6)"),
    ("2002:a00:1::", "private (embedded in IPv6)"),
    ("::ffff:127.0.0.1", "loopback (embedded in IPv6)"),
]
PUBLIC = ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "64:ff9b::808:808"]


@pytest.mark.parametrize(("address", "label"), REFUSED)
def test_special_use_addresses_are_refused_with_their_range(address: str, label: str) -> None:
    assert refused_range(address) == label


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert refused_range(address) is None


def test_a_name_with_any_private_answer_is_refused_whole() -> None:
    guard = AddressGuard(
        resolver=ScriptedResolver(answers={"mixed.test": [["8.8.8.8", "10.0.0.7"]]})
    )
    with pytest.raises(ToolError) as refused:
        asyncio.run(guard.addresses("mixed.test", 80))
    assert refused.value.code == "blocked_address"
    assert refused.value.message == (
        "Refused to connect to 'mixed.test': it resolves to 10.0.0.7, a private address. "
        "`web_fetch` only reaches public internet addresses."
    )


def test_the_test_allowance_opens_loopback_only() -> None:
    resolver = ScriptedResolver(answers={"a.test": [["127.0.0.1"]], "b.test": [["192.168.0.2"]]})
    guard = AddressGuard(resolver=resolver, allow_loopback_for_tests=True)
    assert asyncio.run(guard.addresses("a.test", 80)) == ["127.0.0.1"]
    with pytest.raises(ToolError):
        asyncio.run(guard.addresses("b.test", 80))


def test_production_defaults_refuse_loopback_literals() -> None:
    with pytest.raises(ToolError) as refused:
        asyncio.run(AddressGuard().addresses("127.0.0.1", 80))
    assert refused.value.code == "blocked_address"


def test_an_unresolvable_name_is_a_dns_error() -> None:
    guard = AddressGuard(resolver=ScriptedResolver(answers={}))
    with pytest.raises(ToolError) as failed:
        asyncio.run(guard.addresses("nowhere.test", 80))
    assert failed.value.code == "dns_error"
