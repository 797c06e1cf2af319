"""status.json assembled from per-WP parts is byte for byte the whole board dumped."""

from __future__ import annotations

import json
import random

import pytest

from kitty.core.log.records import WPState
from kitty.core.log.snapshot import materialize, status_header
from kitty.core.log.state import Board
from kitty.core.log.statustext import assemble, part


def dumped(board: Board, meta: dict[str, str]) -> str:
    data = materialize(board, "m-01", meta)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def random_board(rng: random.Random) -> Board:
    board = Board(event_count=rng.randint(0, 99), last_event_id=rng.choice([None, "01X"]))
    board.newest_at_us = rng.choice([None, 1_790_000_000_000_000])
    texts = ["", "plain", "ünï\u2028cödé", 'quote " and \\ and\nnewline', "\x00ctl"]
    for _ in range(rng.randint(0, 12)):
        wp_id = rng.choice(["WP1", "WP02", "WP10", "WP2", "wp7", "WP003", "X"])
        st = WPState(wp_id, lane=rng.choice([None, "planned", "done", "blocked"]))
        st.notes = [rng.choice(texts) for _ in range(rng.randint(0, 3))]
        st.subtasks = {f"T{i}": rng.choice(["done", "planned"]) for i in range(rng.randint(0, 2))}
        st.scalars = {rng.choice(texts) or "k": rng.choice([1, None, [], {}, {"a": [1, {}]}])}
        st.review_result = rng.choice([None, {}, {"verdict": rng.choice(texts)}])
        board.wps[wp_id] = st
    return board


@pytest.mark.parametrize("seed", range(40))
def test_parts_assemble_to_the_whole_file(seed: int) -> None:
    rng = random.Random(seed)
    board = random_board(rng)
    meta = rng.choice([{}, {"mission_number": "007", "mission_type": "ünï"}])
    parts = {wp_id: part(st) for wp_id, st in board.wps.items()}
    header = status_header(board, "m-01", meta, list(board.wps))
    assert assemble(header, parts) == dumped(board, meta)


def test_a_header_key_after_work_packages_is_refused() -> None:
    with pytest.raises(ValueError):
        assemble({"zzz": 1}, {})
