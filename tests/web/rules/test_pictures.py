"""`kitty lanes` pictures (text, Mermaid, Graphviz) pinned line by line."""

from __future__ import annotations

from typing import Any

from kitty.web.rules.pictures import lanes_dot, lanes_mermaid, lanes_text

VIEW: dict[str, Any] = {
    "mission": 'shop "x"',
    "critical_path": ["WP01", "WP02", "WP03"],
    "planning_artifact_wps": ["WP09"],
    "lanes": [
        {
            "lane_id": "lane-a",
            "wp_ids": ["WP01", "WP05"],
            "wp_lanes": {"WP01": "approved", "WP05": None},
            "depends_on_lanes": [],
            "parallel_group": 0,
        },
        {
            "lane_id": "lane-b",
            "wp_ids": ["WP02", "WP03"],
            "wp_lanes": {"WP02": "in_progress", "WP03": "planned"},
            "depends_on_lanes": ["lane-a"],
            "parallel_group": 1,
        },
    ],
    "nodes": [
        {"id": "WP01", "title": "Cart & API", "lane": "approved", "dependencies": []},
        {"id": "WP02", "title": 'Cart "UI" <b>', "lane": "in_progress", "dependencies": ["WP01"]},
        {
            "id": "WP03",
            "title": "Check\\out\nnow",
            "lane": "planned",
            "dependencies": ["WP02", "WP99"],
        },
        {"id": "WP05", "title": "", "lane": None, "dependencies": ["WP01"]},
        {"id": "WP09", "title": "Plan-x", "lane": "done", "dependencies": []},
    ],
}


TEXT = [
    "group 0  lane-a  ◆WP01:approved, WP05:-",
    "group 1  lane-b  ◆WP02:in_progress, ◆WP03:planned  after lane-a",
    "planning artifacts (no lane): WP09",
    "critical path ◆: WP01 → WP02 → WP03",
]


MERMAID = [
    "flowchart LR",
    '  subgraph n_lane_a["lane-a"]',
    '    n_WP01["◆ WP01 Cart #amp; API<br/>approved"]',
    '    n_WP05["WP05<br/>unfinalized"]',
    "  end",
    '  subgraph n_lane_b["lane-b"]',
    '    n_WP02["◆ WP02 Cart #quot;UI#quot; #lt;b#gt;<br/>in_progress"]',
    '    n_WP03["◆ WP03 Check\\out now<br/>planned"]',
    "  end",
    '  n_WP09["WP09 Plan-x<br/>done"]',
    "  n_WP01 ==> n_WP02",
    "  n_WP02 ==> n_WP03",
    "  n_WP01 --> n_WP05",
    "  classDef critical stroke:#d00,stroke-width:3px",
    "  class n_WP01,n_WP02,n_WP03 critical",
    "  linkStyle 0,1 stroke:#d00,stroke-width:3px",
    "",
]


DOT = [
    'digraph "shop \\"x\\"" {',
    "  rankdir=LR;",
    '  node [shape=box, style="rounded"];',
    '  subgraph "cluster_lane-a" {',
    '    label="lane-a";',
    '    "WP01" [label="◆ WP01 Cart & API\\napproved", color="#d00000", penwidth=3];',
    '    "WP05" [label="WP05 \\nunfinalized"];',
    "  }",
    '  subgraph "cluster_lane-b" {',
    '    label="lane-b";',
    '    "WP02" [label="◆ WP02 Cart \\"UI\\" <b>\\nin_progress", color="#d00000", penwidth=3];',
    '    "WP03" [label="◆ WP03 Check\\\\out now\\nplanned", color="#d00000", penwidth=3];',
    "  }",
    '  "WP09" [label="WP09 Plan-x\\ndone"];',
    '  "WP01" -> "WP02" [color="#d00000", penwidth=3];',
    '  "WP02" -> "WP03" [color="#d00000", penwidth=3];',
    '  "WP01" -> "WP05";',
    "}",
    "",
]


def test_text_picture() -> None:
    assert lanes_text(VIEW).split("\n") == TEXT
    assert lanes_text({"lanes": []}) == "critical path ◆: -"


def test_mermaid_picture() -> None:
    assert lanes_mermaid(VIEW).split("\n") == MERMAID
    assert lanes_mermaid({"lanes": [], "nodes": []}) == (
        "flowchart LR\n  classDef critical stroke:#d00,stroke-width:3px\n"
    )


def test_dot_picture() -> None:
    assert lanes_dot(VIEW).split("\n") == DOT
    assert lanes_dot({"lanes": []}) == (
        'digraph "mission" {\n  rankdir=LR;\n  node [shape=box, style="rounded"];\n}\n'
    )


def test_lists_are_comma_separated_and_odd_views_still_draw() -> None:
    """A lane after two lanes names both; two planning artifacts are both listed; a lane
    naming a WP that has no node (no WP file) draws it unfinalized; a node without a
    dependency list draws without arrows."""
    view: dict[str, Any] = {
        "critical_path": [],
        "planning_artifact_wps": ["WP08", "WP09"],
        "lanes": [
            {
                "lane_id": "lane-c",
                "wp_ids": ["WP04", "WP07"],
                "wp_lanes": {"WP04": "planned"},
                "depends_on_lanes": ["lane-a", "lane-b"],
                "parallel_group": 2,
            }
        ],
        "nodes": [{"id": "WP04", "title": "Four", "lane": "planned"}],
    }
    assert lanes_text(view).split("\n") == [
        "group 2  lane-c  WP04:planned  after lane-a, lane-b",
        "planning artifacts (no lane): WP08, WP09",
        "critical path ◆: -",
    ]
    assert '    n_WP07["WP07<br/>unfinalized"]' in lanes_mermaid(view).split("\n")
    assert '    "WP07" [label="WP07 \\nunfinalized"];' in lanes_dot(view).split("\n")
    assert "-->" not in lanes_mermaid(view) and "->" not in lanes_dot(view)
