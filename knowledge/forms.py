"""The curators' package form: list fields edited one per line, and the services'
validation run at clean time so refusals are field errors, not failures at save."""

import re

from django import forms
from django.core.exceptions import ValidationError

from knowledge.models import CONTENT_FIELDS, Package
from knowledge.services import package_content_clean

PREVIEW_BUTTON = "_preview"


class StringListField(forms.CharField):
    """A list of short strings edited one per line (and, where they cannot contain one, comma-separated)."""

    def __init__(self, *, split_commas: bool, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 3, "cols": 60}))
        super().__init__(**kwargs)
        self.separators = re.compile(r"[\r\n,]+" if split_commas else r"[\r\n]+")

    def prepare_value(self, value):
        if isinstance(value, (list, tuple)):
            return "\n".join(str(v) for v in value)
        return value

    def to_python(self, value):
        items: list[str] = []
        for part in self.separators.split(super().to_python(value) or ""):
            part = part.strip()
            if part and part not in items:
                items.append(part)
        return items


class PackageAdminForm(forms.ModelForm):
    aliases = StringListField(
        split_commas=True,
        help_text="Other names for this package, one per line. Stored in UPPER_SNAKE_CASE "
        "(accents, case and separators are ignored); each may name only this package.",
    )
    keywords = StringListField(
        split_commas=False, help_text="Words and phrases (pt/en/es) that should find this package, one per line."
    )
    semantic_ids = StringListField(split_commas=True, help_text="Dotted ids such as quote.pricing, one per line.")
    revision_note = forms.CharField(
        label="Revision note",
        max_length=500,
        required=False,
        widget=forms.TextInput(attrs={"size": 90}),
        help_text="What changed and why. Kept with the revision; required when the content changes.",
    )

    class Meta:
        model = Package
        fields = ["package_id", *CONTENT_FIELDS]
        widgets = {"body": forms.Textarea(attrs={"rows": 24, "cols": 100, "class": "vLargeTextField"})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.original_content = self.instance.content() if self.instance.pk else None

    def package_id_value(self) -> str | None:
        if "package_id" in self.fields:
            return self.cleaned_data.get("package_id")
        return self.instance.package_id

    def package_data(self) -> dict:
        return {name: self.cleaned_data.get(name) for name in CONTENT_FIELDS}

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned  # the service's checks need every field; show the field errors first
        try:
            # The service's own validation (aliases normalized, collisions refused), so a
            # refusal is a field error here instead of a failure at save time.
            content = package_content_clean(package_id=self.package_id_value(), data=self.package_data())
        except ValidationError as exc:
            self._add_service_errors(exc)
            return cleaned
        cleaned.update(content)
        if PREVIEW_BUTTON in self.data:
            # The admin redisplays an invalid form with the posted values, and its preview
            # renders this form's instance: the curator sees the new body before publishing it.
            self.add_error(None, "Preview only: nothing was saved. Save to publish these changes.")
            return cleaned
        changed = self.original_content is not None and content != self.original_content
        if changed and not (cleaned.get("revision_note") or "").strip():
            self.add_error("revision_note", "Say what changed and why; the note is kept with the revision.")
        return cleaned

    def _add_service_errors(self, exc: ValidationError) -> None:
        for field, msgs in exc.message_dict.items():
            if field in self.fields:
                self.add_error(field, msgs)
            else:
                self.add_error(None, [f"{field}: {msg}" for msg in msgs])


class RetrievalTestForm(forms.Form):
    """The admin retrieval test: a question and the optional UI context."""

    message = forms.CharField(max_length=4000, widget=forms.Textarea(attrs={"rows": 3, "cols": 80}))
    focus = forms.CharField(required=False, max_length=200, help_text="UI semantic ID in focus, e.g. quote.pricing")
    parents = forms.CharField(required=False, max_length=1000, help_text="Parent semantic IDs, comma-separated")
    page = forms.CharField(required=False, max_length=200, help_text="Page semantic ID")
    budget_tokens = forms.IntegerField(required=False, min_value=50, max_value=32000)
    max_full = forms.IntegerField(required=False, min_value=0, max_value=20)

    def clean_parents(self):
        raw = self.cleaned_data.get("parents") or ""
        return [p.strip() for p in raw.split(",") if p.strip()]
