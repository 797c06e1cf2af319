"""The fast front-matter reader agrees with PyYAML, or steps aside."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kitty.core import frontmatter
from kitty.core.frontmatter import read_plain
from kitty.core.wpfile import key_lines, split_front_matter

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@pytest.fixture(autouse=True)
def _first_read() -> None:
    """Each test reads its values for the first time, not from values remembered earlier."""
    frontmatter._SEEN.clear()


def yaml_load(text: str) -> object:
    try:
        return ("ok", yaml.load(text, Loader=LOADER))
    except yaml.YAMLError:
        return ("error", None)


def check(text: str) -> bool:
    """True when the fast reader took the text (and then it must equal PyYAML)."""
    lines: dict[str, int] = {}
    fast = read_plain(text, lines)
    if fast is None:
        return False
    assert lines == key_lines(text), text  # the lines the plain reader saw, as key_lines
    status, expected = yaml_load(text)
    assert status == "ok", text
    assert fast == (expected or {}), text
    assert [type(v) for v in fast.values()] == [type(v) for v in (expected or {}).values()]
    return True


ACCEPTED = [
    "",
    "work_package_id: WP01\ntitle: Module A\ndependencies: []\n",
    "dependencies:\n- WP01\n- WP02\nsubtasks: [T001, T002]\n",
    "dependencies:\n  - WP01\n  - WP02\nowned_files:\n- 'src/a b/**'\n",
    "title: 'It''s fine'\nestimate: 2\nweight: 0.5\nzero: 0\n",
    'title: "quoted: yes"\nagent: ""\nshell_pid: \'\'\n',
    "history:\n- at: '2026-11-29T00:00:00Z'\n  actor: system\n  action: Prompt generated\n",
    "url: http://example.com/a#b\npath: /abs/path\n_private: x\n",
    "title: Work Package – Ünïcode\nempty:\nnext: v\n",
    "requirement_refs:\n- FR-001\n- NFR-001\ntags: []\ntracker_refs: []\n",
    "a: b  \nc: d#not-a-comment\n",
    "base_commit: 36504454c9a0fb0686346265cf8dfa1d764ea53a\nx: 1e5\n",
    # Values and items that begin or end with an `X` keep every letter.
    "title: BOX\nsize: XL\nsizes: [XL, M, X]\nmarks:\n- X\nrows:\n- a: X\nXtail: 1\n",
    # Blank lines between items, an empty item, and the next key after a list of mappings.
    "dependencies:\n- WP01\n\n- WP02\nslots:\n-\n- b\n",
    "history:\n- at: a\n  by: b\n- at: c\nnext: d\nafter:\n  - at: e\n    by: f\n  - at: g\n",
    # The file ends inside a list of mappings, with no final newline.
    "history:\n- at: a\n  by: b",
    "history:\n- at: a",
    # Spaces after a flow list, and a comment line before the first key.
    "tags: [a, b]  \nempty: []  \n",
    "# note\ntitle: a\n",
]

REJECTED_OR_EQUAL = [
    "on: x\n",
    "flag: yes\n",
    "flag: No\n",
    "when: 2026-01-01\n",
    "n: 0x1F\n",
    "n: 1_000\n",
    "n: 010\n",
    "n: 0b1\n",
    "n: 0b2\n",
    "n: 0123456789\n",
    "n: 12ab.5\n",
    "n: 1:20\n",
    "n: -1\n",
    "n: +1\n",
    "x: .inf\n",
    "x: ~\n",
    "x: null\n",
    "x: a: b\n",
    "x: a #comment\n",
    "x: [a, b\n",
    "x: [a:b]\n",
    "x: [a, ]\n",
    "x: {a: 1}\n",
    "x: &anchor v\ny: *anchor\n",
    "x: !!str 1\n",
    "x: |\n  block\n",
    "x: >\n  folded\n",
    'x: "esc\\tape"\n',
    "x: 'open\n",
    "x: a\n  continued\n",
    "x:\n  nested: map\n",
    "x:\n- a\n  continued\n",
    "x:\n- a: 1\n    b: 2\n",
    "x:\n- a: 1\n  - b\n",
    "x: a\r\ny: b\r\n",
    "x: a\x85b\n",
    "\tx: a\n",
    "x:\ta\n",
    "  x: a\n",
    "x : a\n",
    "x:a\n",
    "- a\n- b\n",
    "--- \nx: a\n",
    "x: `tick`\n",
    "x: @at\n",
    "x: %pct\n",
    "? complex\n: key\n",
    "x: a\nx: b\n",
    "# comment\nx: a\n",
    "x:\n\n- a\n",
    "x:\n-\n- b\n",
    "1: a\n",
    "x: [1, 2.5, c]\n",
    "x: ['a', \"b\"]\n",
    "x: ['a, b']\n",
    'x: "a, b"\n',
    'x: "a"b"\n',
    "x: 'a'b'\n",
    "x: [a], b]\n",
    "x: [a{b]\n",
    "x:\n- a:\n",
    "x:\n- on: a\n",
    "x:\n- a: 1\n  on: 2\n",
    "a: 1\nX\n",
    "a: 1\nXX\n",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_plain_subset_is_read_like_pyyaml(text: str) -> None:
    assert check(text)


@pytest.mark.parametrize("text", REJECTED_OR_EQUAL)
def test_everything_else_is_left_to_pyyaml_or_equal(text: str) -> None:
    check(text)


TOKENS = [
    "a",
    "WP01",
    "T001",
    "src/x.py",
    "src/**",
    "yes",
    "no",
    "on",
    "null",
    "~",
    "1",
    "0",
    "01",
    "1.5",
    "1e3",
    "2026-01-01",
    "-",
    "- ",
    "--",
    ":",
    ": ",
    "#",
    " #",
    "'",
    "''",
    '"',
    "[",
    "]",
    "{",
    "}",
    ",",
    ", ",
    " ",
    "  ",
    "\t",
    "\n",
    "\n  ",
    "\n- ",
    "\n  - ",
    "x: ",
    "key: ",
    "&a",
    "*a",
    "!",
    "|",
    ">",
    "?",
    "@",
    "`",
    "%",
    "é",
    "–",
    "\r",
    "http://h",
]


def test_random_token_soup_never_disagrees() -> None:
    rng = random.Random(1313)
    taken = 0
    for _ in range(20000):
        text = "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 12)))
        if not text.startswith(("x: ", "key: ")):
            text = "key: " + text
        taken += check(text + "\n")
    assert taken > 500  # the fast path is exercised, not just skipped


SAMPLES = Path(
    os.environ.get("KITTY_SAMPLES", Path(__file__).resolve().parents[3] / "shared" / "samples")
)


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="samples are not in this checkout")
def test_spec_kitty_sample_front_matter() -> None:
    for path in sorted(SAMPLES.glob("*/tasks/WP*.md")):
        parts = split_front_matter(path.read_text(encoding="utf-8"))
        assert parts is not None
        assert check(parts[0]), path


def test_a_remembered_list_value_is_a_new_list_each_time() -> None:
    """Values are remembered across files; a list handed out must not be shared."""
    first = read_plain("tags: [x, y]\ndependencies: []\n")
    second = read_plain("tags: [x, y]\ndependencies: []\n")
    assert first == second == {"tags": ["x", "y"], "dependencies": []}
    assert first is not None and second is not None
    assert first["tags"] is not second["tags"]
    first["tags"].append("z")
    first["dependencies"].append("WP01")
    assert read_plain("tags: [x, y]\ndependencies: []\n") == second


# Front matter built from the pieces kitty and Spec Kitty write, plus the characters
# that make YAML read a value differently (quotes, `#`, `: `, brackets, commas).
WORD = st.text(alphabet="aXz_/-.:#,'\" []{}019", min_size=1, max_size=8)
VALUE = st.one_of(
    WORD,
    WORD.map(lambda w: "'" + w + "'"),
    WORD.map(lambda w: '"' + w + '"'),
    st.lists(WORD, max_size=3).map(lambda ws: "[" + ", ".join(ws) + "]"),
    st.sampled_from(["", "WP01", "T001", "src/**", "0", "12", "1.5", "yes", "[]", "X"]),
)
KEY = st.sampled_from(["title", "dependencies", "X", "Xa", "on", "at", "by"])
LINE = st.one_of(
    st.tuples(KEY, VALUE).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    KEY.map(lambda k: f"{k}:"),
    VALUE.map(lambda v: f"- {v}"),
    st.tuples(KEY, VALUE).map(lambda kv: f"- {kv[0]}: {kv[1]}"),
    st.tuples(KEY, VALUE).map(lambda kv: f"  {kv[0]}: {kv[1]}"),
    VALUE.map(lambda v: f"  - {v}"),
    st.sampled_from(["", "-", "  ", "# note"]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, max_size=8), st.booleans())
def test_any_front_matter_of_plain_lines_reads_like_pyyaml(lines: list[str], end: bool) -> None:
    frontmatter._SEEN.clear()
    check("\n".join(lines) + ("\n" if end else ""))
