"""Which host names a local web board answers to: loopback addresses and names only,
unless the user allowed remote clients (`kitty board --serve --allow-remote`)."""

from __future__ import annotations

import ipaddress
import socket

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback address."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def is_ip_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_is_loopback(host: str) -> bool:
    """Whether a request's Host header (`name`, `name:port`, `[v6]:port`) names this machine."""
    host = host.strip()
    if host.startswith("["):
        name = host[1 : host.find("]")] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name.lower() in LOOPBACK_NAMES or is_ip_loopback(name)
