"""The snapshot cache's folded event ids, packed, answer `in` as a set would."""

from __future__ import annotations

import random

import pytest

from kitty.core.log.idset import IdSet


def random_id(rng: random.Random) -> str:
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ" + "é\n\u2028\ud800"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))


@pytest.mark.parametrize("seed", range(30))
def test_the_packed_ids_answer_like_the_set_they_were_made_of(seed: int) -> None:
    rng = random.Random(seed)
    ids = {random_id(rng) for _ in range(rng.randint(0, 300))}
    added = {random_id(rng) for _ in range(rng.randint(0, 5))}
    seen = IdSet(packed=IdSet(ids).packed())
    seen.update(added)
    probes = [random_id(rng) for _ in range(200)] + list(ids) + list(added)
    for probe in probes:
        assert (probe in seen) == (probe in ids | added), repr(probe)
    again = IdSet(packed=seen.packed())
    assert set(again) == ids | added
    assert all(probe in again for probe in ids | added)


def test_an_id_that_is_part_of_another_is_not_found() -> None:
    seen = IdSet(packed=IdSet({"01ABC", "X", "a\nb"}).packed())
    assert "01AB" not in seen and "BC" not in seen and "" not in seen and "a" not in seen
    assert "01ABC" in seen and "X" in seen and "a\nb" in seen and 5 not in seen
    assert "anything" not in IdSet() and "x" not in IdSet(packed=IdSet().packed())
