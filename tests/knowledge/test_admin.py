"""The curators' admin: pages render, edits go through the services, staff readers only read."""

import pytest
from django.urls import reverse

from knowledge.models import Package, PackageOrigin, PackageRevision
from knowledge.selectors import catalog_version_get
from knowledge.services import package_create, package_update

CHANGELIST = "admin:knowledge_package_changelist"


def _url(name: str, *args) -> str:
    return reverse(f"admin:knowledge_package_{name}", args=args)


def _pkg(package_id: str) -> Package:
    return Package.objects.get(package_id=package_id)


def _form_data(package: Package, **changes) -> dict:
    data = {
        "title": package.title,
        "summary": package.summary,
        "kind": package.kind,
        "aliases": "\n".join(package.aliases),
        "keywords": "\n".join(package.keywords),
        "semantic_ids": "\n".join(package.semantic_ids),
        "source": package.source,
        "body": package.body,
        "revision_note": "",
    }
    if package.strict:
        data["strict"] = "on"
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


@pytest.fixture
def curator_client(client, curator):
    client.force_login(curator)
    return client


@pytest.fixture
def reader_client(client, staff_reader):
    client.force_login(staff_reader)
    return client


# --- pages render --------------------------------------------------------------------


def test_changelist_renders_with_search_and_filters(curator_client, catalog):
    response = curator_client.get(reverse(CHANGELIST))
    assert response.status_code == 200
    assert response.content.count(b'class="field-package_id"') >= 15
    for filter_param in (b"kind__exact", b"origin__exact", b"is_active__exact", b"is_overridden__exact"):
        assert filter_param in response.content

    found = curator_client.get(reverse(CHANGELIST), {"q": "PRECOS"})  # by alias
    assert list(found.context["cl"].result_list) == [_pkg("PRICING_RULES")]
    rules = curator_client.get(reverse(CHANGELIST), {"kind__exact": "rule"})
    assert {p.kind for p in rules.context["cl"].result_list} == {"rule"}


def test_changelist_query_count_does_not_grow_with_packages(curator_client, catalog, django_assert_max_num_queries):
    with django_assert_max_num_queries(12):
        assert curator_client.get(reverse(CHANGELIST)).status_code == 200


def test_change_form_shows_the_sanitized_preview_and_flags_unknown_links(curator_client, catalog):
    package = _pkg("PRICING_RULES")
    package_update(
        acting_user=None,
        package=package,
        data={**package.content(), "body": package.body + "\n\nVer [[NOWHERE_PACKAGE]].\n\n<script>alert(1)</script>"},
        note="test",
    )
    response = curator_client.get(_url("change", package.pk))
    html = response.content.decode()
    assert response.status_code == 200
    assert 'class="package-preview"' in html
    assert "<table>" in html  # Markdown tables rendered
    assert 'wikilink wikilink-known">[[CLICKSIGN_PROCESS]]' in html
    assert 'wikilink wikilink-unknown">[[NOWHERE_PACKAGE]]' in html
    assert "<script>alert(1)</script>" not in html.split('class="package-preview"', 1)[1].split("</div>", 1)[0]
    assert "&lt;script&gt;" in html  # still visible, escaped, in the textarea
    assert _url("revisions", package.pk) in html  # object tool to the history
    assert 'name="revision_note"' in html


def test_add_form_renders_for_a_curator(curator_client, catalog):
    response = curator_client.get(_url("add"))
    assert response.status_code == 200
    assert b'name="package_id"' in response.content


# --- editing through the services ----------------------------------------------------------


def test_curator_edit_is_what_the_api_returns_on_the_very_next_request(curator_client, api_client, catalog):
    package = _pkg("PRICING_RULES")
    before = api_client.get("/api/v1/packages/PRICING_RULES").json()
    new_body = package.body + "\n\nNovo parágrafo da curadoria."

    response = curator_client.post(
        _url("change", package.pk), _form_data(package, body=new_body, revision_note="Curated paragraph")
    )

    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    after = api_client.get("/api/v1/packages/PRICING_RULES").json()
    assert after["body"] == new_body.strip()
    assert after["revision"] == before["revision"] + 1
    assert after["catalog_version"] > before["catalog_version"]
    listed = api_client.get("/api/v1/packages").json()
    assert listed["catalog_version"] == after["catalog_version"]
    revision = PackageRevision.objects.get(package=package, number=after["revision"])
    assert revision.note == "Curated paragraph"
    assert revision.author.username == "curadora"
    assert revision.action == PackageRevision.Action.EDITED
    assert _pkg("PRICING_RULES").is_overridden


def test_admin_save_with_windows_line_endings_and_no_change_writes_no_revision(curator_client, catalog):
    package = _pkg("COMPANY_INFO")
    version = catalog_version_get()
    response = curator_client.post(
        _url("change", package.pk), _form_data(package, body=package.body.replace("\n", "\r\n")), follow=True
    )
    assert response.status_code == 200
    assert "No content changed: no new revision was written." in _messages(response)
    assert _pkg("COMPANY_INFO").revision_number == package.revision_number
    assert catalog_version_get() == version
    assert not _pkg("COMPANY_INFO").is_overridden


def test_changing_content_requires_a_revision_note(curator_client, catalog):
    package = _pkg("COMPANY_INFO")
    response = curator_client.post(_url("change", package.pk), _form_data(package, title="Outro título"))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["revision_note"] == ["Say what changed and why; the note is kept with the revision."]
    assert _pkg("COMPANY_INFO").title == package.title


def test_alias_collision_is_a_field_error_not_a_500(curator_client, catalog):
    package = _pkg("COMPANY_INFO")
    response = curator_client.post(
        _url("change", package.pk), _form_data(package, aliases="preços", revision_note="steal an alias")
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["aliases"] == [
        "Alias 'PRECOS' already names package PRICING_RULES."
    ]
    assert _pkg("COMPANY_INFO").revision_number == package.revision_number


def test_aliases_are_normalized_on_save(curator_client, catalog):
    package = _pkg("COMPANY_INFO")
    response = curator_client.post(
        _url("change", package.pk),
        _form_data(package, aliases="Sobre a empresa, quem-somos\nQuem Somos", revision_note="aliases"),
    )
    assert response.status_code == 302
    assert _pkg("COMPANY_INFO").aliases == ["SOBRE_A_EMPRESA", "QUEM_SOMOS"]


def test_strict_knowledge_package_is_a_field_error(curator_client, catalog):
    package = _pkg("COMPANY_INFO")
    response = curator_client.post(_url("change", package.pk), _form_data(package, strict="on", revision_note="x"))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["strict"] == ["only rules can be strict"]


def test_curator_creates_a_package_in_the_admin(curator_client, api_client, catalog):
    response = curator_client.post(
        _url("add"),
        {
            "package_id": "LAB_HOLIDAYS",
            "title": "Feriados do laboratório",
            "summary": "Dias sem atendimento e sem recebimento de amostras",
            "kind": "knowledge",
            "aliases": "feriados",
            "keywords": "feriado\nrecesso",
            "semantic_ids": "",
            "source": "",
            "body": "O laboratório fecha nos feriados nacionais. Ver [[DELIVERY_TIMELINES]] e [[MISSING_ONE]].",
            "revision_note": "",
        },
        follow=True,
    )
    assert response.status_code == 200
    package = _pkg("LAB_HOLIDAYS")
    assert package.origin == PackageOrigin.ADMIN and package.is_active and package.revision_number == 1
    revision = package.revisions.get()
    assert (revision.action, revision.note, revision.author.username) == ("created", "Created in the admin", "curadora")
    assert any("[[MISSING_ONE]] (unknown)" in m for m in _messages(response))
    assert api_client.get("/api/v1/packages/FERIADOS").json()["id"] == "LAB_HOLIDAYS"


def test_creating_a_package_whose_id_is_an_alias_is_a_field_error(curator_client, catalog):
    response = curator_client.post(
        _url("add"),
        {"package_id": "PRECOS", "title": "T", "summary": "S", "kind": "knowledge", "body": "B"},
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["package_id"] == ["'PRECOS' is already an alias of PRICING_RULES."]
    assert not Package.objects.filter(package_id="PRECOS").exists()


def test_saving_a_body_linking_to_an_inactive_package_warns(curator_client, catalog):
    from knowledge.services import package_set_active

    package_set_active(acting_user=None, package=_pkg("GENOME_SIZES"), active=False)
    package = _pkg("COMPANY_INFO")
    response = curator_client.post(
        _url("change", package.pk),
        _form_data(package, body=package.body + "\n\nVer [[GENOME_SIZES]].", revision_note="link"),
        follow=True,
    )
    assert any("[[GENOME_SIZES]] (inactive)" in m for m in _messages(response))


# --- history, diff, revert ----------------------------------------------------------------


def _edit(package_id: str, **changes) -> Package:
    package = _pkg(package_id)
    return package_update(acting_user=None, package=package, data={**package.content(), **changes}, note="edit")


def test_history_lists_revisions_with_author_note_and_time(curator_client, curator, catalog):
    package = _pkg("PRICING_RULES")
    package_update(acting_user=curator, package=package, data={**package.content(), "title": "Preços"}, note="shorter")
    response = curator_client.get(_url("revisions", package.pk))
    html = response.content.decode()
    assert response.status_code == 200
    assert "r2" in html and "r1" in html
    assert "shorter" in html and "curadora" in html and "Bundled file loaded" in html
    assert html.count("Revert to this revision") == 1  # not offered for the current revision
    assert 'name="csrfmiddlewaretoken"' in html


def test_diff_between_any_two_revisions_escapes_content(curator_client, catalog):
    package = _edit(
        "PRICING_RULES", title="Preços <b>novos</b>", body="Linha nova <script>x()</script>\n\n[[CLICKSIGN_PROCESS]]"
    )
    _edit("PRICING_RULES", summary="Outro resumo")
    response = curator_client.get(_url("revision_compare", package.pk), {"a": 1, "b": 3})
    html = response.content.decode()
    assert response.status_code == 200
    assert '<tr class="field-changed">' in html
    assert "Preços &lt;b&gt;novos&lt;/b&gt;" in html
    assert '<span class="add">+Linha nova &lt;script&gt;x()&lt;/script&gt;</span>' in html
    assert '<span class="del">-# Regras de preço</span>' in html
    assert "<script>x()" not in html
    default = curator_client.get(_url("revision_compare", package.pk))
    assert (default.context["old"].number, default.context["new"].number) == (2, 3)
    assert b'id="revert-note"' not in response.content  # r3 is the current revision
    backwards = curator_client.get(_url("revision_compare", package.pk), {"a": 3, "b": 1})
    assert b'id="revert-note"' in backwards.content and b"Revert to r1" in backwards.content
    assert curator_client.get(_url("revision_compare", package.pk), {"a": 1, "b": 99}).status_code == 404
    assert curator_client.get(_url("revision_compare", package.pk), {"a": "x"}).status_code == 404


def test_revert_button_restores_content_as_a_new_revision(curator_client, api_client, catalog):
    original = _pkg("PRICING_RULES").content()
    package = _edit("PRICING_RULES", body="Conteúdo errado.")
    response = curator_client.post(_url("revision_revert", package.pk, 1), {"note": "Undo the mistake"}, follow=True)
    assert response.status_code == 200
    package.refresh_from_db()
    assert package.revision_number == 3
    assert package.content() == original
    assert not package.is_overridden  # back to the bundled file's content
    latest = package.revisions.first()
    assert (latest.action, latest.note, latest.author.username) == ("reverted", "Undo the mistake", "curadora")
    assert "Restored the content of revision 1 as revision 3." in _messages(response)
    assert api_client.get("/api/v1/packages/PRICING_RULES").json()["body"] == original["body"]


def test_revert_is_post_only_and_unknown_revision_is_404(curator_client, catalog):
    package = _pkg("PRICING_RULES")
    assert curator_client.get(_url("revision_revert", package.pk, 1)).status_code == 405
    assert curator_client.post(_url("revision_revert", package.pk, 42)).status_code == 404


def test_revert_needs_the_csrf_token(curator, catalog):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(curator)
    package = _edit("PRICING_RULES", body="Conteúdo errado.")
    assert client.post(_url("revision_revert", package.pk, 1)).status_code == 403
    assert _pkg("PRICING_RULES").revision_number == 2


def test_revert_refused_by_an_alias_collision_is_reported(curator_client, catalog):
    package = _pkg("COMPANY_INFO")
    _edit("COMPANY_INFO", aliases=["EMPRESA_X"])
    _edit("COMPANY_INFO", aliases=[])
    _edit("PRICING_RULES", aliases=["PRECOS", "EMPRESA_X"])
    response = curator_client.post(_url("revision_revert", package.pk, 2), follow=True)
    assert any(
        "Revision 2 cannot be restored: aliases: Alias 'EMPRESA_X' already names" in m for m in _messages(response)
    )
    assert _pkg("COMPANY_INFO").revision_number == 3


# --- actions -------------------------------------------------------------------------------


def _act(client, action: str, *package_ids: str):
    pks = [str(_pkg(pid).pk) for pid in package_ids]
    return client.post(reverse(CHANGELIST), {"action": action, "_selected_action": pks}, follow=True)


def test_deactivate_and_activate_actions_report_each_package(curator_client, api_client, catalog):
    response = _act(curator_client, "deactivate_packages", "GENOME_SIZES", "PRIMERS_SANGER")
    assert "Deactivated: GENOME_SIZES, PRIMERS_SANGER." in _messages(response)
    assert api_client.get("/api/v1/packages/GENOME_SIZES").status_code == 404
    assert _pkg("GENOME_SIZES").is_overridden  # an inactive override hides the bundled file

    response = _act(curator_client, "activate_packages", "GENOME_SIZES", "COMPANY_INFO")
    assert "Activated: GENOME_SIZES." in _messages(response)
    assert "Already so, unchanged: COMPANY_INFO." in _messages(response)
    assert api_client.get("/api/v1/packages/GENOME_SIZES").status_code == 200
    assert not _pkg("GENOME_SIZES").is_overridden


def test_reset_action_reports_admin_packages_instead_of_raising(curator_client, curator, catalog):
    package_create(acting_user=curator, package_id="LAB_HOLIDAYS", data=_content("Feriados"))
    _edit("PRICING_RULES", body="Override.")
    response = _act(curator_client, "reset_packages_to_bundled", "PRICING_RULES", "COMPANY_INFO", "LAB_HOLIDAYS")
    messages = _messages(response)
    assert "Reset to the bundled file: PRICING_RULES." in messages
    assert "Already so, unchanged: COMPANY_INFO." in messages
    assert "LAB_HOLIDAYS: created in the admin, it has no bundled file to reset to." in messages
    assert not _pkg("PRICING_RULES").is_overridden
    assert _pkg("PRICING_RULES").revisions.first().action == "reset"


def _content(title: str) -> dict:
    return {
        "title": title,
        "summary": "Resumo",
        "kind": "knowledge",
        "strict": False,
        "aliases": [],
        "keywords": [],
        "semantic_ids": [],
        "source": "",
        "body": "Corpo.",
    }


# --- permissions ---------------------------------------------------------------------------


def test_staff_reader_sees_everything_read_only(reader_client, catalog):
    package = _edit("PRICING_RULES", body="Override.")
    listing = reader_client.get(reverse(CHANGELIST))
    assert listing.status_code == 200
    assert b'name="action"' not in listing.content  # no actions for readers
    change = reader_client.get(_url("change", package.pk))
    assert change.status_code == 200
    html = change.content.decode()
    assert 'name="body"' not in html and 'name="revision_note"' not in html
    assert 'class="package-preview"' in html
    history = reader_client.get(_url("revisions", package.pk))
    assert history.status_code == 200
    assert b"Revert to this revision" not in history.content
    compare = reader_client.get(_url("revision_compare", package.pk), {"a": 2, "b": 1})
    assert compare.status_code == 200 and b"Revert to r1" not in compare.content
    assert reader_client.get(_url("add")).status_code == 403


def test_staff_reader_gets_403_on_edits_reverts_and_actions(reader_client, catalog):
    package = _edit("PRICING_RULES", body="Override.")
    assert (
        reader_client.post(_url("change", package.pk), _form_data(package, title="X", revision_note="x")).status_code
        == 403
    )
    assert reader_client.post(_url("revision_revert", package.pk, 1)).status_code == 403
    assert reader_client.post(_url("add"), {"package_id": "NEW_ONE"}).status_code == 403
    _act(reader_client, "deactivate_packages", "PRICING_RULES")
    package.refresh_from_db()
    assert package.title == "Regras de preço" and package.is_active and package.revision_number == 2


def test_nobody_deletes_packages_from_the_admin(curator_client, catalog):
    package = _pkg("PRICING_RULES")
    assert curator_client.get(_url("delete", package.pk)).status_code == 403
    assert curator_client.post(_url("delete", package.pk), {"post": "yes"}).status_code == 403
    assert b"delete_selected" not in curator_client.get(reverse(CHANGELIST)).content
    assert Package.objects.filter(pk=package.pk).exists()


def test_revision_admin_is_read_only(curator_client, catalog):
    revision = PackageRevision.objects.select_related("package").first()
    assert curator_client.get(reverse("admin:knowledge_packagerevision_changelist")).status_code == 200
    page = curator_client.get(reverse("admin:knowledge_packagerevision_change", args=[revision.pk]))
    assert page.status_code == 200 and b'name="note"' not in page.content
    assert curator_client.get(reverse("admin:knowledge_packagerevision_add")).status_code == 403
    assert (
        curator_client.post(
            reverse("admin:knowledge_packagerevision_change", args=[revision.pk]), {"note": "x"}
        ).status_code
        == 403
    )
    assert str(revision) == f"{revision.package.package_id} r{revision.number}"


def test_non_staff_user_cannot_reach_the_admin(client, user, catalog):
    client.force_login(user)
    response = client.get(reverse(CHANGELIST))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_save_refused_by_a_concurrent_change_is_reported_not_a_500(curator_client, catalog, monkeypatch):
    # Simulate the race: the form's check passes, then another curator takes the alias first.
    monkeypatch.setattr("knowledge.forms.package_content_clean", lambda *, package_id, data: data)
    package = _pkg("COMPANY_INFO")
    response = curator_client.post(
        _url("change", package.pk), _form_data(package, aliases="PRECOS", revision_note="race"), follow=True
    )
    assert response.status_code == 200
    assert "Not saved: aliases: Alias 'PRECOS' already names package PRICING_RULES." in _messages(response)
    assert _pkg("COMPANY_INFO").revision_number == 1


def test_the_curators_group_holds_the_knowledge_permissions_after_migrate(db):
    from django.contrib.auth.models import Group

    group = Group.objects.get(name="curators")
    codenames = set(group.permissions.values_list("codename", flat=True))
    assert {"add_package", "change_package", "view_package", "curate_package", "view_packagerevision"} <= codenames


def test_only_curators_and_superusers_curate(curator, staff_reader, user, django_user_model):
    from knowledge.permissions import is_curator

    superuser = django_user_model.objects.create_superuser(username="root", password="x")
    assert is_curator(curator) and is_curator(superuser)
    assert not is_curator(staff_reader) and not is_curator(user)
    curator.is_active = False
    assert not is_curator(curator)


def test_adding_an_existing_id_is_a_field_error(curator_client, catalog):
    response = curator_client.post(
        _url("add"),
        {"package_id": "PRICING_RULES", "title": "T", "summary": "S", "kind": "knowledge", "body": "B"},
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["package_id"] == ["Package with this ID already exists."]
    assert _pkg("PRICING_RULES").revision_number == 1


# --- preview before saving -----------------------------------------------------------------


def test_preview_renders_the_posted_body_and_saves_nothing(curator_client, api_client, catalog):
    package = _pkg("PRICING_RULES")
    version = catalog_version_get()
    new_body = package.body + "\n\n**Rascunho** da curadoria, ver [[NOWHERE_PACKAGE]].\n\n<script>alert(1)</script>"

    response = curator_client.post(_url("change", package.pk), _form_data(package, body=new_body, _preview="1"))

    assert response.status_code == 200
    html = response.content.decode()
    preview = html.split('class="package-preview"', 1)[1].split("</div>", 1)[0]
    assert "<strong>Rascunho</strong> da curadoria" in preview
    assert 'wikilink wikilink-unknown">[[NOWHERE_PACKAGE]]' in preview
    assert "<script>" not in preview
    assert "Preview only: nothing was saved." in html
    assert "Rascunho** da curadoria" in html  # the textarea keeps the posted text
    assert _pkg("PRICING_RULES").revision_number == package.revision_number
    assert catalog_version_get() == version
    assert "Rascunho" not in api_client.get("/api/v1/packages/PRICING_RULES").json()["body"]


def test_preview_is_offered_to_curators_on_add_and_change_but_not_to_readers(client, curator, staff_reader, catalog):
    package = _pkg("PRICING_RULES")
    client.force_login(curator)
    assert b'name="_preview"' in client.get(_url("change", package.pk)).content
    add = client.get(_url("add")).content
    assert b'name="_preview"' in add and b"Preview" in add
    client.force_login(staff_reader)
    assert b'name="_preview"' not in client.get(_url("change", package.pk)).content
    response = client.post(_url("change", package.pk), _form_data(package, body="Outro", _preview="1"))
    assert response.status_code == 403


def test_preview_on_the_add_form_creates_nothing(curator_client, catalog):
    data = {
        "package_id": "LAB_HOLIDAYS",
        "title": "Feriados",
        "summary": "Dias sem atendimento",
        "kind": "knowledge",
        "body": "O laboratório fecha em *feriados*.",
        "_preview": "1",
    }
    response = curator_client.post(_url("add"), data)
    assert response.status_code == 200
    assert "<em>feriados</em>" in response.content.decode()
    assert not Package.objects.filter(package_id="LAB_HOLIDAYS").exists()
