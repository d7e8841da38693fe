"""The graph profile's editable file, its naming-property rule, and sgr's own shape as one profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sgr.core.errors import InputError
from sgr.graph.profile import (entity_shape, load_profile, name_index, name_property, profile_from_dict,
                               save_profile)

MOVIES = {"shape": "property",
          "labels": {"Movie": {"name_property": "title", "properties": {"title": "String", "released": "Long"}},
                     "Person": {"name_property": "name", "properties": {"name": "String", "born": "Long"}}},
          "relationships": [{"type": "ACTED_IN", "start": "Person", "end": "Movie",
                             "properties": {"roles": "StringArray"}},
                            {"type": "REVIEWED", "start": "Person", "end": "Movie", "properties": {"rating": "Long"}},
                            {"type": "FOLLOWS", "start": "Person", "end": "Person"}]}


def test_naming_property_is_the_first_name_key_holding_strings() -> None:
    assert name_property({"title": "String", "released": "Long"}) == "title"
    assert name_property({"Name": "String", "title": "String"}) == "Name"  # name before title, any case
    assert name_property({"name": "Long", "username": "String"}) == "username"  # a number does not name
    assert name_property({"born": "Long"}) is None  # a compound-value node


def test_profile_round_trips_through_its_file(tmp_path: Path) -> None:
    profile = profile_from_dict(MOVIES)
    path = save_profile(profile, tmp_path / "profile.json")
    again = load_profile(path)
    assert again.to_dict() == profile.to_dict()
    assert [lp.label for lp in again.entity_labels()] == ["Movie", "Person"]
    assert again.labels["Movie"].numeric() == ["released"]
    assert ("FOLLOWS", "out", "Person") in again.steps_from("Person")
    assert ("FOLLOWS", "in", "Person") in again.steps_from("Person")
    assert ("ACTED_IN", "in", "Person") in again.steps_from("Movie")
    assert again.relationship_properties("REVIEWED") == {"rating": "Long"}
    assert again.keys()[:3] == ["ACTED_IN", "REVIEWED", "FOLLOWS"] and "released" in again.keys()


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.update(shape="graph"), "'shape'"),
    (lambda d: d.update(colour="red"), "'colour'"),
    (lambda d: d["labels"]["Movie"].update(name_property=3), "'labels.Movie.name_property'"),
    (lambda d: d["relationships"][0].update(end="Film"), "'relationships[0].end'"),
    (lambda d: d["relationships"][1].pop("type"), "'relationships[1].type'"),
])
def test_a_wrong_field_is_named(edit, field: str, tmp_path: Path) -> None:
    data = json.loads(json.dumps(MOVIES))
    edit(data)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=str(path)) as err:
        load_profile(path)
    assert field in str(err.value)


def test_a_json_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{\n  "shape": "property",\n  "labels": {,}\n}\n')
    with pytest.raises(InputError, match=rf"{path}:3: not JSON"):
        load_profile(path)


def test_sgr_shape_is_one_profile() -> None:
    shape = entity_shape()
    assert shape.is_entity_shape and not profile_from_dict(MOVIES).is_entity_shape
    assert shape.name_of("Entity") == "name" and shape.labels["CVT"].compound


def test_index_names_are_identifiers() -> None:
    assert name_index("Movie", "title") == "sgr_name_movie_title"
    assert name_index("Film Noir", "full-name") == "sgr_name_film_noir_full_name"
