"""The package file format round-trips: what export writes, import reads back identically."""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from knowledge.package_files import PackageFileError, clean_package_content, parse_package_text, render_package_file

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=300)
@given(
    title=_text,
    summary=_text,
    body=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=200),
    source=st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
    keywords=st.lists(_text, max_size=3),
    kind=st.sampled_from(["knowledge", "rule", "procedure"]),
)
@example(title="Preços", summary="0", body="0", source="planilha\x85v2", keywords=["a\u2028b"], kind="rule")
def test_a_rendered_file_parses_back_to_the_same_content(title, summary, body, source, keywords, kind):
    try:
        data = clean_package_content(
            {"title": title, "summary": summary, "body": body, "source": source, "keywords": keywords, "kind": kind}
        )
    except PackageFileError:
        return  # content the format refuses never reaches an export
    assert parse_package_text(render_package_file("PKG_X", data)).data == data
