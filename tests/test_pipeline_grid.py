"""Sweep grids (pipeline/grid.py): expansion, dropped combinations, presets, errors naming file and field."""
from __future__ import annotations

from pathlib import Path

import pytest

from groupspec.pipeline.grid import PRESETS, GridError, load_grid, parse_grid, preset


def test_a_block_is_a_cartesian_product_with_top_level_defaults() -> None:
    g = parse_grid({"name": "x", "seeds": 2, "members": 4,
                    "blocks": [{"protocol": ["eager", "static"], "churn": ["join", "leave"]},
                               {"protocol": "zookeeper", "assignor": ["range", "sticky"], "commit": ["auto", "sync"]}]},
                   "g.yaml")
    assert g.name == "x"
    assert len(g) == 2 * 2 * 2 + 2  # zookeeper collapses assignor and commit: one point per seed
    assert {p.members for p in g.points} == {4}
    assert {p.seed for p in g.points} == {0, 1}
    assert {(p.assignor, p.commit) for p in g.points if p.protocol == "zookeeper"} == {("zookeeper", "none")}


def test_impossible_combinations_are_dropped_and_counted() -> None:
    g = parse_grid({"protocol": ["eager", "cooperative"], "assignor": ["range", "cooperative-sticky"]}, "g.yaml")
    assert {(p.protocol, p.assignor) for p in g.points} == {("eager", "range"), ("cooperative", "cooperative-sticky")}
    assert g.dropped == 2


def test_point_ids_are_stable_and_distinct() -> None:
    a = preset("history")
    b = preset("history")
    assert [p.point_id for p in a.points] == [p.point_id for p in b.points]
    assert len({p.point_id for p in a.points}) == len(a)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_expand(name: str) -> None:
    assert len(preset(name)) > 0


@pytest.mark.parametrize(("doc", "where"), [
    ({"members": "three"}, "g.yaml: members: 'three' is not a int"),
    ({"blocks": [{"protocol": "eager"}, {"members": 0}]}, "g.yaml: blocks[1].members: members must be between 1 and 64"),
    ({"blocks": [{"churn": "earthquake"}]}, "g.yaml: blocks[0].churn: unknown churn pattern 'earthquake'"),
    ({"colour": "red"}, "g.yaml: colour: unknown field"),
    ({"blocks": [{"protocol": "eager", "speed": 1}]}, "g.yaml: blocks[0].speed: unknown field"),
    ({"loss": 1.5}, "g.yaml: loss: a loss probability"),
    ({"commit": "never"}, "g.yaml: commit: unknown commit strategy 'never'"),
    ({"protocol": "cooperative", "assignor": "range"}, "g.yaml: no runnable combination"),
    ([1, 2], "g.yaml: the grid must be a mapping"),
])
def test_malformed_grids_name_the_file_and_the_field(doc: object, where: str) -> None:
    with pytest.raises(GridError) as e:
        parse_grid(doc, "g.yaml")
    assert str(e.value).startswith(where), str(e.value)


def test_yaml_files(tmp_path: Path) -> None:
    f = tmp_path / "g.yaml"
    f.write_text("name: mine\nprotocol: [eager, static]\nchurn: bounce\nseeds: [5, 9]\n")
    g = load_grid(str(f))
    assert g.name == "mine" and len(g) == 4 and {p.seed for p in g.points} == {5, 9}
    f.write_text("protocol: [eager\n")
    with pytest.raises(GridError, match=r"g.yaml: line \d+: not valid YAML"):
        load_grid(str(f))
    with pytest.raises(GridError, match="nope.yaml: no such file"):
        load_grid(str(tmp_path / "nope.yaml"))
    with pytest.raises(GridError, match="unknown preset"):
        preset("huge")


def test_seeds_and_combinations_have_a_ceiling(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seed count or list past MAX_SEEDS, and a grid past MAX_COMBINATIONS (counted before expanding, block by
    block), are refused by name instead of exhausting memory; the ceilings themselves are fine."""
    from groupspec.pipeline import grid

    with pytest.raises(GridError, match=r"g\.yaml: seeds: .*between 1 and 10,000, got 99999999999"):
        parse_grid({"seeds": 99_999_999_999}, "g.yaml")
    with pytest.raises(GridError, match=r"g\.yaml: seeds: at most 10,000 seeds"):
        parse_grid({"seeds": list(range(grid.MAX_SEEDS + 1))}, "g.yaml")
    assert len(parse_grid({"seeds": grid.MAX_SEEDS}, "g.yaml")) == grid.MAX_SEEDS
    monkeypatch.setattr(grid, "MAX_COMBINATIONS", 12)
    assert len(parse_grid({"seeds": 3, "members": [2, 3, 4, 5]}, "g.yaml")) == 12
    with pytest.raises(GridError, match=r"g\.yaml: blocks\[1\]: .*more than 12 combinations"):
        parse_grid({"seeds": 3, "blocks": [{"members": [2, 3]}, {"members": [4, 5, 6]}]}, "g.yaml")
