"""Importing a registry file (YAML or JSON, all or nothing) from the admin and from a command.

The semantic registry and the capability registry share this flow: the caller names the
import service and the error it raises for a bad file; nothing here knows either app.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError
from django.shortcuts import redirect
from django.template.response import TemplateResponse

Importer = Callable[..., dict[str, int]]


def import_summary(counts: dict[str, int]) -> str:
    return f"{counts['created']} created, {counts['updated']} updated, {counts['unchanged']} unchanged."


class RegistryImportForm(forms.Form):
    file = forms.FileField()


def registry_import_view(
    model_admin,
    request,
    *,
    importer: Importer,
    file_error: type[Exception],
    help_text: str,
    title: str,
    template: str,
    changelist: str,
):
    """The admin page behind "Import from file": needs add and change permission on the model."""
    if not model_admin.has_add_permission(request) or not model_admin.has_change_permission(request):
        raise PermissionDenied
    form = RegistryImportForm(request.POST or None, request.FILES or None)
    form.fields["file"].help_text = help_text
    if request.method == "POST" and form.is_valid():
        try:
            counts = importer(acting_user=request.user, text=form.cleaned_data["file"].read().decode("utf-8"))
        except (file_error, UnicodeDecodeError) as exc:
            model_admin.message_user(request, f"Import failed: {exc}", level=messages.ERROR)
        else:
            model_admin.message_user(request, f"Imported: {import_summary(counts)}", level=messages.SUCCESS)
            return redirect(changelist)
    context = {**model_admin.admin_site.each_context(request), "form": form, "opts": model_admin.model._meta}
    return TemplateResponse(request, template, {**context, "title": title})


class RegistryImportCommand(BaseCommand):
    """``manage.py <command> FILE``: subclasses set ``importer`` (a service) and ``file_error``."""

    importer: Importer
    file_error: type[Exception]

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)

    def handle(self, *args, path: Path, **options):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
        try:
            counts = type(self).importer(acting_user=None, text=text)
        except self.file_error as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(import_summary(counts)))
