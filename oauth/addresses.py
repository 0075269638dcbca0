"""What a client address is counted under: the address itself (an IPv6 /64, which one subscriber gets whole) and
its network. The OAuth server's rate limits and the gateway's connections per client count by the same keys.

Also which addresses are public (`is_public_address`): the one rule for where the server may be sent by what
others wrote, which the client metadata documents' fetch (`oauth.cimd`) and the fetch of an OpenAPI document's
refs and redirects (`gateway.rest.fetching`) both apply."""

from __future__ import annotations

import ipaddress
from typing import Final

__all__ = ["Address", "is_public_address", "network_key", "parsed_address", "rate_key"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

#: The NAT64 well-known prefix (RFC 6052): its addresses end in the IPv4 address they translate to.
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def is_public_address(address: Address) -> bool:
    """Whether `address` is on the public internet: not private, loopback, link-local, shared, reserved,
    unspecified or multicast."""
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv4 address inside an IPv6 one (mapped, 6to4, NAT64) is reached as that IPv4 address.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public_address(embedded)
    return address.is_global and not address.is_multicast


def parsed_address(text: str) -> Address | None:
    """`text` as an IP address (brackets and spaces around it ignored), or None when it is not one."""
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def rate_key(address: str) -> str:
    """The key a client address is counted under: the address, or for IPv6 its /64, which one subscriber gets
    whole (RFC 6177), so that walking through it does not escape the limit."""
    parsed = parsed_address(address)
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is None:
        return str(ipaddress.IPv6Network(f"{parsed}/64", strict=False))
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return address


def network_key(address: str) -> str:
    """The key a client address's network is counted under: an IPv4 address's /24, an IPv6 address's /48 (a
    common allocation to one site, RFC 6177 §3, holding 65,536 /64s), so that one holder of many addresses
    shares one budget."""
    parsed = parsed_address(address)
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network(f"{parsed}/48", strict=False))
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(ipaddress.IPv4Network(f"{parsed}/24", strict=False))
    return address
