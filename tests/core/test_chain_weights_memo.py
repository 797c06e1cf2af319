"""`chain_weights` remembers its last answer (the sprint asks before every dispatch);
the answer must still follow any change of the WPs and never be shared."""

from __future__ import annotations

from kitty.core.model import WorkPackage
from kitty.core.schedule import chain_weights


def wp(wp_id: str, deps: tuple[str, ...] = (), estimate: float | None = None) -> WorkPackage:
    return WorkPackage(wp_id, wp_id, deps, (), (), f"tasks/{wp_id}.md", wp_id, estimate)


def test_the_remembered_weights_follow_the_wps() -> None:
    wps = {"WP01": wp("WP01"), "WP02": wp("WP02", ("WP01",))}
    first = chain_weights(wps)
    assert first == {"WP01": 2.0, "WP02": 1.0}
    first["WP01"] = 99.0  # the caller's copy only
    assert chain_weights(wps) == {"WP01": 2.0, "WP02": 1.0}
    heavier = dict(wps, WP02=wp("WP02", ("WP01",), estimate=5.0))
    assert chain_weights(heavier) == {"WP01": 6.0, "WP02": 5.0}
    other = {"WP01": wps["WP01"], "WP03": wp("WP03")}  # the same first record, another id
    assert chain_weights(other) == {"WP01": 1.0, "WP03": 1.0}
    assert chain_weights({}) == {}
