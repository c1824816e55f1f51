import pytest

from conversations.context import apply_merge_patch

# RFC 7396, appendix A.
RFC_CASES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "expected"), RFC_CASES)
def test_rfc_7396_examples(target, patch, expected):
    assert apply_merge_patch(target, patch) == expected


def test_neither_argument_is_modified():
    target = {"focus": {"semanticId": "a", "label": "A"}, "tabs": [{"id": "x"}]}
    patch = {"focus": {"label": None}, "activeTabId": "x"}
    result = apply_merge_patch(target, patch)
    result["tabs"][0]["id"] = "changed"
    assert target == {"focus": {"semanticId": "a", "label": "A"}, "tabs": [{"id": "x"}]}
    assert patch == {"focus": {"label": None}, "activeTabId": "x"}
