"""The shared "Import from file" flow of the semantic and capability registries (admin and command)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from actions.models import Capability
from conversations.context.models import SemanticElement

SEMANTIC = b"elements:\n  - {id: quote.pricing, type: field, label: Pre\xc3\xa7o}\n"

PAGES = [
    ("admin:conversations_semanticelement_import", "admin:conversations_semanticelement_changelist", SemanticElement),
    ("admin:actions_capability_import", "admin:actions_capability_changelist", Capability),
]


@pytest.mark.parametrize(("page", "changelist", "model"), PAGES)
def test_a_bad_file_is_reported_and_nothing_is_written(admin_client, page, changelist, model):
    client = admin_client
    before = model.objects.count()
    response = client.post(reverse(page), {"file": SimpleUploadedFile("x.yaml", b"\xff\xfe not utf-8")}, follow=True)
    assert response.status_code == 200
    assert "Import failed" in response.content.decode()
    assert model.objects.count() == before


@pytest.mark.parametrize(("page", "changelist", "model"), PAGES)
def test_staff_without_add_and_change_permission_gets_403(client, staff_reader, page, changelist, model):
    client.force_login(staff_reader)
    assert client.get(reverse(page)).status_code == 403


def test_the_semantic_registry_imports_from_the_admin_and_redirects_to_its_list(admin_client):
    client = admin_client
    response = client.post(reverse(PAGES[0][0]), {"file": SimpleUploadedFile("ids.yaml", SEMANTIC)})
    assert response.status_code == 302 and response.url == reverse(PAGES[0][1])
    assert SemanticElement.objects.get(semantic_id="quote.pricing").label == "Preço"


def test_the_commands_report_counts_and_refuse_a_missing_file(db, tmp_path, capsys):
    path = tmp_path / "ids.yaml"
    path.write_bytes(SEMANTIC)
    call_command("import_semantic_ids", str(path))
    assert "1 created, 0 updated, 0 unchanged." in capsys.readouterr().out
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_capabilities", str(tmp_path / "missing.yaml"))
